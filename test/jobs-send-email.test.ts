// send_email end to end: POST /jobs on the real API, a real worker process, and the strict Resend fake.
// Proves the job id reaches Resend as the Idempotency-Key on every attempt, so a retry never sends twice.
import { RESEND_TEST_KEY, resendError, startResendFake, type ResendFake } from "@conveyor/testkit/fakes";
import { attemptLines, startStack, starts, type Stack } from "@conveyor/api/testing/stack";

const BODY = "Hello Ada, your export is ready. This body must never reach a log.";
const terminal = (job: { status: string }) => job.status === "done" || job.status === "failed";

let stack: Stack;
let fake: ResendFake;
beforeAll(async () => {
  fake = await startResendFake();
  stack = await startStack({
    workerEnv: {
      WORKER_TYPES: "send_email",
      EMAIL_PROVIDER: "resend",
      EMAIL_PROVIDER_API_KEY: RESEND_TEST_KEY,
      EMAIL_PROVIDER_BASE_URL: fake.url,
      EMAIL_FROM: "Conveyor <noreply@conveyor.test>",
    },
  });
  await stack.startWorker();
});
afterEach(() => stack?.expectOtherOrgUntouched());
afterAll(async () => {
  await stack?.close();
  await fake?.close();
});
beforeEach(() => fake.reset());

describe("send_email through the API and a worker", () => {
  it("sends once via Resend with the job id as Idempotency-Key and stores the result", async () => {
    const created = await stack.post("/jobs", { type: "send_email", payload: { to: "ada@example.com", subject: "Export ready", body: BODY } });
    expect(created.status).toBe(202);

    const job = await stack.waitForJob(created.body.id, terminal);
    expect(job).toMatchObject({ status: "done", retries: 0, error: null, result: { provider: "resend", message_id: fake.sent[0]!.id, to: "ada@example.com" } });
    expect(fake.requests).toHaveLength(1);
    expect(fake.lastRequest().headers["idempotency-key"]).toBe(job.id);

    const lines = attemptLines(await stack.logs(job.id), 1);
    expect(lines).toContain("Sending via Resend to a***@example.com from noreply@conveyor.test");
    expect(lines).toContain(`Resend accepted message ${fake.sent[0]!.id}`);
  });

  it("retries a rate-limited send after Retry-After with the same Idempotency-Key, and sends once", async () => {
    fake.replyNext({
      ...resendError(429, "rate_limit_exceeded", "Too many requests. You can only make 2 requests per second."),
      headers: { "retry-after": "1" },
    });
    const created = await stack.post("/jobs", { type: "send_email", payload: { to: "ada@example.com", subject: "Export ready", body: BODY }, max_retries: 2 });

    const job = await stack.waitForJob(created.body.id, terminal);
    expect(job).toMatchObject({ status: "done", retries: 1, error: null });
    expect(fake.requests.map((r) => r.headers["idempotency-key"])).toEqual([job.id, job.id]);
    expect(fake.sent).toHaveLength(1);

    const logs = await stack.logs(job.id);
    expect(starts(logs)).toBe(2);
    expect(attemptLines(logs, 1)).toContainEqual(
      expect.stringMatching(/^Attempt 1 failed: Resend answered 429 rate_limit_exceeded: Too many requests\..* Retry 1 of 2 at /),
    );
  });

  it("fails a provider refusal at once, without consuming retries, with the provider's reason as the job error", async () => {
    fake.replyNext(resendError(422, "validation_error", "The noreply@conveyor.test domain is not verified."));
    const created = await stack.post("/jobs", { type: "send_email", payload: { to: "ada@example.com", subject: "Export ready", body: BODY }, max_retries: 3 });

    const job = await stack.waitForJob(created.body.id, terminal);
    expect(job).toMatchObject({
      status: "failed",
      retries: 0,
      error: "Resend answered 422 validation_error: The noreply@conveyor.test domain is not verified.",
    });
    expect(starts(await stack.logs(job.id))).toBe(1);
  });

  it("keeps the key and the body out of job logs and the worker's output", async () => {
    const created = await stack.post("/jobs", { type: "send_email", payload: { to: "ada@example.com", subject: "Export ready", body: BODY } });
    const job = await stack.waitForJob(created.body.id, terminal);
    const logs = (await stack.logs(job.id)).map((l) => l.message).join("\n");
    const output = stack.workers.map((w) => w.output()).join("\n");
    for (const text of [logs, output]) {
      expect(text).not.toContain(RESEND_TEST_KEY);
      expect(text).not.toContain(BODY);
    }
  });
});
