// Africa's Talking SMS (docs/reference/providers.md#sms): form-encoded POST /version1/messaging with the `apiKey` header; only a
// 201 is an answer to read (the official SDK rejects every other status). 401 answers are plain text, so the
// body is read as text and parsed as JSON only when it says it is JSON.
import { PermanentJobError } from "@conveyor/contracts";
import type { AxiosResponse } from "axios";
import { bodyExcerpt, providerRequest, statusFailure } from "../http";

export const PROVIDER = "Africa's Talking";
export const PRODUCTION_URL = "https://api.africastalking.com";
export const SANDBOX_URL = "https://api.sandbox.africastalking.com";

export type AtRecipient = { statusCode: number; number: string; status: string; cost: string; messageId: string; messageParts?: number };
export type AtAnswer = { summary: string; recipients: AtRecipient[] };

export type AtSend = {
  username: string;
  apiKey: string;
  baseUrl: string;
  to: string;
  message: string;
  from?: string;
  timeoutMs: number;
  signal: AbortSignal;
};

/** Mirrors the official SDK: the username "sandbox" (any case) selects the sandbox host. */
export function defaultBaseUrl(username: string): string {
  return username.toLowerCase() === "sandbox" ? SANDBOX_URL : PRODUCTION_URL;
}

export async function sendSms(send: AtSend): Promise<AtAnswer> {
  const form = new URLSearchParams({ username: send.username, to: send.to, message: send.message });
  if (send.from) form.set("from", send.from);
  form.set("bulkSMSMode", "1");
  const response = await providerRequest<string>({
    provider: PROVIDER,
    method: "POST",
    url: `${send.baseUrl}/version1/messaging`,
    headers: { apiKey: send.apiKey, Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded" },
    data: form.toString(),
    responseType: "text",
    timeoutMs: send.timeoutMs,
    signal: send.signal,
  });
  const json = jsonOf(response);
  const data = (json as { SMSMessageData?: { Message?: unknown; Recipients?: unknown } } | undefined)?.SMSMessageData;
  const answer = data
    ? { summary: typeof data.Message === "string" ? data.Message : "", recipients: Array.isArray(data.Recipients) ? (data.Recipients as AtRecipient[]) : [] }
    : undefined;
  // An answer without recipients names its reason in Message (e.g. InvalidSenderId); read it whatever the status.
  if (answer && answer.recipients.length === 0 && answer.summary) return answer;
  if (response.status !== 201) throw failure(response);
  if (!answer) {
    // The message may well have gone out: never retry blindly into a second SMS.
    throw new PermanentJobError(
      `${PROVIDER} answered 201 with a body that is not its JSON answer (${bodyExcerpt(response.data, 120)}); the SMS may have been sent, so it is not retried`,
    );
  }
  return answer;
}

function jsonOf(response: AxiosResponse<string>): unknown {
  const type = String(response.headers["content-type"] ?? "");
  if (!/\bjson\b/i.test(type) || typeof response.data !== "string") return undefined;
  try {
    return JSON.parse(response.data);
  } catch {
    return undefined;
  }
}

function failure(response: AxiosResponse<string>): Error {
  const detail = bodyExcerpt(response.data, 200);
  if (response.status === 401) {
    return new PermanentJobError(
      `${PROVIDER} answered 401: ${detail || "unauthorized"} (check SMS_PROVIDER_USERNAME and SMS_PROVIDER_API_KEY; a sandbox key works only with the username "sandbox")`,
    );
  }
  return statusFailure(PROVIDER, response, detail);
}
