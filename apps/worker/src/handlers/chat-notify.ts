// chat_notify: posts `{channel, text}` to the Slack-format incoming webhook in CHAT_WEBHOOK_URL (Slack, Mattermost).
// The URL's path is the credential, so only its host ever reaches logs and errors.
import { PermanentJobError, type ChatNotifyPayload, type JobHandler } from "@conveyor/contracts";
import { errorDetail, hintFor, isDelivered } from "./chat/webhook-answer";
import { bodyExcerpt, providerRequest, statusFailure } from "./http";
import { requireSetting } from "./settings";
import type { HandlerDeps } from "./types";

export function chatNotifyHandler({ settings }: HandlerDeps): JobHandler<ChatNotifyPayload> {
  return async (payload, ctx) => {
    const url = requireSetting(settings.CHAT_WEBHOOK_URL, "CHAT_WEBHOOK_URL");
    const provider = `The chat webhook at ${new URL(url).host}`;

    ctx.log("info", `Posting to channel ${payload.channel} through the chat webhook at ${new URL(url).host} (${payload.text.length} characters)`);
    const response = await providerRequest<string>({
      provider,
      method: "POST",
      url,
      headers: { "Content-Type": "application/json" },
      data: { channel: payload.channel, text: payload.text },
      // Both answers are text (`ok`, `channel_not_found`) unless Mattermost sends a JSON error; read them raw.
      responseType: "text",
      timeoutMs: settings.PROVIDER_TIMEOUT_MS,
      signal: ctx.signal,
    });

    if (isDelivered(response.status, response.data)) {
      ctx.log("info", `Delivered to channel ${payload.channel}`);
      return { delivered: true, channel: payload.channel };
    }
    const detail = errorDetail(response.data);
    const hint = hintFor(detail);
    if (response.status === 200) {
      throw new PermanentJobError(
        `${provider} answered 200 without "ok" (${bodyExcerpt(response.data, 120) || "empty body"}); is CHAT_WEBHOOK_URL an incoming-webhook URL?`,
      );
    }
    if (response.status >= 300 && response.status < 400) {
      throw new PermanentJobError(`${provider} answered ${response.status} (a redirect, which is not followed); check CHAT_WEBHOOK_URL`);
    }
    throw statusFailure(provider, response, `${bodyExcerpt(detail, 200)}${hint ? ` (${hint})` : ""}`);
  };
}
