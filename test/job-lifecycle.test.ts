// Jobs end to end through the real API, Redis, Postgres and worker processes (docs/reference/lifecycle.md#lifecycle).
import { attemptLines, startStack, starts, type Stack } from "@conveyor/api/testing/stack";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
  await stack.startWorker();
});
afterEach(() => stack.expectOtherOrgUntouched());
afterAll(() => stack.close());

const terminal = (job: { status: string }) => job.status === "done" || job.status === "failed";

describe("job lifecycle", () => {
  it("takes a job from pending to done, storing its result and per-attempt logs", async () => {
    const created = await stack.post("/jobs", { type: "word_count", payload: { text: "to be or not to be" } });
    expect(created.status).toBe(202);
    expect(created.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: "pending" });

    const job = await stack.waitForJob(created.body.id, terminal);
    expect(job).toMatchObject({
      id: created.body.id,
      type: "word_count",
      status: "done",
      payload: { text: "to be or not to be" },
      retries: 0,
      max_retries: 0,
      result: { words: 6, characters: 18, most_frequent: { word: "to", count: 2 } },
      error: null,
    });
    expect(Date.parse(job.updated_at)).toBeGreaterThanOrEqual(Date.parse(job.created_at));
    // When its attempt started and when it finished (what the console's Duration column reads), in order.
    expect(Date.parse(job.started_at!)).toBeGreaterThanOrEqual(Date.parse(job.created_at));
    expect(Date.parse(job.finished_at!)).toBeGreaterThanOrEqual(Date.parse(job.started_at!));

    const logs = await stack.logs(job.id);
    expect(logs.map((l) => l.attempt)).toEqual(logs.map(() => 1));
    expect(logs[0]).toMatchObject({ attempt: 1, level: "info", message: "Attempt 1 of 1 started." });
    expect(logs.map((l) => l.message)).toContain("Counted 6 words (attempt 1).");
    expect(logs.at(-1)!.message).toMatch(/^Attempt 1 succeeded in \d+ ms\.$/);
    for (const line of logs) expect(line.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("shows the job as processing while its handler runs", async () => {
    const { body } = await stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 1500 } });
    const running = await stack.waitForJob(body.id, (j) => j.status !== "pending");
    expect(running.status).toBe("processing");
    expect((await stack.waitForJob(body.id, terminal)).status).toBe("done");
  });

  it.each([
    { maxRetries: 0, failUntil: 5, status: "failed", retries: 0, attempts: 1 },
    { maxRetries: 1, failUntil: 5, status: "failed", retries: 1, attempts: 2 },
    { maxRetries: 3, failUntil: 5, status: "failed", retries: 3, attempts: 4 },
    { maxRetries: 3, failUntil: 2, status: "done", retries: 2, attempts: 3 },
  ])(
    "with max_retries $maxRetries and failures until attempt $failUntil ends $status with retries $retries after $attempts attempts",
    async ({ maxRetries, failUntil, status, retries, attempts }) => {
      const { body } = await stack.post("/jobs", { type: "scripted", payload: { fail_until: failUntil }, max_retries: maxRetries });
      const job = await stack.waitForJob(body.id, terminal);
      expect(job.status).toBe(status);
      expect(job.retries).toBe(retries);
      expect(job.max_retries).toBe(maxRetries);
      expect(job.error).toBe(status === "failed" ? `scripted failure on attempt ${attempts}` : null);

      const logs = await stack.logs(job.id);
      expect([...new Set(logs.map((l) => l.attempt))]).toEqual(Array.from({ length: attempts }, (_, i) => i + 1));
      expect(starts(logs)).toBe(attempts);
      for (let n = 1; n < attempts; n++) {
        expect(attemptLines(logs, n)).toContainEqual(
          expect.stringMatching(new RegExp(`^Attempt ${n} failed: scripted failure on attempt ${n}\\. Retry ${n} of ${maxRetries} at \\S+Z`)),
        );
      }
      const last = attemptLines(logs, attempts);
      if (status === "failed")
        expect(last).toContainEqual(expect.stringMatching(new RegExp(`^Attempt ${attempts} failed; no retries left \\(max_retries ${maxRetries}\\)`)));
      else expect(last).toContainEqual(expect.stringMatching(new RegExp(`^Attempt ${attempts} succeeded`)));
    },
  );

  it("fails a permanent failure at once, without consuming retries", async () => {
    const { body } = await stack.post("/jobs", { type: "scripted", payload: { permanent: true }, max_retries: 5 });
    const job = await stack.waitForJob(body.id, terminal);
    expect(job).toMatchObject({ status: "failed", retries: 0, max_retries: 5, error: "scripted permanent failure" });
    const logs = await stack.logs(job.id);
    expect(starts(logs)).toBe(1);
    expect(logs.at(-1)).toMatchObject({ attempt: 1, level: "error", message: "Attempt 1 failed permanently: scripted permanent failure" });
  });

  it("fails a built-in job permanently, naming the setting, when its handler is not configured", async () => {
    const { body } = await stack.post("/jobs", { type: "chat_notify", payload: { channel: "#ops", text: "deploy done" }, max_retries: 3 });
    const job = await stack.waitForJob(body.id, terminal);
    expect(job.status).toBe("failed");
    expect(job.retries).toBe(0);
    expect(job.error).toMatch(/CHAT_WEBHOOK_URL|not implemented/);
  });

  it("keeps a job of a type no live worker serves pending, visibly", async () => {
    const { body } = await stack.post("/jobs", { type: "word_count", payload: { text: "later" } });
    // A plugin type that was registered once, but whose worker is gone.
    await stack.api.database.db.pool.query("INSERT INTO job_types (name) VALUES ('nobody_serves_this') ON CONFLICT DO NOTHING");
    const orphan = await stack.post("/jobs", { type: "nobody_serves_this", payload: {} });
    expect(orphan.status).toBe(202);
    await stack.waitForJob(body.id, terminal);
    const still = await stack.job(orphan.body.id);
    expect(still.status).toBe("pending");
    expect(await stack.logs(orphan.body.id)).toEqual([]);
  });

  it("runs the jobs of a batch", async () => {
    const res = await stack.post("/jobs/batch", { jobs: Array.from({ length: 25 }, (_, i) => ({ type: "word_count", payload: { text: `job ${i}` } })) });
    expect(res.status).toBe(202);
    expect(res.body).toHaveLength(25);
    for (const { id } of res.body) expect((await stack.waitForJob(id, terminal)).status).toBe("done");
  });
});
