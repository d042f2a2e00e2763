// Dependencies when things break (docs/reference/robustness.md#r42, docs/reference/robustness.md#r43): a worker SIGKILLed while a dependency runs, and a Redis
// FLUSHALL while a graph is half done, on a private Redis that may be wiped. Postgres decides what waits and what is
// due, so neither loses a dependent nor runs one twice or before its dependencies.
import { Redis } from "ioredis";
import { startPrivateRedis, waitFor, type PrivateRedis } from "@conveyor/testkit";
import { ScriptedLog, startStack, type Stack } from "@conveyor/api/testing/stack";

jest.setTimeout(180_000);

let redis: PrivateRedis;
let stack: Stack;
let log: ScriptedLog;

beforeAll(async () => {
  log = new ScriptedLog("deps-faults");
  redis = await startPrivateRedis();
  stack = await startStack({
    apiEnv: { REDIS_URL: redis.url },
    workerEnv: { SCRIPTED_MARKER_FILE: log.file, WORKER_TYPES: "scripted", WORKER_CONCURRENCY: "8" },
  });
  await stack.startWorker();
  await stack.startWorker();
});
afterEach(() => stack.expectOtherOrgUntouched());
afterAll(async () => {
  await stack?.close();
  await redis?.stop();
});

const final = (id: string) => stack.waitForJob(id, (job) => ["done", "failed", "cancelled"].includes(job.status), 90_000);

it("a worker SIGKILLed while a dependency runs: the dependency is taken over, and the dependent runs once, after it", async () => {
  const res = await stack.post("/jobs/batch", {
    jobs: [
      { ref: "slow", type: "scripted", payload: { sleep_ms: 2500, span: "kill-dep", marker: "kill-dep" } },
      { type: "scripted", depends_on: ["slow"], payload: { span: "kill-child", marker: "kill-child" } },
    ],
  });
  expect(res.status).toBe(202);
  const [dependency, dependent] = res.body as { id: string }[];
  await waitFor(async () => log.runs("kill-dep")[0]?.pid ?? null, "the dependency running", 30_000, 20);
  const victim = stack.workers.find((w) => w.pid === log.runs("kill-dep")[0]!.pid)!;
  await victim.stop("SIGKILL");
  await stack.startWorker();
  expect((await final(dependent!.id)).status).toBe("done");
  expect((await stack.job(dependency!.id)).status).toBe("done");
  const dep = log.runs("kill-dep");
  const child = log.runs("kill-child");
  // The lost attempt, then the take-over; the dependent once, after the take-over finished.
  expect(dep).toHaveLength(2);
  expect(dep[0]!.end).toBeNull();
  expect(child).toHaveLength(1);
  expect(child[0]!.start).toBeGreaterThanOrEqual(dep[1]!.end!);
});

it("a Redis FLUSHALL while a graph is half done: every job still runs, each after its dependencies", async () => {
  // Five chains of six, each link 150 ms, and one job at the end waiting for all five.
  const jobs: object[] = [];
  for (let c = 0; c < 5; c++) {
    for (let l = 0; l < 6; l++) {
      jobs.push({
        ref: `c${c}l${l}`,
        type: "scripted",
        payload: { sleep_ms: 150, span: `flush-c${c}l${l}` },
        ...(l ? { depends_on: [`c${c}l${l - 1}`] } : {}),
      });
    }
  }
  jobs.push({ type: "scripted", payload: { span: "flush-end" }, depends_on: [0, 1, 2, 3, 4].map((c) => `c${c}l5`) });
  const res = await stack.post("/jobs/batch", { jobs });
  expect(res.status).toBe(202);
  const ids = (res.body as { id: string }[]).map((j) => j.id);
  await waitFor(async () => (log.runs("flush-").filter((r) => r.end !== null).length >= 8 ? true : null), "a third of the graph done", 30_000, 20);
  const admin = new Redis(redis.url);
  await admin.flushall();
  admin.disconnect();
  const finished = await Promise.all(ids.map(final));
  expect(finished.every((j) => j.status === "done")).toBe(true);
  const all = log.runs("flush-");
  const spans = new Map<string, { start: number; end: number | null }[]>();
  for (const run of all) spans.set(run.span, [...(spans.get(run.span) ?? []), run]);
  expect(spans.size).toBe(31);
  // At least once (docs/reference/lifecycle.md#lifecycle): the sweep that refills a wiped Redis may hand over again a job whose attempt ended but
  // whose outcome was not written yet. What dependencies add is the order: never before a dependency finished.
  const firstEnd = (span: string) => Math.min(...spans.get(span)!.flatMap((r) => (r.end === null ? [] : [r.end])));
  const firstStart = (span: string) => spans.get(span)![0]!.start;
  for (let c = 0; c < 5; c++) {
    for (let l = 1; l < 6; l++) expect(firstStart(`flush-c${c}l${l}`)).toBeGreaterThanOrEqual(firstEnd(`flush-c${c}l${l - 1}`));
    expect(firstStart("flush-end")).toBeGreaterThanOrEqual(firstEnd(`flush-c${c}l5`));
  }
});
