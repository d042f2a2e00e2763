// Cancelling jobs (docs/reference/lifecycle.md#steering, docs/reference/robustness.md#r33) through the real API and worker processes: a pending job (waiting,
// delayed, or waiting for a retry) never runs; a running job's signal aborts within 2 s on the worker that runs
// it; a cancel racing a success, a failure, a retry or a worker's SIGKILL leaves exactly one final state; a
// cancelled job never starts afterwards, not after a Redis FLUSHALL either.
import { Redis } from "ioredis";
import { startPrivateRedis, waitFor, type PrivateRedis } from "@conveyor/testkit";
import { addMember } from "@conveyor/api/testing";
import { ScriptedLog, startStack, type JobView, type Stack } from "@conveyor/api/testing/stack";

type Job = JobView & { cancel_requested_at: string | null };

let stack: Stack;
let log: ScriptedLog;
// A private Redis: one test wipes it (FLUSHALL), and the machine's shared Redis must never be wiped.
let redisServer: PrivateRedis;
beforeAll(async () => {
  redisServer = await startPrivateRedis();
  log = new ScriptedLog("cancel");
  stack = await startStack({ apiEnv: { REDIS_URL: redisServer.url }, workerEnv: { WORKER_TYPES: "scripted,word_count", SCRIPTED_MARKER_FILE: log.file } });
  await stack.startWorker();
}, 60_000);
afterEach(() => stack.expectOtherOrgUntouched());
afterAll(async () => {
  await stack.close();
  await redisServer.stop();
});

const cancel = (id: string, headers: Record<string, string> = {}) => stack.post(`/jobs/${id}/cancel`, {}, headers);
const final = (job: { status: string }) => ["done", "failed", "cancelled"].includes(job.status);

/**
 * Runs a job due at `dueAt` and waits until it is done. By then the dispatcher has handed over every job of the
 * type that was due before it, so a job that has not run by then was not going to run in that time.
 */
async function witness(dueAt: Date, marker: string): Promise<void> {
  const created = await stack.post("/jobs", { type: "scripted", payload: { marker }, run_at: dueAt.toISOString() });
  expect(created.status).toBe(202);
  await stack.waitForJob(created.body.id, (j) => j.status === "done", 20_000);
  expect(log.runsOf(marker)).toBe(1);
}

async function whenProcessing(id: string): Promise<void> {
  await stack.waitForJob(id, (j) => j.status === "processing", 15_000);
  // The handler has started (its first log line) before we cancel it.
  await waitFor(async () => (await stack.logs(id)).some((l) => l.message.startsWith("scripted attempt")), "the handler running", 10_000, 50);
}

describe("cancelling a pending job", () => {
  it("cancels a delayed job at once; it never runs, not after a Redis FLUSHALL either", async () => {
    const runAt = new Date(Date.now() + 2_000);
    const created = await stack.post("/jobs", { type: "scripted", payload: { marker: "delayed" }, run_at: runAt.toISOString() });
    const res = await cancel(created.body.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.body.id, status: "cancelled", cancel_requested_at: null });
    const logs = await stack.logs(created.body.id);
    expect(logs.map((l) => l.message)).toEqual([expect.stringMatching(/^Cancelled by API key "test key" \(cvk_\w{4}…\) before it started\.$/)]);

    const redis = new Redis(stack.redisUrl);
    try {
      await redis.flushall();
    } finally {
      redis.disconnect();
    }
    // After a full reconciler sweep of the wiped Redis (it sets its sentinel key back when done) and past its run_at
    // (a job due after it has run), it still has not run.
    await waitFor(
      async () => {
        const redis = new Redis(stack.redisUrl);
        try {
          return (await redis.exists(`${stack.prefix}:reconciler:sentinel`)) === 1;
        } finally {
          redis.disconnect();
        }
      },
      "a reconciler sweep after the FLUSHALL",
      10_000,
      100,
    );
    await witness(new Date(runAt.getTime() + 500), "after-delayed");
    expect((await stack.job(created.body.id)).status).toBe("cancelled");
    expect(log.runsOf("delayed")).toBe(0);
    const queued = await stack.api.database.db.pool.query("SELECT 1 FROM job_queue WHERE job_id = $1", [created.body.id]);
    expect(queued.rowCount).toBe(0);
  }, 30_000);

  it("cancels a job waiting for its retry: the next attempt never starts", async () => {
    // Only a worker whose retries wait 20 s runs it, so the retry is surely still waiting when we cancel.
    await Promise.all(stack.workers.map((w) => w.stop()));
    const slowRetries = await stack.startWorker({ WORKER_TYPES: "scripted", RETRY_BASE_MS: "20000" });
    const created = await stack.post("/jobs", { type: "scripted", payload: { fail_until: 5, marker: "retrying" }, max_retries: 3 });
    const waiting = await stack.waitForJob(created.body.id, (j) => j.retries === 1 && j.status === "pending", 15_000);
    expect((waiting as unknown as Job).cancel_requested_at).toBeNull();
    const res = await cancel(created.body.id);
    expect(res.body).toMatchObject({ status: "cancelled", retries: 1 });
    expect((await stack.logs(created.body.id)).at(-1)!.message).toMatch(/^Cancelled by .* before its next attempt\.$/);
    await slowRetries.stop();
    expect(log.runsOf("retrying")).toBe(1);
    await stack.startWorker();
  }, 40_000);
});

describe("cancelling a running job", () => {
  it("aborts the attempt's signal within 2 s and records the job cancelled, naming who asked", async () => {
    const member = await addMember(stack.api.database.db, stack.api.deps.config, stack.owner.orgId, "member");
    const created = await stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 60_000 } });
    await whenProcessing(created.body.id);
    const asked = Date.now();
    const res = await cancel(created.body.id, { Authorization: `Bearer ${member.token}` });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "processing", cancel_requested_at: expect.stringMatching(/Z$/) });
    const job = await stack.waitForJob(created.body.id, final, 5_000);
    expect(Date.now() - asked).toBeLessThan(2_500);
    expect(job).toMatchObject({ status: "cancelled", error: "The job was cancelled by a user." });
    const messages = (await stack.logs(created.body.id)).map((l) => l.message);
    expect(messages).toContain(`Cancellation requested by ${member.email}: stopping attempt 1.`);
    expect(messages).toContain("Attempt 1 stopped: The job was cancelled by a user.");
    // Cancelling again is a conflict: the job is final.
    const again = await cancel(created.body.id);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("job_finished");
  }, 30_000);

  it("finds the request in Postgres when the Redis message never comes", async () => {
    const created = await stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 60_000 } });
    await whenProcessing(created.body.id);
    // A cancellation recorded without a message (as when Redis was away at that moment).
    await stack.api.database.db.pool.query("UPDATE jobs SET cancel_requested_at = now() WHERE id = $1", [created.body.id]);
    const job = await stack.waitForJob(created.body.id, final, 5_000);
    expect(job.status).toBe("cancelled");
  }, 30_000);

  it("lets the truth win: a handler that finishes anyway ends done", async () => {
    const created = await stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 1_500, ignore_abort: true } });
    await whenProcessing(created.body.id);
    await cancel(created.body.id);
    const job = await stack.waitForJob(created.body.id, final, 10_000);
    expect(job.status).toBe("done");
  }, 30_000);

  it("lets the truth win: a handler that fails permanently anyway ends failed", async () => {
    const created = await stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 1_500, ignore_abort: true, permanent: true } });
    await whenProcessing(created.body.id);
    await cancel(created.body.id);
    expect((await stack.waitForJob(created.body.id, final, 10_000)).status).toBe("failed");
  }, 30_000);

  it("never retries a job someone cancelled: a retryable failure after the request ends cancelled", async () => {
    const created = await stack.post("/jobs", {
      type: "scripted",
      payload: { sleep_ms: 1_500, ignore_abort: true, fail_until: 5, marker: "no-retry" },
      max_retries: 3,
    });
    await whenProcessing(created.body.id);
    await cancel(created.body.id);
    const job = await stack.waitForJob(created.body.id, final, 10_000);
    // The attempt that failed is the one that was cancelled: no retry was used.
    expect(job).toMatchObject({ status: "cancelled", retries: 0 });
    // A retry would have been due within RETRY_BASE_MS × 1.2 (120 ms) of the failure; a job due 1 s after it has run.
    await witness(new Date(Date.now() + 1_000), "after-no-retry");
    expect(log.runsOf("no-retry")).toBe(1);
  }, 30_000);

  it("cancels, and does not run again, a job whose worker is killed after the request", async () => {
    const victim = await stack.startWorker({ WORKER_TYPES: "scripted", WORKER_LOCK_MS: "2000" });
    const survivors = stack.workers.filter((w) => w !== victim);
    await Promise.all(survivors.map((w) => w.stop()));
    const created = await stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 60_000, ignore_abort: true, marker: "killed" } });
    await whenProcessing(created.body.id);
    await cancel(created.body.id);
    await victim.stop("SIGKILL");
    await stack.startWorker({ WORKER_TYPES: "scripted,word_count", WORKER_LOCK_MS: "2000" });
    const job = await stack.waitForJob(created.body.id, final, 30_000);
    expect(job.status).toBe("cancelled");
    expect(log.runsOf("killed")).toBe(1);
    expect((await stack.logs(created.body.id)).map((l) => l.message)).toContain(
      "Attempt 1 was interrupted after a cancellation was requested: the job is cancelled.",
    );
  }, 60_000);
});

describe("refusals", () => {
  it("answers another org's job like a random or malformed id: 404", async () => {
    for (const id of [stack.otherOrg.jobId, "0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01", "not-a-uuid"]) {
      const res = await cancel(id);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
  });

  it("answers a finished job with 409 job_finished", async () => {
    const created = await stack.post("/jobs", { type: "word_count", payload: { text: "done soon" } });
    await stack.waitForJob(created.body.id, final, 15_000);
    const res = await cancel(created.body.id);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: "job_finished", message: expect.stringMatching(/already done/) });
  }, 30_000);
});
