// 3. Worker throughput from queued to done (status, events, result in Postgres) for a no-op plugin type,
// one worker process, against a raw BullMQ no-op worker and against the Postgres-backed queues graphile-worker and
// pg-boss (the same jobs, concurrency and Postgres server; each in a database of its own). 6. Worker RSS idle and
// under load.
import { insertJobs, newId, withDatabaseName } from "@conveyor/db";
import { run, rssMb, rssSampler, sleep, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";

export const NOOP_PLUGIN = "bench/plugins/noop.js";

/**
 * Creates `count` bench_noop jobs as POST /jobs does — job rows, their place in the dispatcher's queue, their
 * job.created events — 1,000 per statement. The worker's dispatcher hands them to BullMQ.
 */
export async function queueNoopJobs(env: BenchEnv, count: number, orgId = env.orgId): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1000) {
    const now = new Date();
    const batch = Array.from({ length: Math.min(1000, count - i) }, () => ({
      id: newId(),
      orgId,
      type: "bench_noop",
      payloadJson: '{"n":1}',
      maxRetries: 0,
      createdAt: now,
    }));
    await insertJobs(env.db.pool, batch);
    ids.push(...batch.map((j) => j.id));
  }
  return ids;
}

/**
 * Waits until no job is pending or processing, then checks that all `jobs` ended done. The poll reads the partial
 * index of live jobs, so the measurement costs Postgres little while the workers run.
 */
export async function waitUntilAllDone(env: BenchEnv, jobs: number, pollMs = 100): Promise<void> {
  for (;;) {
    const { rows } = await env.db.pool.query<{ n: string }>("SELECT count(*) AS n FROM jobs WHERE status IN ('pending', 'processing')");
    if (Number(rows[0]!.n) === 0) break;
    await sleep(pollMs);
  }
  const { rows } = await env.db.pool.query<{ n: string }>("SELECT count(*) AS n FROM jobs WHERE status = 'done'");
  if (Number(rows[0]!.n) !== jobs) throw new Error(`expected ${jobs} jobs done, found ${rows[0]!.n}`);
}

/**
 * Queues `jobs` no-op jobs and waits until all are done: jobs per second, timed in Postgres from before the first
 * insert to the last job's done (its updated_at), so the poll can be light and infrequent without blurring the figure.
 */
export async function drainNoopJobs(env: BenchEnv, jobs: number): Promise<number> {
  const { rows: start } = await env.db.pool.query<{ at: Date }>("SELECT clock_timestamp() AS at");
  await queueNoopJobs(env, jobs);
  await waitUntilAllDone(env, jobs);
  const { rows: end } = await env.db.pool.query<{ at: Date }>("SELECT max(updated_at) AS at FROM jobs");
  return jobs / ((end[0]!.at.getTime() - start[0]!.at.getTime()) / 1000);
}

/** The peers' jobs/s: each a child program that prints `RESULT {"per_second": …}`, run one after the other. */
async function peers(env: BenchEnv, jobs: number, concurrency: number): Promise<{ graphile: number; pgBoss: number }> {
  const common = { SERVER_URL: withDatabaseName(env.databaseUrl, "postgres"), JOBS: String(jobs), CONCURRENCY: String(concurrency) };
  // NO_LOG_SUCCESS: graphile-worker logs a line per completed job unless told not to (its own perfTest sets it).
  const graphile = (await run("bench/baselines/graphile-worker.ts", { ...common, NO_LOG_SUCCESS: "1" }).result) as { per_second: number };
  const pgBoss = (await run("bench/baselines/pg-boss.ts", common).result) as { per_second: number };
  return { graphile: graphile.per_second, pgBoss: pgBoss.per_second };
}

export async function worker(env: BenchEnv, port: number, jobs: number, concurrency: number): Promise<Row[]> {
  const peer = await peers(env, jobs, concurrency);
  const baseline = (await run("bench/baselines/bullmq-worker.ts", {
    REDIS_URL: env.redisUrl,
    PREFIX: `${env.prefix}-base`,
    JOBS: String(jobs),
    CONCURRENCY: String(concurrency),
  }).result) as {
    per_second: number;
    rss_idle_mb: number;
    rss_peak_mb: number;
  };

  let proc: Child | undefined;
  try {
    proc = run(
      "apps/worker/src/main.ts",
      conveyorEnv(env, { WORKER_TYPES: "bench_noop", WORKER_PLUGINS: NOOP_PLUGIN, WORKER_CONCURRENCY: String(concurrency), WORKER_METRICS_PORT: String(port) }),
    );
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    await sleep(1000);
    const idle = rssMb(proc.pid);
    const sampler = rssSampler(proc.pid);
    const perSecond = await drainNoopJobs(env, jobs);
    const peak = sampler.stop();
    const aheadOf = (name: string, peerPerSecond: number): Row => ({
      scenario: "Worker (no-op plugin)",
      metric: `queued → done, concurrency ${concurrency}, vs ${name}`,
      conveyor: perSecond,
      baseline: peerPerSecond,
      baselineName: `${name}, same Postgres`,
      unit: "jobs/s",
      target: "> 1.0× (ahead)",
      met: perSecond > peerPerSecond,
    });
    return [
      {
        scenario: "Worker (no-op plugin)",
        metric: `queued → done, concurrency ${concurrency}`,
        conveyor: perSecond,
        baseline: baseline.per_second,
        baselineName: "BullMQ no-op worker",
        unit: "jobs/s",
        target: "≥ 0.8× BullMQ",
        met: perSecond >= 0.8 * baseline.per_second,
      },
      aheadOf("graphile-worker", peer.graphile),
      aheadOf("pg-boss", peer.pgBoss),
      { scenario: "Worker RSS", metric: "idle", conveyor: idle, baseline: baseline.rss_idle_mb, baselineName: "BullMQ no-op worker", unit: "MB" },
      { scenario: "Worker RSS", metric: "peak under load", conveyor: peak, baseline: baseline.rss_peak_mb, baselineName: "BullMQ no-op worker", unit: "MB" },
    ];
  } finally {
    await proc?.stop();
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
}
