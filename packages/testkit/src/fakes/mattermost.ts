// Mattermost incoming webhook (docs/reference/providers.md#chat-webhooks): POST /hooks/<key> with Slack-format JSON; success is 200
// text/plain `ok`; errors are Mattermost's JSON AppError body (`id`, `message`, `status_code`, …).
import { randomBytes } from "node:crypto";
import { mediaType, parseJson, startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from "./fake-server";

export type MattermostFake = FakeServer & { webhookUrl: string; posted: { channel?: string; text?: string; body: any }[]; channels: Set<string> };

export const mattermostError = (status: number, id: string, message: string): FakeReply => ({
  status,
  body: { id, message, detailed_error: "", request_id: randomBytes(13).toString("hex"), status_code: status },
});

export async function startMattermostFake(options: { channels?: string[] } = {}): Promise<MattermostFake> {
  const hookPath = `/hooks/${randomBytes(13).toString("hex")}`;
  const posted: MattermostFake["posted"] = [];
  const channels = new Set(options.channels ?? []);
  const server = await startFakeServer({
    refuse: (request) => refusal(request, hookPath, channels),
    reset: () => {
      posted.length = 0;
    },
    answer: (request) => {
      const body = JSON.parse(request.body);
      posted.push({ channel: body.channel, text: body.text, body });
      return { status: 200, body: "ok", headers: { "Content-Type": "text/plain" } };
    },
  });
  return Object.assign(server, { webhookUrl: `${server.url}${hookPath}`, posted, channels });
}

function refusal(request: RecordedRequest, hookPath: string, channels: Set<string>): FakeReply | undefined {
  if (request.path !== hookPath) return mattermostError(400, "web.incoming_webhook.invalid.app_error", "Invalid webhook.");
  if (request.method !== "POST") return mattermostError(405, "api.context.method_not_allowed.app_error", "Method not allowed.");
  const parsed = mediaType(request) === "application/json" ? parseJson(request.body) : { ok: false as const };
  if (!parsed.ok || typeof parsed.value !== "object" || parsed.value === null) {
    return mattermostError(400, "web.incoming_webhook.parse.app_error", "Unable to parse incoming data.");
  }
  const message = parsed.value as any;
  if ((typeof message.text !== "string" || message.text === "") && message.attachments === undefined) {
    return mattermostError(400, "web.incoming_webhook.text.app_error", "No text specified");
  }
  if (message.channel !== undefined && channels.size > 0 && !channels.has(String(message.channel).replace(/^#/, ""))) {
    return mattermostError(404, "web.incoming_webhook.channel.app_error", "Couldn't find the channel.");
  }
  return undefined;
}
