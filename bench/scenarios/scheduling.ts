// Time, priority and fairness (issue 15), each beside what a raw BullMQ queue does with the same load:
//   noisy neighbour — org A queues 20,000 jobs of 20 ms, WORKER_CONCURRENCY=10, then org B queues 10: B's p99 from
//     enqueue to done (first-in-first-out makes B wait for A's whole backlog, about 40 s);
//   due on time — 10,000 jobs with the same run_at: p99 of their start's lateness;
//   priority — a backlog of 10,000 priority-1 jobs of 20 ms, then one of priority 10: how long it waits to start.
// Jobs are created with the API's own insert (packages/db insertJobs), so the worker's dispatcher does the rest.
import { insertJobs, newId, type NewJob } from "@conveyor/db";
import { freePort } from "@conveyor/testkit";
import { run, sleep, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";

const SLEEP_PLUGIN = "bench/plugins/sleep20.js";
const NOOP_PLUGIN = "bench/plugins/noop.js";

export const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)]!;

export async function create(env: BenchEnv, count: number, fields: Partial<NewJob> & { type: string; orgId?: string }): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1000) {
    const now = new Date();
    const jobs = Array.from({ length: Math.min(1000, count - i) }, () => ({
      id: newId(),
      orgId: env.orgId,
      payloadJson: "{}",
      maxRetries: 0,
      createdAt: now,
      ...fields,
    }));
    await insertJobs(env.db.pool, jobs);
    ids.push(...jobs.map((j) => j.id));
  }
  return ids;
}

export async function otherOrg(env: BenchEnv): Promise<string> {
  const id = newId();
  await env.db.pool.query("INSERT INTO organizations (id, name) VALUES ($1, 'Bench neighbour')", [id]);
  return id;
}

export async function startWorkers(env: BenchEnv, port: number, count: number, extra: Record<string, string>): Promise<Child[]> {
  const ports = [port, ...(await Promise.all(Array.from({ length: count - 1 }, () => freePort())))];
  const workers = ports.map((p) => run("apps/worker/src/main.ts", conveyorEnv(env, { ...extra, WORKER_METRICS_PORT: String(p) })));
  for (const p of ports) await waitForHttp(`http://127.0.0.1:${p}/healthz`);
  // One of them leads (dispatches) within a lease.
  await sleep(1_500);
  return workers;
}

async function finished(env: BenchEnv, ids: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await env.db.pool.query<{ n: string }>("SELECT count(*) AS n FROM jobs WHERE id = ANY($1::uuid[]) AND status <> 'done'", [ids]);
    if (rows[0]!.n === "0") return;
    if (Date.now() > deadline) throw new Error(`${rows[0]!.n} of ${ids.length} jobs not done after ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** When each job's first attempt started (its job.started event), by id. */
export async function startedAt(env: BenchEnv, ids: string[]): Promise<Map<string, number>> {
  const { rows } = await env.db.pool.query<{ job_id: string; at: Date }>(
    "SELECT job_id, min(time) AS at FROM events WHERE job_id = ANY($1::uuid[]) AND type = 'job.started' GROUP BY job_id",
    [ids],
  );
  return new Map(rows.map((r) => [r.job_id, r.at.getTime()]));
}

async function baseline(env: BenchEnv, scenario: string, jobs: number, concurrency: number): Promise<number> {
  const result = (await run("bench/baselines/bullmq-scheduling.ts", {
    REDIS_URL: env.redisUrl,
    PREFIX: `${env.prefix}-base`,
    SCENARIO: scenario,
    JOBS: String(jobs),
    CONCURRENCY: String(concurrency),
  }).result) as { p99_ms: number };
  return result.p99_ms;
}

export async function noisyNeighbour(env: BenchEnv, port: number, backlog = 20_000): Promise<Row[]> {
  const fifo = await baseline(env, "noisy", backlog, 10);
  let workers: Child[] = [];
  try {
    workers = await startWorkers(env, port, 1, { WORKER_TYPES: "bench_sleep", WORKER_PLUGINS: SLEEP_PLUGIN, WORKER_CONCURRENCY: "10" });
    await create(env, backlog, { type: "bench_sleep" });
    await sleep(500);
    const neighbour = await otherOrg(env);
    const small = await create(env, 10, { type: "bench_sleep", orgId: neighbour });
    await finished(env, small, 60_000);
    const { rows } = await env.db.pool.query<{ ms: number }>(
      "SELECT extract(epoch FROM finished_at - created_at) * 1000 AS ms FROM jobs WHERE id = ANY($1::uuid[])",
      [small],
    );
    const p99 = percentile(
      rows.map((r) => Number(r.ms)),
      99,
    );
    return [
      {
        scenario: "Noisy neighbour (20 ms jobs, 10 slots)",
        metric: `org B's 10 jobs behind org A's ${backlog.toLocaleString("en-US")}: p99 enqueue → done`,
        conveyor: p99,
        baseline: fifo,
        baselineName: "BullMQ, first-in-first-out",
        unit: "ms",
        target: "≤ 1,000 ms",
        met: p99 <= 1_000,
      },
    ];
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
}

export async function dueOnTime(env: BenchEnv, port: number, count = 10_000, replicas = 2): Promise<Row[]> {
  const bullmq = await baseline(env, "due", count, 300);
  let workers: Child[] = [];
  try {
    workers = await startWorkers(env, port, replicas, { WORKER_TYPES: "bench_noop", WORKER_PLUGINS: NOOP_PLUGIN, WORKER_CONCURRENCY: "300" });
    const runAt = new Date(Date.now() + 4_000);
    const ids = await create(env, count, { type: "bench_noop", runAt });
    await finished(env, ids, 60_000);
    const started = await startedAt(env, ids);
    const lateness = [...started.values()].map((at) => at - runAt.getTime());
    const p99 = percentile(lateness, 99);
    return [
      {
        scenario: `Due on time (${replicas} workers × 300 slots)`,
        metric: `${count.toLocaleString("en-US")} jobs with one run_at: p99 start lateness`,
        conveyor: p99,
        baseline: bullmq,
        baselineName: "BullMQ delayed jobs, 1 worker × 300",
        unit: "ms",
        target: "≤ 1,000 ms",
        met: p99 <= 1_000,
      },
    ];
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
}

export async function priority(env: BenchEnv, port: number, backlog = 10_000): Promise<Row[]> {
  const bullmq = await baseline(env, "priority", backlog, 10);
  let workers: Child[] = [];
  try {
    workers = await startWorkers(env, port, 1, { WORKER_TYPES: "bench_sleep", WORKER_PLUGINS: SLEEP_PLUGIN, WORKER_CONCURRENCY: "10" });
    await create(env, backlog, { type: "bench_sleep", priority: 1 });
    await sleep(500);
    const [urgent] = await create(env, 1, { type: "bench_sleep", priority: 10 });
    await finished(env, [urgent!], 60_000);
    const { rows } = await env.db.pool.query<{ created: Date }>("SELECT created_at AS created FROM jobs WHERE id = $1", [urgent]);
    const wait = (await startedAt(env, [urgent!])).get(urgent!)! - rows[0]!.created.getTime();
    return [
      {
        scenario: "Priority (20 ms jobs, 10 slots)",
        metric: `a priority-10 job behind ${backlog.toLocaleString("en-US")} of priority 1: enqueue → start`,
        conveyor: wait,
        baseline: bullmq,
        baselineName: "BullMQ priorities",
        unit: "ms",
        target: "≤ 1,000 ms",
        met: wait <= 1_000,
      },
    ];
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
}
