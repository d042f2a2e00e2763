// Flow control when things break (docs/reference/robustness.md#r40, docs/reference/robustness.md#r41): a concurrency key through a worker's SIGKILL and a Redis
// FLUSHALL, and a rate limit through the leader's SIGKILL mid-window, on a private Redis that may be wiped.
import { Redis } from "ioredis";
import { startPrivateRedis, waitFor, type PrivateRedis } from "@conveyor/testkit";
import { ScriptedLog, startStack, type SpanRun, type Stack } from "@conveyor/api/testing/stack";

jest.setTimeout(180_000);

let redis: PrivateRedis;
let stack: Stack;
let log: ScriptedLog;

beforeAll(async () => {
  log = new ScriptedLog("flow-faults");
  redis = await startPrivateRedis();
  stack = await startStack({
    apiEnv: { REDIS_URL: redis.url },
    workerEnv: { SCRIPTED_MARKER_FILE: log.file, WORKER_TYPES: "scripted", WORKER_CONCURRENCY: "4" },
  });
  await stack.startWorker();
  await stack.startWorker();
});
afterEach(() => stack.expectOtherOrgUntouched());
afterAll(async () => {
  await stack?.close();
  await redis?.stop();
});

/** No two executions overlap, counting a killed one as running until the next execution of anything started. */
function neverTwoAtOnce(all: SpanRun[]): void {
  const sorted = [...all].sort((a, b) => a.start - b.start);
  for (let i = 1; i < sorted.length; i++) {
    const previous = sorted[i - 1]!;
    // A killed execution stopped somewhere before the next one of its key could start: that is what is checked.
    if (previous.end !== null) expect(sorted[i]!.start).toBeGreaterThanOrEqual(previous.end);
  }
}

const post = async (body: Record<string, unknown>) => {
  const res = await stack.post("/jobs", { type: "scripted", ...body });
  expect(res.status).toBe(202);
  return res.body.id as string;
};
const done = (id: string) => stack.waitForJob(id, (job) => ["done", "failed", "cancelled"].includes(job.status), 90_000);

it("H41: keeps a key with limit 1 to one attempt at a time through a worker's SIGKILL: the next waits for the lost attempt", async () => {
  const first = await post({ payload: { sleep_ms: 2000, span: "kill-a", marker: "kill-a" }, concurrency_key: "device:9" });
  const second = await post({ payload: { sleep_ms: 100, span: "kill-b", marker: "kill-b" }, concurrency_key: "device:9" });
  await waitFor(async () => log.runs("kill-a")[0]?.pid ?? null, "the first attempt running", 30_000, 20);
  const victim = stack.workers.find((w) => w.pid === log.runs("kill-a")[0]!.pid)!;
  await victim.stop("SIGKILL");
  await stack.startWorker();
  const [a, b] = await Promise.all([done(first), done(second)]);
  expect([a.status, b.status]).toEqual(["done", "done"]);
  const all = [...log.runs("kill-a"), ...log.runs("kill-b")];
  // The first ran twice (the lost attempt, then its take-over once its lock expired); the second only after it.
  expect(log.runs("kill-a")).toHaveLength(2);
  expect(log.runs("kill-b")[0]!.start).toBeGreaterThanOrEqual(log.runs("kill-a")[1]!.end!);
  neverTwoAtOnce(all);
});

it("H41: keeps a key with limit 1 to one attempt at a time across a Redis FLUSHALL", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) ids.push(await post({ payload: { sleep_ms: 400, span: `flush-${i}` }, concurrency_key: "device:10" }));
  await waitFor(async () => (log.runs("flush-").length >= 1 ? true : null), "one running", 30_000, 20);
  const admin = new Redis(redis.url);
  await admin.flushall();
  admin.disconnect();
  const jobs = await Promise.all(ids.map(done));
  expect(jobs.every((j) => j.status === "done")).toBe(true);
  neverTwoAtOnce(log.runs("flush-"));
});

it("H40: never exceeds a rate limit in any window when the leader is SIGKILLed mid-window, and every job still runs", async () => {
  const put = await stack.api.request
    .put("/rate-limits/four")
    .set({ Authorization: `Bearer ${stack.owner.token}` })
    .send({ limit: 4, period: "second" });
  expect(put.status).toBe(200);
  await stack.startWorker();
  const batch = await stack.post("/jobs/batch", {
    jobs: Array.from({ length: 16 }, (_, i) => ({ type: "scripted", payload: { span: `lead-${i}` }, rate_limit: "four" })),
  });
  expect(batch.status).toBe(202);
  await waitFor(async () => (log.runs("lead-").length >= 4 ? true : null), "the first window", 30_000, 20);
  const leader = stack.workers.find(
    (w) => w.child.exitCode === null && w.child.signalCode === null && /became the leader/.test(w.output()) && !/no longer the leader/.test(w.output()),
  );
  await leader?.stop("SIGKILL");
  const jobs = await Promise.all(batch.body.map((job: { id: string }) => done(job.id)));
  expect(jobs.every((j) => j.status === "done")).toBe(true);
  expect(new Set(log.runs("lead-").map((r) => r.span)).size).toBe(16);
  // A job starts when its claim commits it (its job.started event, a take-over's included): that is what the window counts.
  const { rows } = await stack.api.database.db.pool.query<{ time: Date }>("SELECT time FROM events WHERE job_id = ANY($1::uuid[]) AND type = 'job.started'", [
    batch.body.map((job: { id: string }) => job.id),
  ]);
  const starts = rows.map((r) => r.time.getTime());
  for (const from of starts) expect(starts.filter((t) => t >= from && t < from + 1000).length).toBeLessThanOrEqual(4);
});
