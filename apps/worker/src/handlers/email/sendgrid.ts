// SendGrid v3 Mail Send (docs/reference/providers.md#e-mail, docs/reference/providers.md#retry-matrix): 202 with an empty body, the id in X-Message-Id. SendGrid has no
// idempotency key, so the job id travels in custom_args to let duplicates be traced in its event data.
import { PermanentJobError } from "@conveyor/contracts";
import type { AxiosResponse } from "axios";
import { bodyExcerpt, providerRequest, rateLimited, retryAfterMs, statusFailure } from "../http";
import { parseMailbox } from "./address";
import { USER_AGENT, type EmailProvider } from "./types";

export const sendgrid: EmailProvider = {
  name: "SendGrid",
  defaultBaseUrl: "https://api.sendgrid.com",
  async send(message, options) {
    const response = await providerRequest({
      provider: "SendGrid",
      method: "POST",
      url: `${options.baseUrl}/v3/mail/send`,
      headers: { Authorization: `Bearer ${options.apiKey}`, "Content-Type": "application/json", Accept: "application/json", "User-Agent": USER_AGENT },
      data: {
        personalizations: [{ to: [{ email: message.to }] }],
        from: parseMailbox(message.from),
        subject: message.subject,
        content: [{ type: "text/plain", value: message.text }],
        custom_args: { conveyor_job_id: message.jobId },
        ...(message.attachments?.length
          ? {
              attachments: message.attachments.map((a) => ({
                content: a.data.toString("base64"),
                filename: a.filename,
                type: a.contentType,
                disposition: "attachment",
              })),
            }
          : {}),
      },
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
    // 200 is what sandbox mode is reported to answer; a real send answers 202.
    if (response.status === 202 || response.status === 200) {
      const id: unknown = response.headers["x-message-id"];
      return { messageId: typeof id === "string" && id ? id : null };
    }
    throw sendgridFailure(response);
  },
};

function sendgridFailure(response: AxiosResponse): Error {
  const detail = errorDetail(response.data);
  if (response.status === 429) {
    const message = `SendGrid answered 429 (rate limited)${detail ? `: ${detail}` : ""}`;
    return rateLimited(message, resetDelay(response.headers["x-ratelimit-reset"]) ?? retryAfterMs(response.headers as Record<string, unknown>));
  }
  if (response.status === 401) return new PermanentJobError(`SendGrid answered 401: ${detail || "unauthorized"} (check EMAIL_PROVIDER_API_KEY)`);
  if (response.status === 403) {
    return new PermanentJobError(`SendGrid answered 403: ${detail || "forbidden"} (check the sender identity and the key's Mail Send permission)`);
  }
  return statusFailure("SendGrid", response, detail);
}

/** SendGrid's errors: `{"errors":[{"message","field","help"}]}` → "field: message; …". */
function errorDetail(data: unknown): string {
  const errors = (data as { errors?: { message?: string; field?: string | null }[] } | undefined)?.errors;
  if (!Array.isArray(errors)) return bodyExcerpt(data, 200);
  return bodyExcerpt(errors.map((e) => (e.field ? `${e.field}: ${e.message}` : String(e.message))).join("; "), 300);
}

/** X-RateLimit-Reset is the epoch second the window reopens. */
function resetDelay(header: unknown, now = Date.now()): number | undefined {
  const seconds = Number(header);
  if (!Number.isFinite(seconds) || seconds <= 0) return undefined;
  return Math.max(0, seconds * 1000 - now);
}
