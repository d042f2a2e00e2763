// docs/reference/robustness.md#r31: a full session through a real API process and a real worker process, at debug level, using
// every kind of secret the product handles; then nothing in either process' output contains any of them.
import { randomBytes } from "node:crypto";
import {
  createTestDatabase,
  deleteRedisPrefix,
  freePort,
  spawnService,
  testRedisPrefix,
  TEST_REDIS_URL,
  waitFor,
  type ServiceProcess,
  type TestDatabase,
} from "@conveyor/testkit";
import { createSecondOrg, httpGet, type SecondOrg } from "@conveyor/api/testing";
import {
  OPENAI_TEST_KEY,
  openaiError,
  RESEND_TEST_KEY,
  startOpenAIFake,
  startResendFake,
  startWebhookReceiver,
  type FakeServer,
  type OpenAIFake,
  type ResendFake,
} from "@conveyor/testkit/fakes";

const JWT_SECRET = `jwt-${randomBytes(24).toString("hex")}`;
const SIGNING_SECRET = `whsec_${randomBytes(32).toString("base64")}`;
const OWNER_PASSWORD = `owner pass ${randomBytes(6).toString("hex")}`;
const INVITEE_PASSWORD = `invitee pass ${randomBytes(6).toString("hex")}`;
const PAYLOAD_MARKER = `card-${randomBytes(8).toString("hex")}`;
const EMAIL_BODY = `Dear customer, your one-time code is ${randomBytes(6).toString("hex")}`;
const SUMMARY_TEXT = `Confidential board minutes ${randomBytes(6).toString("hex")}`;

let database: TestDatabase;
let api: ServiceProcess;
let worker: ServiceProcess;
let base: string;
let resend: ResendFake;
let openai: OpenAIFake;
let receiver: FakeServer;
let other: SecondOrg;
const prefix = testRedisPrefix();
const secrets: Record<string, string> = {
  JWT_SECRET,
  SIGNING_SECRET,
  OWNER_PASSWORD,
  INVITEE_PASSWORD,
  PAYLOAD_MARKER,
  EMAIL_BODY,
  SUMMARY_TEXT,
  RESEND_TEST_KEY,
  OPENAI_TEST_KEY,
};

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body ? { "content-type": "application/json" } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as any) : null, text };
}

beforeAll(async () => {
  database = await createTestDatabase();
  other = await createSecondOrg(database.db);
  [resend, openai, receiver] = await Promise.all([startResendFake(), startOpenAIFake(), startWebhookReceiver()]);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const shared = {
    NODE_ENV: "test",
    LOG_LEVEL: "debug",
    DATABASE_URL: database.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    PUBLIC_URL: base,
    ALLOW_PRIVATE_NETWORK: "true",
    WEBHOOK_ALLOW_HTTP: "true",
  };
  api = spawnService("api", { ...shared, PORT: String(port), JWT_SECRET, BCRYPT_COST: "4" });
  worker = spawnService("worker", {
    ...shared,
    WORKER_METRICS_PORT: "0",
    RETRY_BASE_MS: "100",
    EMAIL_PROVIDER: "resend",
    EMAIL_PROVIDER_API_KEY: RESEND_TEST_KEY,
    EMAIL_PROVIDER_BASE_URL: resend.url,
    EMAIL_FROM: "Conveyor <noreply@conveyor.test>",
    OPENAI_API_KEY: OPENAI_TEST_KEY,
    OPENAI_BASE_URL: openai.baseUrl,
    WEBHOOK_SIGNING_SECRET: SIGNING_SECRET,
  });
  await Promise.all([api.waitForOutput(/API listening/), worker.waitForOutput(/worker started/)]);
  await other.watch(httpGet(base));
}, 120_000);

// The intruder is the session's org, by the API key the test creates in it.
afterEach(() => other.expectUntouched({ "X-API-Key": secrets.API_KEY ?? "" }));

afterAll(async () => {
  await Promise.all([api?.stop(), worker?.stop()]);
  await Promise.all([resend?.close(), openai?.close(), receiver?.close()]);
  await database?.drop();
  await deleteRedisPrefix(prefix);
});

describe("a full session", () => {
  it("leaves no password, token, key, invite token, signing secret, provider key or payload body in any log", async () => {
    const signup = await call("POST", "/auth/signup", { email: "owner@example.test", password: OWNER_PASSWORD, org_name: "Hygiene" });
    expect(signup.status).toBe(201);
    const token: string = signup.body.token;
    secrets.OWNER_JWT = token;
    const auth = { Authorization: `Bearer ${token}` };

    expect((await call("POST", "/auth/login", { email: "owner@example.test", password: "wrong password but long" })).status).toBe(401);
    expect((await call("POST", "/auth/login", { email: "owner@example.test", password: OWNER_PASSWORD })).status).toBe(200);

    const key = await call("POST", "/api-keys", { name: "hygiene" }, auth);
    expect(key.status).toBe(201);
    secrets.API_KEY = key.body.key;

    const invite = await call("POST", "/org/invite", { email: "invitee@example.test", role: "member" }, auth);
    expect(invite.status).toBe(201);
    const inviteToken = new URL(invite.body.invite_url).searchParams.get("token")!;
    secrets.INVITE_TOKEN = inviteToken;
    expect((await fetch(`${base}/accept-invite?token=${encodeURIComponent(inviteToken)}`)).status).toBe(200);
    expect((await call("GET", `/invite?token=${encodeURIComponent(inviteToken)}`)).status).toBe(200);
    const accepted = await call("POST", "/invite/accept", { token: inviteToken, password: INVITEE_PASSWORD });
    expect(accepted.status).toBe(200);
    secrets.INVITEE_JWT = accepted.body.token;
    expect((await call("POST", "/invite/accept", { token: inviteToken, password: INVITEE_PASSWORD })).status).toBe(410);

    const withKey = { "X-API-Key": secrets.API_KEY! };
    openai.failNext(401, openaiError(401, `Incorrect API key provided: ${OPENAI_TEST_KEY}`, { code: "invalid_api_key" }).body);
    const jobs = await Promise.all([
      call("POST", "/jobs", { type: "webhook", payload: { url: `${receiver.url}/hook`, payload: { secret: PAYLOAD_MARKER } }, max_retries: 1 }, withKey),
      call("POST", "/jobs", { type: "send_email", payload: { to: "ada@example.com", subject: "Code", body: EMAIL_BODY } }, withKey),
      call("POST", "/jobs", { type: "ai_summarize", payload: { text: SUMMARY_TEXT, length: "short" } }, { Authorization: `Bearer ${secrets.INVITEE_JWT}` }),
      call("POST", "/jobs", { type: "webhook", payload: { url: "https://127.0.0.1.nip.io.invalid/x", payload: { secret: PAYLOAD_MARKER } } }, withKey),
    ]);
    for (const job of jobs) expect(job.status).toBe(202);
    for (const job of jobs) {
      await waitFor(
        async () => {
          const j = await call("GET", `/jobs/${job.body.id}`, undefined, withKey);
          return j.body.status === "done" || j.body.status === "failed";
        },
        `job ${job.body.id} to finish`,
        30_000,
      );
      expect((await call("GET", `/jobs/${job.body.id}/logs`, undefined, withKey)).status).toBe(200);
    }
    expect(receiver.requests.length).toBeGreaterThan(0);
    expect(resend.sent.length).toBe(1);

    // Removing the invitee: the server logs the refusal of their token afterwards.
    const me = await call("GET", "/me", undefined, { Authorization: `Bearer ${secrets.INVITEE_JWT}` });
    expect((await call("DELETE", `/org/members/${me.body.user.id}`, undefined, auth)).status).toBe(204);
    expect((await call("GET", "/me", undefined, { Authorization: `Bearer ${secrets.INVITEE_JWT}` })).status).toBe(401);
    expect((await call("GET", "/jobs", undefined, { "X-API-Key": `${secrets.API_KEY}x` })).status).toBe(401);

    const output = `${api.output()}\n${worker.output()}`;
    // The processes did log the session (access lines, attempts, refusals) — at debug level.
    expect(api.output()).toMatch(/POST \/auth\/login 401/);
    expect(api.output()).toMatch(/GET \/accept-invite 200/);
    expect(worker.output()).toMatch(/worker started/);
    const leaks = Object.entries(secrets).filter(([, value]) => output.includes(value));
    expect(leaks.map(([name]) => name)).toEqual([]);
    // The signing key's raw bytes in base64 without the prefix, and the bcrypt hashes, are secrets too.
    expect(output).not.toContain(SIGNING_SECRET.slice("whsec_".length));
    expect(output).not.toMatch(/\$2[aby]\$\d\d\$/);
  });
});
