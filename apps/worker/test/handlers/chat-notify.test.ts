// chat_notify against strict local fakes of a Slack and a Mattermost incoming webhook: success only on 200 `ok`,
// plain-text (Slack) and JSON (Mattermost) errors, Retry-After on 429, no redirects, and a URL that never leaks.
import { PermanentJobError, RetryableJobError, type ChatNotifyPayload } from "@conveyor/contracts";
import { chatNotifyHandler } from "../../src/handlers/chat-notify";
import { MissingSettingError } from "../../src/handlers/settings";
import { handlerDeps, type TestDeps } from "../fakes/handler-deps";
import { mattermostError, startMattermostFake, type MattermostFake, slackError, startSlackFake, type SlackFake } from "@conveyor/testkit/fakes";
import { failureOf, handlerContext, type RecordedContext } from "../support/handler-context";

const TEXT = "Deploy 1.4.2 finished: 3 migrations applied, customer ACME-7731 notified.";
const payload = (overrides: Partial<ChatNotifyPayload> = {}): ChatNotifyPayload => ({ channel: "#deploys", text: TEXT, ...overrides });

const failure = (deps: TestDeps, p: ChatNotifyPayload = payload(), ctx: RecordedContext = handlerContext({ type: "chat_notify" })) =>
  failureOf(() => chatNotifyHandler(deps)(p, ctx));

describe("chat_notify via a Slack incoming webhook", () => {
  let fake: SlackFake;
  beforeAll(async () => {
    fake = await startSlackFake({ channels: ["deploys", "general", "old-news"], archivedChannels: ["old-news"] });
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  const env = (extra: Record<string, string> = {}) => handlerDeps({ CHAT_WEBHOOK_URL: fake.webhookUrl, PROVIDER_TIMEOUT_MS: "2000", ...extra });

  it("posts {channel, text} as JSON to the webhook URL and reports delivery on 200 ok", async () => {
    const deps = env();
    const ctx = handlerContext({ type: "chat_notify" });
    const result = await chatNotifyHandler(deps)(payload(), ctx);

    const request = fake.lastRequest();
    expect(request.method).toBe("POST");
    expect(`${fake.url}${request.path}`).toBe(fake.webhookUrl);
    expect(request.headers["content-type"]).toMatch(/^application\/json/);
    expect(request.headers.authorization).toBeUndefined();
    expect(JSON.parse(request.body)).toEqual({ channel: "#deploys", text: TEXT });
    expect(fake.posted).toEqual([{ channel: "#deploys", text: TEXT, body: { channel: "#deploys", text: TEXT } }]);
    expect(result).toEqual({ delivered: true, channel: "#deploys" });

    const host = new URL(fake.webhookUrl).host;
    expect(ctx.lines.map((l) => l.message)).toEqual([
      `Posting to channel #deploys through the chat webhook at ${host} (${TEXT.length} characters)`,
      "Delivered to channel #deploys",
    ]);
    // The webhook path is the credential; the text is the user's content.
    const secretPath = new URL(fake.webhookUrl).pathname;
    const everything = [...ctx.lines.map((l) => l.message), ...deps.processOutput].join("\n");
    expect(everything).not.toContain(secretPath);
    expect(everything).not.toContain(TEXT);
  });

  it.each([
    ["an unknown channel", "#nowhere", 404, "channel_not_found (the channel does not exist or the webhook cannot post to it)"],
    ["an archived channel", "#old-news", 410, "channel_is_archived (the channel is archived)"],
  ])("fails permanently for %s with Slack's plain-text code", async (_what, channel, status, detail) => {
    const error = await failure(env(), payload({ channel }));
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toBe(`The chat webhook at ${new URL(fake.webhookUrl).host} answered ${status}: ${detail}`);
  });

  it("fails permanently with no_service when the webhook was revoked, without leaking its path", async () => {
    const revoked = `${fake.url}/services/T000/B000/revokedSecretPart`;
    const deps = env({ CHAT_WEBHOOK_URL: revoked });
    const ctx = handlerContext();
    const error = await failure(deps, payload(), ctx);
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toMatch(/answered 404: no_service \(the webhook was revoked or disabled; update CHAT_WEBHOOK_URL\)$/);
    expect([error.message, ...ctx.lines.map((l) => l.message)].join("\n")).not.toContain("revokedSecretPart");
  });

  it.each([
    [400, "invalid_payload"],
    [400, "no_text"],
    [403, "action_prohibited"],
  ])("fails permanently on %i %s", async (status, code) => {
    fake.replyNext(slackError(status, code));
    const error = await failure(env());
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toMatch(new RegExp(`answered ${status}: ${code} \\(`));
  });

  it("retries a 429 after its Retry-After", async () => {
    fake.replyNext(slackError(429, "rate_limited", { "Retry-After": "30" }));
    const error = await failure(env());
    expect(error).toBeInstanceOf(RetryableJobError);
    expect((error as RetryableJobError).retryAfterMs).toBe(30_000);
  });

  it.each([500, 503])("retries a %i (rollup_error)", async (status) => {
    fake.replyNext(slackError(status, "rollup_error"));
    const error = await failure(env());
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(error.message).toMatch(new RegExp(`answered ${status}: rollup_error$`));
  });

  it("does not take a 200 with another body for delivery", async () => {
    fake.replyNext({ status: 200, body: "<html>Sign in</html>", headers: { "Content-Type": "text/html" } });
    const error = await failure(env());
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toMatch(/answered 200 without "ok" \(<html>Sign in<\/html>\); is CHAT_WEBHOOK_URL an incoming-webhook URL\?$/);
  });

  it("does not follow a redirect", async () => {
    fake.replyNext({ status: 302, headers: { Location: `${fake.webhookUrl}` } });
    const error = await failure(env());
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toMatch(/answered 302 \(a redirect, which is not followed\); check CHAT_WEBHOOK_URL$/);
    expect(fake.requests).toHaveLength(1);
  });

  it("waits for a slow answer that comes within PROVIDER_TIMEOUT_MS", async () => {
    fake.delayNext(100);
    const result = await chatNotifyHandler(env())(payload(), handlerContext());
    expect(result).toEqual({ delivered: true, channel: "#deploys" });
  });

  it("retries when the webhook does not answer within PROVIDER_TIMEOUT_MS", async () => {
    fake.hang();
    const error = await failure(env({ PROVIDER_TIMEOUT_MS: "150" }));
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(error.message).toBe(`The chat webhook at ${new URL(fake.webhookUrl).host} did not answer within 150 ms`);
  });

  it("fails permanently, naming CHAT_WEBHOOK_URL, when it is not set", async () => {
    const error = await failure(handlerDeps({}));
    expect(error).toBeInstanceOf(MissingSettingError);
    expect(error.message).toMatch(/^CHAT_WEBHOOK_URL is not set/);
  });
});

describe("chat_notify via a Mattermost incoming webhook", () => {
  let fake: MattermostFake;
  beforeAll(async () => {
    fake = await startMattermostFake({ channels: ["town-square", "deploys"] });
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  const env = () => handlerDeps({ CHAT_WEBHOOK_URL: fake.webhookUrl, PROVIDER_TIMEOUT_MS: "2000" });

  it("delivers on 200 ok", async () => {
    const result = await chatNotifyHandler(env())(payload({ channel: "deploys" }), handlerContext());
    expect(result).toEqual({ delivered: true, channel: "deploys" });
    expect(fake.posted).toHaveLength(1);
  });

  it("reads Mattermost's JSON error body", async () => {
    const error = await failure(env(), payload({ channel: "nowhere" }));
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toBe(
      `The chat webhook at ${new URL(fake.webhookUrl).host} answered 404: web.incoming_webhook.channel.app_error: Couldn't find the channel. (the channel does not exist or the webhook cannot post to it)`,
    );
  });

  it("retries Mattermost's 5xx", async () => {
    fake.replyNext(mattermostError(503, "api.server.unavailable", "Service unavailable"));
    const error = await failure(env());
    expect(error).toBeInstanceOf(RetryableJobError);
  });
});

describe("the chat webhook fakes are strict", () => {
  it("Slack refuses a message without text (400 no_text) and a body that is not JSON (400 invalid_payload)", async () => {
    const fake = await startSlackFake();
    try {
      const noText = await fetch(fake.webhookUrl, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ channel: "#x" }) });
      expect(noText.status).toBe(400);
      expect(await noText.text()).toBe("no_text");

      const notJson = await fetch(fake.webhookUrl, { method: "POST", headers: { "Content-Type": "application/json" }, body: "text=hello" });
      expect(notJson.status).toBe(400);
      expect(await notJson.text()).toBe("invalid_payload");
      expect(fake.posted).toHaveLength(0);
    } finally {
      await fake.close();
    }
  });

  it("Mattermost refuses a message without text with its JSON AppError", async () => {
    const fake = await startMattermostFake();
    try {
      const noText = await fetch(fake.webhookUrl, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ channel: "x" }) });
      expect(noText.status).toBe(400);
      expect(await noText.json()).toMatchObject({ id: "web.incoming_webhook.text.app_error", message: "No text specified", status_code: 400 });
    } finally {
      await fake.close();
    }
  });
});
