// Resend (docs/reference/providers.md#e-mail, docs/reference/providers.md#retry-matrix): 200 `{id}`; errors `{statusCode, name, message}` and we branch on `name`.
// The job id is the Idempotency-Key, so an attempt repeated after a crash returns the first send's id.
import { PermanentJobError, RetryableJobError } from "@conveyor/contracts";
import type { AxiosResponse } from "axios";
import { bodyExcerpt, providerRequest, retryAfterMs } from "../http";
import { USER_AGENT, type EmailProvider } from "./types";

type ResendError = { statusCode?: number; name?: string; message?: string };

/** A daily quota resets within a day; without a Retry-After, try again in an hour rather than at backoff speed. */
const DAILY_QUOTA_RETRY_MS = 60 * 60 * 1000;

export const resend: EmailProvider = {
  name: "Resend",
  defaultBaseUrl: "https://api.resend.com",
  async send(message, options) {
    const response = await providerRequest({
      provider: "Resend",
      method: "POST",
      url: `${options.baseUrl}/emails`,
      headers: {
        Authorization: `Bearer ${options.apiKey}`,
        "Content-Type": "application/json",
        Accept: "application/json",
        "User-Agent": USER_AGENT,
        "Idempotency-Key": message.jobId,
      },
      data: {
        from: message.from,
        to: [message.to],
        subject: message.subject,
        text: message.text,
        ...(message.attachments?.length
          ? { attachments: message.attachments.map((a) => ({ filename: a.filename, content: a.data.toString("base64"), content_type: a.contentType })) }
          : {}),
      },
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
    if (response.status === 200 || response.status === 201) {
      const id = (response.data as { id?: unknown } | undefined)?.id;
      return { messageId: typeof id === "string" && id ? id : null };
    }
    throw resendFailure(response);
  },
};

function resendFailure(response: AxiosResponse): Error {
  const body = (typeof response.data === "object" && response.data !== null ? response.data : {}) as ResendError;
  const name = body.name ?? "";
  const text = `Resend answered ${response.status}${name ? ` ${name}` : ""}: ${bodyExcerpt(body.message ?? response.data, 300)}`;
  const wait = retryAfterMs(response.headers as Record<string, unknown>);
  if (response.status === 409) {
    // Another attempt with the same key is still in flight: ask again shortly. A different payload under the
    // same key cannot succeed.
    return name === "concurrent_idempotent_requests" ? new RetryableJobError(text, wait) : new PermanentJobError(text);
  }
  if (response.status === 429) {
    if (name === "monthly_quota_exceeded") return new PermanentJobError(`${text} (the monthly quota resets too late for a retry)`);
    if (name === "daily_quota_exceeded") return new RetryableJobError(text, wait ?? DAILY_QUOTA_RETRY_MS);
    return new RetryableJobError(text, wait);
  }
  if (response.status >= 500) return new RetryableJobError(text, wait);
  if (response.status === 401 || (response.status === 403 && name.includes("api_key"))) {
    return new PermanentJobError(`${text} (check EMAIL_PROVIDER_API_KEY)`);
  }
  return new PermanentJobError(text);
}
