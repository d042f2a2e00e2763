// send_sms against a strict local fake of Africa's Talking: form encoding, the apiKey header, the per-recipient
// statusCode of a 201, plain-text 401s, InvalidSenderId, and the sandbox/production host choice.
import { PermanentJobError, RetryableJobError, type SendSmsPayload } from "@conveyor/contracts";
import { sendSmsHandler } from "../../src/handlers/send-sms";
import { MissingSettingError } from "../../src/handlers/settings";
import { defaultBaseUrl } from "../../src/handlers/sms/africastalking";
import { AT_TEST_KEY, startAfricasTalkingFake, type AfricasTalkingFake } from "@conveyor/testkit/fakes";
import { handlerDeps, type TestDeps } from "../fakes/handler-deps";
import { failureOf, handlerContext, type RecordedContext } from "../support/handler-context";

const TEXT = "Your one-time code is 482913. Do not share it.";
const payload = (overrides: Partial<SendSmsPayload> = {}): SendSmsPayload => ({ to: "+254712345678", message: TEXT, ...overrides });

const failure = (deps: TestDeps, p: SendSmsPayload = payload(), ctx: RecordedContext = handlerContext({ type: "send_sms" })) =>
  failureOf(() => sendSmsHandler(deps)(p, ctx));

function expectNoSecrets(deps: TestDeps, ctx: RecordedContext, errors: Error[] = []) {
  const text = [...ctx.lines.map((l) => l.message), ...deps.processOutput, ...errors.map((e) => e.message)].join("\n");
  expect(text).not.toContain(AT_TEST_KEY);
  expect(text).not.toContain(TEXT);
  expect(text).not.toContain("482913");
}

describe("send_sms via Africa's Talking", () => {
  let fake: AfricasTalkingFake;
  beforeAll(async () => {
    fake = await startAfricasTalkingFake({ senderIds: ["CONVEYOR"] });
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.reset();
    fake.recipientStatus.clear();
  });

  const env = (extra: Record<string, string> = {}) =>
    handlerDeps({
      SMS_PROVIDER_USERNAME: "sandbox",
      SMS_PROVIDER_API_KEY: AT_TEST_KEY,
      SMS_PROVIDER_BASE_URL: fake.url,
      PROVIDER_TIMEOUT_MS: "2000",
      ...extra,
    });

  it("posts the form-encoded /version1/messaging with the apiKey header and returns the recipient's answer", async () => {
    const deps = env();
    const ctx = handlerContext({ type: "send_sms" });
    const result = await sendSmsHandler(deps)(payload({ from: "CONVEYOR" }), ctx);

    const request = fake.lastRequest();
    expect(request.method).toBe("POST");
    expect(request.path).toBe("/version1/messaging");
    expect(request.headers.apikey).toBe(AT_TEST_KEY);
    expect(request.headers.accept).toBe("application/json");
    expect(request.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
      username: "sandbox",
      to: "+254712345678",
      message: TEXT,
      from: "CONVEYOR",
      bulkSMSMode: "1",
    });

    const sent = fake.sent[0]!.recipients[0];
    expect(result).toEqual({
      message_id: sent.messageId,
      status: "Success",
      status_code: 101,
      cost: "KES 0.8000",
      number: "+254712345678",
      message_parts: 1,
      summary: "Sent to 1/1 Total Cost: KES 0.8000",
    });
    expect(ctx.lines.map((l) => l.message)).toEqual([
      "Sending SMS via Africa's Talking (sandbox) to +2547*****678 from CONVEYOR (46 characters)",
      `Africa's Talking accepted message ${sent.messageId} for +2547*****678: 101 Sent, cost KES 0.8000`,
    ]);
    expectNoSecrets(deps, ctx);
  });

  it("leaves `from` out when the payload has none (the account's default sender is used)", async () => {
    await sendSmsHandler(env())(payload(), handlerContext());
    expect(new URLSearchParams(fake.lastRequest().body).has("from")).toBe(false);
  });

  it.each([
    [100, "Processed"],
    [102, "Queued"],
  ])("counts per-recipient %i %s as sent", async (code) => {
    fake.recipientStatus.set("+254712345678", code);
    const result = await sendSmsHandler(env())(payload(), handlerContext());
    expect(result).toMatchObject({ status_code: code });
  });

  it.each([
    [401, "RiskHold"],
    [402, "InvalidSenderId"],
    [403, "InvalidPhoneNumber"],
    [404, "UnsupportedNumberType"],
    [406, "UserInBlacklist"],
    [407, "CouldNotRoute"],
    [409, "DoNotDisturbRejection"],
  ])("fails permanently on per-recipient %i %s inside a 201, and logs it", async (code, name) => {
    fake.recipientStatus.set("+254712345678", code);
    const ctx = handlerContext();
    const error = await failure(env(), payload(), ctx);
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toMatch(new RegExp(`^Africa's Talking refused \\+2547\\*{5}678: ${code} ${name}`));
    expect(ctx.lines).toContainEqual({ level: "warn", message: `Recipient +2547*****678: statusCode ${code} (${name}), status "${name}", cost 0` });
  });

  it("retries per-recipient 405 InsufficientBalance after ten minutes", async () => {
    fake.recipientStatus.set("+254712345678", 405);
    const ctx = handlerContext();
    const error = await failure(env(), payload(), ctx);
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(error.message).toBe("Africa's Talking refused +2547*****678: 405 InsufficientBalance (the Africa's Talking account is out of credit)");
    expect((error as RetryableJobError).retryAfterMs).toBe(600_000);
    expect(ctx.lines).toContainEqual({
      level: "warn",
      message: 'Recipient +2547*****678: statusCode 405 (InsufficientBalance), status "InsufficientBalance", cost 0',
    });
  });

  it.each([
    [500, "InternalServerError"],
    [501, "GatewayError"],
    [502, "RejectedByGateway"],
  ])("retries per-recipient %i %s", async (code, name) => {
    fake.recipientStatus.set("+254712345678", code);
    const error = await failure(env());
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(error.message).toBe(`Africa's Talking refused +2547*****678: ${code} ${name}`);
    expect((error as RetryableJobError).retryAfterMs).toBeUndefined();
  });

  it("fails permanently on an unregistered sender ID (201, Message InvalidSenderId, no recipients)", async () => {
    const ctx = handlerContext();
    const error = await failure(env(), payload({ from: "UNKNOWN" }), ctx);
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toBe("Africa's Talking sent nothing: InvalidSenderId (the sender ID is not approved for this account or route)");
    expect(fake.sent).toHaveLength(0);
  });

  it("fails permanently on the plain-text 401 for a wrong key, naming both settings and not the key", async () => {
    const deps = env({ SMS_PROVIDER_API_KEY: "atsk_wrong_key_123" });
    const ctx = handlerContext();
    const error = await failure(deps, payload(), ctx);
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toBe(
      `Africa's Talking answered 401: The supplied authentication is invalid (check SMS_PROVIDER_USERNAME and SMS_PROVIDER_API_KEY; a sandbox key works only with the username "sandbox")`,
    );
    expect(error.message).not.toContain("atsk_wrong_key_123");
  });

  it("fails permanently on a 401 for a username that does not own the key", async () => {
    const error = await failure(env({ SMS_PROVIDER_USERNAME: "acme-live" }));
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toMatch(/^Africa's Talking answered 401: The supplied authentication is invalid/);
  });

  it("does not take a 200 for success (only 201 is)", async () => {
    fake.replyNext({
      status: 200,
      body: {
        SMSMessageData: {
          Message: "Sent to 1/1",
          Recipients: [{ statusCode: 101, number: "+254712345678", status: "Success", cost: "KES 0.8000", messageId: "ATXid_x" }],
        },
      },
    });
    const error = await failure(env());
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toMatch(/^Africa's Talking answered 200/);
  });

  it("does not retry a 201 it cannot read, because the SMS may have gone out", async () => {
    fake.replyNext({ status: 201, body: "<AfricasTalkingResponse/>", headers: { "Content-Type": "application/xml" } });
    const error = await failure(env());
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error.message).toMatch(/the SMS may have been sent, so it is not retried$/);
  });

  it.each([429, 500, 503])("retries an HTTP %i", async (status) => {
    fake.replyNext({ status, body: "Service unavailable", headers: { "Content-Type": "text/plain", ...(status === 429 ? { "Retry-After": "30" } : {}) } });
    const error = await failure(env());
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(error.message).toBe(`Africa's Talking answered ${status}: Service unavailable`);
    if (status === 429) expect((error as RetryableJobError).retryAfterMs).toBe(30_000);
  });

  it("retries when Africa's Talking does not answer within PROVIDER_TIMEOUT_MS", async () => {
    fake.hang();
    const error = await failure(env({ PROVIDER_TIMEOUT_MS: "150" }));
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(error.message).toBe("Africa's Talking did not answer within 150 ms");
  });

  it.each([
    ["SMS_PROVIDER_USERNAME", { SMS_PROVIDER_USERNAME: "" }],
    ["SMS_PROVIDER_API_KEY", { SMS_PROVIDER_API_KEY: "" }],
  ])("fails permanently naming %s when it is missing, and sends nothing", async (variable, extra) => {
    const error = await failure(env(extra));
    expect(error).toBeInstanceOf(MissingSettingError);
    expect(error.message).toMatch(new RegExp(`^${variable} is not set`));
    expect(fake.requests).toHaveLength(0);
  });

  it("defaults to the sandbox host for the username sandbox (any case) and to production otherwise", () => {
    expect(defaultBaseUrl("sandbox")).toBe("https://api.sandbox.africastalking.com");
    expect(defaultBaseUrl("Sandbox")).toBe("https://api.sandbox.africastalking.com");
    expect(defaultBaseUrl("acme")).toBe("https://api.africastalking.com");
  });
});

describe("the Africa's Talking fake is strict", () => {
  let fake: AfricasTalkingFake;
  beforeAll(async () => {
    fake = await startAfricasTalkingFake();
  });
  afterAll(() => fake.close());

  it("refuses JSON (415), a missing field (400 text), a wrong key (401 text), and answers XML without Accept: application/json", async () => {
    const url = `${fake.url}/version1/messaging`;
    const json = await fetch(url, {
      method: "POST",
      headers: { apiKey: AT_TEST_KEY, Accept: "application/json", "Content-Type": "application/json" },
      body: JSON.stringify({ username: "sandbox", to: "+254712345678", message: "hi" }),
    });
    expect(json.status).toBe(415);

    const missing = await fetch(url, {
      method: "POST",
      headers: { apiKey: AT_TEST_KEY, Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded" },
      body: "username=sandbox&to=%2B254712345678",
    });
    expect(missing.status).toBe(400);
    expect(await missing.text()).toBe("Request is missing required form field 'message'");

    const wrongKey = await fetch(url, {
      method: "POST",
      headers: { apiKey: "nope", Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded" },
      body: "username=sandbox&to=%2B254712345678&message=hi",
    });
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await wrongKey.text()).toBe("The supplied authentication is invalid");

    const xml = await fetch(url, {
      method: "POST",
      headers: { apiKey: AT_TEST_KEY, Accept: "text/xml", "Content-Type": "application/x-www-form-urlencoded" },
      body: "username=sandbox&to=%2B254712345678&message=hi",
    });
    expect(xml.status).toBe(201);
    expect(xml.headers.get("content-type")).toBe("application/xml");
  });
});
