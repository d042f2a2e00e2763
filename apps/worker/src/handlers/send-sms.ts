// send_sms: one SMS to one E.164 number through Africa's Talking. A 201 can still carry a failed recipient, so
// the outcome is decided by that recipient's statusCode; failures are logged with AT's status name.
import { PermanentJobError, RetryableJobError, type JobHandler, type SendSmsPayload } from "@conveyor/contracts";
import { defaultBaseUrl, PROVIDER, sendSms, type AtRecipient } from "./sms/africastalking";
import { INSUFFICIENT_BALANCE_RETRY_MS, recipientStatus, statusNamed } from "./sms/status-codes";
import { requireSetting } from "./settings";
import type { HandlerDeps } from "./types";

export function sendSmsHandler({ settings }: HandlerDeps): JobHandler<SendSmsPayload> {
  return async (payload, ctx) => {
    const username = requireSetting(settings.SMS_PROVIDER_USERNAME, "SMS_PROVIDER_USERNAME");
    const apiKey = requireSetting(settings.SMS_PROVIDER_API_KEY, "SMS_PROVIDER_API_KEY");
    const baseUrl = (settings.SMS_PROVIDER_BASE_URL ?? defaultBaseUrl(username)).replace(/\/+$/, "");
    const sandbox = username.toLowerCase() === "sandbox" ? " (sandbox)" : "";

    ctx.log(
      "info",
      `Sending SMS via ${PROVIDER}${sandbox} to ${maskPhone(payload.to)}${payload.from ? ` from ${payload.from}` : ""} (${payload.message.length} characters)`,
    );
    const answer = await sendSms({
      username,
      apiKey,
      baseUrl,
      to: payload.to,
      message: payload.message,
      from: payload.from,
      timeoutMs: settings.PROVIDER_TIMEOUT_MS,
      signal: ctx.signal,
    });

    const recipient = answer.recipients.find((r) => r.number === payload.to) ?? answer.recipients[0];
    if (!recipient) {
      const named = statusNamed(answer.summary);
      const reason = `${PROVIDER} sent nothing: ${answer.summary}${named?.hint ? ` (${named.hint})` : ""}`;
      if (named?.outcome === "retry") throw new RetryableJobError(reason, named.code === 405 ? INSUFFICIENT_BALANCE_RETRY_MS : undefined);
      throw new PermanentJobError(reason);
    }

    const status = recipientStatus(Number(recipient.statusCode));
    if (status.outcome !== "sent") {
      // The runtime logs the thrown reason; this line keeps AT's own fields for the record.
      ctx.log(
        "warn",
        `Recipient ${maskPhone(recipient.number)}: statusCode ${recipient.statusCode} (${status.name}), status "${recipient.status}", cost ${recipient.cost}`,
      );
      const reason = `${PROVIDER} refused ${maskPhone(recipient.number)}: ${recipient.statusCode} ${status.name}${status.hint ? ` (${status.hint})` : ""}`;
      if (status.outcome === "retry") throw new RetryableJobError(reason, Number(recipient.statusCode) === 405 ? INSUFFICIENT_BALANCE_RETRY_MS : undefined);
      throw new PermanentJobError(reason);
    }

    ctx.log(
      "info",
      `${PROVIDER} accepted message ${recipient.messageId} for ${maskPhone(recipient.number)}: ${recipient.statusCode} ${status.name}, cost ${recipient.cost}`,
    );
    return result(recipient, answer.summary);
  };
}

function result(recipient: AtRecipient, summary: string) {
  return {
    message_id: recipient.messageId,
    status: recipient.status,
    status_code: Number(recipient.statusCode),
    cost: recipient.cost,
    number: recipient.number,
    ...(recipient.messageParts !== undefined ? { message_parts: recipient.messageParts } : {}),
    summary,
  };
}

/** "+254712345678" → "+2547*****678": enough to tell recipients apart in job logs. */
function maskPhone(number: string): string {
  if (number.length < 8) return "***";
  return `${number.slice(0, 5)}${"*".repeat(number.length - 8)}${number.slice(-3)}`;
}
