// Slack incoming webhook (docs/reference/providers.md#chat-webhooks): the URL is the credential; POST JSON (or form `payload=<json>`);
// success is 200 text/plain `ok`, every error is a plain-text code with its status (400 invalid_payload/no_text,
// 404 channel_not_found/no_service, 410 channel_is_archived, 403 action_prohibited, 429 + Retry-After, 500 rollup_error).
import { randomBytes } from "node:crypto";
import { mediaType, parseJson, startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from "./fake-server";

export type SlackMessage = { channel?: string; text?: string; body: any };
export type SlackFake = FakeServer & {
  /** The full webhook URL to configure (CHAT_WEBHOOK_URL). */
  webhookUrl: string;
  posted: SlackMessage[];
  /** Channels that exist (when non-empty, a `channel` override to any other is channel_not_found). */
  channels: Set<string>;
  archivedChannels: Set<string>;
};

export const slackError = (status: number, code: string, headers?: Record<string, string>): FakeReply => ({
  status,
  body: code,
  headers: { "Content-Type": "text/plain; charset=utf-8", ...headers },
});

export async function startSlackFake(options: { channels?: string[]; archivedChannels?: string[] } = {}): Promise<SlackFake> {
  const hookPath = `/services/T${randomBytes(4).toString("hex").toUpperCase()}/B${randomBytes(4).toString("hex").toUpperCase()}/${randomBytes(12).toString("base64url")}`;
  const posted: SlackMessage[] = [];
  const channels = new Set(options.channels ?? []);
  const archivedChannels = new Set(options.archivedChannels ?? []);
  const server = await startFakeServer({
    refuse: (request) => refusal(request, hookPath, channels, archivedChannels),
    reset: () => {
      posted.length = 0;
    },
    answer: (request) => {
      const body = messageOf(request)!;
      posted.push({ channel: body.channel, text: body.text, body });
      return { status: 200, body: "ok", headers: { "Content-Type": "text/plain; charset=utf-8" } };
    },
  });
  return Object.assign(server, { webhookUrl: `${server.url}${hookPath}`, posted, channels, archivedChannels });
}

/** The message object of a JSON request or of a form request's `payload` field. */
function messageOf(request: RecordedRequest): any | undefined {
  const type = mediaType(request);
  const text =
    type === "application/json" ? request.body : type === "application/x-www-form-urlencoded" ? new URLSearchParams(request.body).get("payload") : null;
  if (text === null) return undefined;
  const parsed = parseJson(text);
  return parsed.ok && typeof parsed.value === "object" && parsed.value !== null && !Array.isArray(parsed.value) ? parsed.value : undefined;
}

function refusal(request: RecordedRequest, hookPath: string, channels: Set<string>, archived: Set<string>): FakeReply | undefined {
  if (request.path !== hookPath) return slackError(404, "no_service");
  if (request.method !== "POST") return slackError(405, "invalid_method");
  const message = messageOf(request);
  if (!message) return slackError(400, "invalid_payload");
  const hasText = typeof message.text === "string" && message.text.trim() !== "";
  if (!hasText && message.blocks === undefined && message.attachments === undefined) return slackError(400, "no_text");
  if (message.channel !== undefined) {
    const name = String(message.channel).replace(/^#/, "");
    if (archived.has(name)) return slackError(410, "channel_is_archived");
    if (channels.size > 0 && !channels.has(name)) return slackError(404, "channel_not_found");
  }
  return undefined;
}
