// GET /jobs/{id}/attempts end to end (issue 23, attempt timing): the real API, Postgres, Redis and a worker process.
// Each attempt says when it became due, started and finished, how long it waited and ran, and how it ended — a
// failed attempt that was retried is `retried` with its error, not a success; a dependent is due when its
// dependency finished; a job cancelled before it ran has no attempt; another org's job is a 404.
import type { JobAttempt } from "@conveyor/db";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

jest.setTimeout(120_000);

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
  await stack.startWorker();
});
afterEach(() => stack?.expectOtherOrgUntouched());
afterAll(() => stack?.close());

const attempts = async (id: string, key = stack.apiKey) => {
  const res = await stack.api.request.get(`/jobs/${id}/attempts`).set("X-API-Key", key);
  return { status: res.status, body: res.body as JobAttempt[] };
};
const enqueue = async (body: object) => {
  const res = await stack.post("/jobs", body);
  if (res.status !== 202) throw new Error(`POST /jobs: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
};
const time = (iso: string | null) => new Date(iso!).getTime();

describe("GET /jobs/{id}/attempts", () => {
  it("gives each attempt's due, start and finish times, its wait and duration, and a retried failure as retried", async () => {
    const before = Date.now();
    const id = await enqueue({ type: "scripted", payload: { fail_until: 1, sleep_ms: 300 }, max_retries: 1 });
    await stack.waitForJob(id, (job) => job.status === "done");
    const { status, body } = await attempts(id);
    expect(status).toBe(200);
    expect(body.map((a) => [a.attempt, a.outcome])).toEqual([
      [1, "retried"],
      [2, "succeeded"],
    ]);
    expect(body[0]!.error).toBe("scripted failure on attempt 1");
    expect(body[1]!.error).toBeNull();
    for (const a of body) {
      for (const at of [a.queued_at, a.started_at, a.finished_at]) expect(at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(time(a.queued_at)).toBeLessThanOrEqual(time(a.started_at));
      expect(time(a.started_at)).toBeLessThanOrEqual(time(a.finished_at));
      expect(a.wait_ms).toBe(time(a.started_at) - time(a.queued_at));
      expect(a.duration_ms).toBe(time(a.finished_at) - time(a.started_at));
      // The handler slept 300 ms in each attempt: a lower bound, never a speed limit.
      expect(a.duration_ms).toBeGreaterThanOrEqual(300);
    }
    // The first attempt was due when the job was stored (Postgres' clock, on this machine; the test API's own clock
    // stands still); the retry when the backoff after the failure ended.
    const created = await stack.api.database.db.pool.query<{ time: Date }>("SELECT time FROM events WHERE job_id = $1 AND type = 'job.created'", [id]);
    expect(time(body[0]!.queued_at)).toBe(created.rows[0]!.time.getTime());
    expect(time(body[0]!.queued_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(time(body[1]!.queued_at)).toBeGreaterThanOrEqual(time(body[0]!.finished_at));
    // The same attempts as the log's lifecycle lines.
    const starts = (await stack.logs(id)).filter((line) => /^Attempt \d+ of \d+ started\.$/.test(line.message));
    expect(starts.map((line) => line.timestamp)).toEqual(body.map((a) => a.started_at));
  });

  it("shows a running attempt with no finish, and how a cancelled and a failed attempt ended", async () => {
    const running = await enqueue({ type: "scripted", payload: { sleep_ms: 20_000 } });
    await stack.waitForJob(running, (job) => job.status === "processing");
    const now = (await attempts(running)).body;
    expect(now).toEqual([expect.objectContaining({ attempt: 1, outcome: "running", finished_at: null, duration_ms: null, error: null })]);
    await stack.api.request.post(`/jobs/${running}/cancel`).set("X-API-Key", stack.apiKey).expect(200);
    await stack.waitForJob(running, (job) => job.status === "cancelled");
    const [cancelled] = (await attempts(running)).body;
    expect(cancelled).toMatchObject({ attempt: 1, outcome: "cancelled", error: null });
    expect(time(cancelled!.finished_at)).toBeGreaterThanOrEqual(time(cancelled!.started_at));

    const failed = await enqueue({ type: "scripted", payload: { permanent: true }, max_retries: 3 });
    await stack.waitForJob(failed, (job) => job.status === "failed");
    const { body } = await attempts(failed);
    expect(body).toHaveLength(1);
    expect(body[0]).toMatchObject({ attempt: 1, outcome: "failed" });
    expect(body[0]!.error).toEqual((await stack.job(failed)).error);
  });

  it("has no attempt for a job cancelled before it ran", async () => {
    const id = await enqueue({ type: "scripted", payload: {}, run_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await attempts(id)).body).toEqual([]);
    await stack.api.request.post(`/jobs/${id}/cancel`).set("X-API-Key", stack.apiKey).expect(200);
    const { status, body } = await attempts(id);
    expect(status).toBe(200);
    expect(body).toEqual([]);
  });

  it("makes a dependent due when its last dependency finished, not when it was created", async () => {
    const res = await stack.post("/jobs/batch", {
      jobs: [
        { ref: "first", type: "scripted", payload: { sleep_ms: 400 } },
        { ref: "then", type: "scripted", payload: {}, depends_on: ["first"] },
      ],
    });
    expect(res.status).toBe(202);
    const [first, then] = (res.body as { id: string }[]).map((item) => item.id);
    await stack.waitForJob(then!, (job) => job.status === "done");
    const [dependency] = (await attempts(first!)).body;
    const [dependent] = (await attempts(then!)).body;
    const dependencyJob = await stack.job(first!);
    expect(time(dependent!.queued_at)).toBeGreaterThanOrEqual(time(dependency!.finished_at));
    const created = await stack.api.database.db.pool.query<{ time: Date }>("SELECT time FROM events WHERE job_id = $1 AND type = 'job.created'", [then]);
    expect(time(dependent!.queued_at)).toBeGreaterThan(created.rows[0]!.time.getTime());
    expect(time(dependent!.queued_at)).toBeLessThanOrEqual(time(dependent!.started_at));
    expect(dependencyJob.status).toBe("done");
  });

  it("answers 404 for another organization's job, an unknown id and a malformed one, in the error shape", async () => {
    for (const id of [stack.otherOrg.jobId, "00000000-0000-7000-8000-000000000000", "not-a-job"]) {
      const res = await stack.api.request.get(`/jobs/${id}/attempts`).set("X-API-Key", stack.apiKey);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: "not_found" });
    }
    expect((await stack.api.request.get(`/jobs/${stack.otherOrg.jobId}/attempts`)).status).toBe(401);
  });
});
