// What the send_email handler asks of one e-mail provider module.

export type EmailMessage = {
  to: string;
  /** "a@b" or "Name <a@b>". */
  from: string;
  subject: string;
  /** Plain-text body. */
  text: string;
  /** The job id: the idempotency key where the provider has one, a correlation tag where it does not. */
  jobId: string;
  /** Files to attach (docs/reference/lifecycle.md#dependencies: artifacts of the jobs this one depends on). */
  attachments?: EmailAttachment[];
};

export type EmailAttachment = { filename: string; contentType: string; data: Buffer };

export type EmailRequestOptions = {
  apiKey: string;
  /** Provider host without a trailing slash, e.g. https://api.sendgrid.com. */
  baseUrl: string;
  timeoutMs: number;
  signal: AbortSignal;
};

export type EmailProvider = {
  /** Display name for logs and errors, e.g. "SendGrid". */
  name: string;
  defaultBaseUrl: string;
  /** Resolves with the provider's message id (null when the provider accepted without one); throws a job error. */
  send(message: EmailMessage, options: EmailRequestOptions): Promise<{ messageId: string | null }>;
};

/** Sent on every e-mail request: Resend is reported to refuse requests without a User-Agent (docs/reference/providers.md#e-mail). */
export const USER_AGENT = "Conveyor-Worker/0.1 (+https://github.com/conveyor)";
