// send_email: one plain-text e-mail through the provider EMAIL_PROVIDER names (SendGrid by default).
import type { JobHandler, SendEmailPayload } from "@conveyor/contracts";
import { maskEmail, parseMailbox } from "./email/address";
import { emailProviders } from "./email";
import { requireSetting } from "./settings";
import type { HandlerDeps } from "./types";

export function sendEmailHandler({ settings }: HandlerDeps): JobHandler<SendEmailPayload> {
  return async (payload, ctx) => {
    const provider = emailProviders[settings.EMAIL_PROVIDER];
    const apiKey = requireSetting(settings.EMAIL_PROVIDER_API_KEY, "EMAIL_PROVIDER_API_KEY");
    const from = requireSetting(payload.from ?? settings.EMAIL_FROM, "EMAIL_FROM");
    const baseUrl = (settings.EMAIL_PROVIDER_BASE_URL ?? provider.defaultBaseUrl).replace(/\/+$/, "");

    ctx.log("info", `Sending via ${provider.name} to ${maskEmail(payload.to)} from ${parseMailbox(from).email}`);
    const { messageId } = await provider.send(
      { to: payload.to, from, subject: payload.subject, text: payload.body, jobId: ctx.jobId },
      { apiKey, baseUrl, timeoutMs: settings.PROVIDER_TIMEOUT_MS, signal: ctx.signal },
    );
    if (messageId) ctx.log("info", `${provider.name} accepted message ${messageId}`);
    else ctx.log("warn", `${provider.name} accepted the message without returning a message id`);
    return { provider: settings.EMAIL_PROVIDER, message_id: messageId, to: payload.to };
  };
}
