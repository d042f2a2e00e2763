// Postmark (docs/reference/providers.md#e-mail, docs/reference/providers.md#retry-matrix): X-Postmark-Server-Token, 200 with MessageID and ErrorCode 0; refusals are
// 401/422 with `{ErrorCode, Message}`. Postmark has no idempotency key: the job id goes in Metadata instead.
import { PermanentJobError } from "@conveyor/contracts";
import type { AxiosResponse } from "axios";
import { bodyExcerpt, providerRequest, statusFailure } from "../http";
import { USER_AGENT, type EmailProvider } from "./types";

type PostmarkAnswer = { ErrorCode?: number; Message?: string; MessageID?: string };

const INACTIVE_RECIPIENT = 406;

export const postmark: EmailProvider = {
  name: "Postmark",
  defaultBaseUrl: "https://api.postmarkapp.com",
  async send(message, options) {
    const response = await providerRequest({
      provider: "Postmark",
      method: "POST",
      url: `${options.baseUrl}/email`,
      headers: { "X-Postmark-Server-Token": options.apiKey, "Content-Type": "application/json", Accept: "application/json", "User-Agent": USER_AGENT },
      data: {
        From: message.from,
        To: message.to,
        Subject: message.subject,
        TextBody: message.text,
        Metadata: { conveyor_job_id: message.jobId },
        ...(message.attachments?.length
          ? { Attachments: message.attachments.map((a) => ({ Name: a.filename, Content: a.data.toString("base64"), ContentType: a.contentType })) }
          : {}),
      },
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
    const answer = (typeof response.data === "object" && response.data !== null ? response.data : {}) as PostmarkAnswer;
    if (response.status === 200 && (answer.ErrorCode ?? 0) === 0) {
      return { messageId: typeof answer.MessageID === "string" && answer.MessageID ? answer.MessageID : null };
    }
    throw postmarkFailure(response, answer);
  },
};

function postmarkFailure(response: AxiosResponse, answer: PostmarkAnswer): Error {
  const code = answer.ErrorCode;
  const detail = code === undefined ? bodyExcerpt(response.data, 300) : `ErrorCode ${code}: ${bodyExcerpt(answer.Message ?? "", 300)}`;
  if (code === INACTIVE_RECIPIENT) {
    return new PermanentJobError(`Postmark answered ${response.status} ${detail} (the recipient bounced, complained or was suppressed)`);
  }
  if (response.status === 401) return new PermanentJobError(`Postmark answered 401 ${detail} (check EMAIL_PROVIDER_API_KEY: a server token)`);
  // 200 with a non-zero ErrorCode is a refusal too; statusFailure would call any non-429/5xx permanent anyway.
  return statusFailure("Postmark", response, detail);
}
