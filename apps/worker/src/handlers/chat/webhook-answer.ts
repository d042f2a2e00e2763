// Reading an incoming webhook's answer (docs/reference/providers.md#chat-webhooks): Slack and Mattermost answer 200 `ok`; Slack's errors
// are plain-text codes, Mattermost's are JSON AppErrors. A hint says what the operator can do about the common ones.

/** Success is exactly a 200 whose body is `ok`: anything else means the message was not posted. */
export function isDelivered(status: number, body: unknown): boolean {
  return status === 200 && typeof body === "string" && body.trim() === "ok";
}

/** "channel_not_found", or Mattermost's "web.incoming_webhook.text.app_error: No text specified". */
export function errorDetail(body: unknown): string {
  const text = typeof body === "string" ? body.trim() : "";
  if (text.startsWith("{")) {
    try {
      const json = JSON.parse(text) as { id?: unknown; message?: unknown };
      if (typeof json.message === "string") return typeof json.id === "string" ? `${json.id}: ${json.message}` : json.message;
    } catch {
      // Not JSON after all: fall through to the raw text.
    }
  }
  return text;
}

const HINTS: [RegExp, string][] = [
  [/^(no_service|no_team|invalid_token)$|incoming_webhook\.invalid|disabled/, "the webhook was revoked or disabled; update CHAT_WEBHOOK_URL"],
  [/^channel_not_found$|incoming_webhook\.channel/, "the channel does not exist or the webhook cannot post to it"],
  [/^channel_is_archived$/, "the channel is archived"],
  [/^action_prohibited$|^posting_to_general_channel_denied$/, "the workspace does not allow this webhook to post there"],
  [/^(invalid_payload|no_text|missing_text_or_fallback_or_attachments)$|incoming_webhook\.(parse|text)/, "the provider could not read the message"],
];

export function hintFor(detail: string): string | undefined {
  return HINTS.find(([pattern]) => pattern.test(detail))?.[1];
}
