// send_sms, chat_notify and ai_summarize end to end: POST /jobs on the real API, a real worker process serving the
// three types, and each provider's strict fake. Each runs to done, and each fails with a clear logged reason when
// its provider refuses.
import {
  AT_TEST_KEY,
  AT_TEST_USERNAME,
  OPENAI_TEST_KEY,
  openaiError,
  startAfricasTalkingFake,
  startOpenAIFake,
  startSlackFake,
  type AfricasTalkingFake,
  type OpenAIFake,
  type SlackFake,
} from "@conveyor/testkit/fakes";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

const terminal = (job: { status: string }) => job.status === "done" || job.status === "failed";

let stack: Stack;
let sms: AfricasTalkingFake;
let slack: SlackFake;
let openai: OpenAIFake;

beforeAll(async () => {
  [sms, slack, openai] = await Promise.all([startAfricasTalkingFake(), startSlackFake({ channels: ["ops"] }), startOpenAIFake()]);
  stack = await startStack({
    workerEnv: {
      WORKER_TYPES: "send_sms,chat_notify,ai_summarize",
      SMS_PROVIDER_USERNAME: AT_TEST_USERNAME,
      SMS_PROVIDER_API_KEY: AT_TEST_KEY,
      SMS_PROVIDER_BASE_URL: sms.url,
      CHAT_WEBHOOK_URL: slack.webhookUrl,
      OPENAI_API_KEY: OPENAI_TEST_KEY,
      OPENAI_BASE_URL: openai.baseUrl,
    },
  });
  await stack.startWorker();
});
afterEach(() => stack?.expectOtherOrgUntouched());
afterAll(async () => {
  await stack?.close();
  await Promise.all([sms?.close(), slack?.close(), openai?.close()]);
});

async function run(body: object) {
  const created = await stack.post("/jobs", body);
  expect(created.status).toBe(202);
  const job = await stack.waitForJob(created.body.id, terminal);
  return { job, logs: await stack.logs(job.id) };
}

describe("messaging jobs through the API and a worker", () => {
  it("send_sms: sends through Africa's Talking and records the message id", async () => {
    const { job } = await run({ type: "send_sms", payload: { to: "+254712345678", message: "Your code is 482913" }, max_retries: 2 });
    expect(job.status).toBe("done");
    expect(job.result).toMatchObject({ status_code: 101, number: "+254712345678", message_id: expect.stringMatching(/^ATXid_/) });
    expect(sms.sent.at(-1)).toMatchObject({ to: "+254712345678" });
  });

  it("send_sms: a recipient the provider refuses (InvalidPhoneNumber) fails without retries, saying why", async () => {
    sms.recipientStatus.set("+254700000403", 403);
    const { job, logs } = await run({ type: "send_sms", payload: { to: "+254700000403", message: "hello" }, max_retries: 3 });
    expect(job).toMatchObject({ status: "failed", retries: 0 });
    expect(job.error).toMatch(/InvalidPhoneNumber|403/);
    expect(logs.at(-1)).toMatchObject({ level: "error", message: expect.stringMatching(/failed permanently/) });
  });

  it("chat_notify: posts to the incoming webhook", async () => {
    const { job } = await run({ type: "chat_notify", payload: { channel: "#ops", text: "Deploy 1.4.2 finished" } });
    expect(job).toMatchObject({ status: "done", result: { delivered: true, channel: "#ops" } });
    expect(slack.posted.at(-1)).toMatchObject({ channel: "#ops", text: "Deploy 1.4.2 finished" });
  });

  it("chat_notify: an unknown channel (404 channel_not_found) fails without retries, saying why", async () => {
    const { job } = await run({ type: "chat_notify", payload: { channel: "#nowhere", text: "hi" }, max_retries: 3 });
    expect(job).toMatchObject({ status: "failed", retries: 0 });
    expect(job.error).toMatch(/channel_not_found/);
  });

  it("ai_summarize: returns the model's summary", async () => {
    const { job } = await run({ type: "ai_summarize", payload: { text: "Conveyor runs background jobs for teams. It never loses one.", length: "short" } });
    expect(job.status).toBe("done");
    expect(job.result).toMatchObject({ summary: expect.any(String), model: expect.any(String) });
    expect(openai.completions.length).toBeGreaterThan(0);
  });

  it("ai_summarize: a rate limit makes the type wait as long as OpenAI asks, without spending a retry, then the job succeeds", async () => {
    openai.failNext(429, openaiError(429, "Rate limit reached", { type: "requests", code: "rate_limit_exceeded" }).body, { "retry-after-ms": "50" });
    const { job, logs } = await run({ type: "ai_summarize", payload: { text: "Retry me." }, max_retries: 2 });
    expect(job).toMatchObject({ status: "done", retries: 0 });
    expect(logs).toContainEqual(
      expect.objectContaining({
        attempt: 1,
        level: "warn",
        message: expect.stringMatching(/^Attempt 1 was rate limited by the provider: .*no retry is spent\.$/),
      }),
    );
  });

  it("ai_summarize: exhausted quota (429 insufficient_quota) fails without retries", async () => {
    openai.failNext(429, openaiError(429, "You exceeded your current quota", { type: "insufficient_quota", code: "insufficient_quota" }).body);
    const { job } = await run({ type: "ai_summarize", payload: { text: "No money." }, max_retries: 3 });
    expect(job).toMatchObject({ status: "failed", retries: 0 });
    expect(job.error).toMatch(/quota/i);
  });
});
