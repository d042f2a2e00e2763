// Flow control (issue 24), each figure beside the same load without the limit in the same run:
//   rate-limit accuracy — a limit of 500/s under a 5,000-job backlog, two workers × 300 slots: the start rate over the
//     drain (±5 % of the limit) and the most starts in any 1-second window (never above it);
//   concurrency keys — 100,000 due no-op jobs over 10,000 keys of limit 1 drain at ≥ 0.8× the same jobs without keys;
//   a paused org — one org's 100,000 jobs held by its paused queue, another org's job starts within 1 s (p99);
//   POST /jobs with a dedupe_key (a new key each request, so every one takes the key) ≥ 0.9× without.
import { insertJobs, newId, updateQueueSettings } from "@conveyor/db";
import { load } from "../lib/load";
import { run, sleep, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";
import { create, otherOrg, percentile, startedAt, startWorkers } from "./scheduling";

const NOOP = { WORKER_TYPES: "bench_noop", WORKER_PLUGINS: "bench/plugins/noop.js", WORKER_CONCURRENCY: "300" };

/** Waits until no job of the bench database is left unfinished. */
async function drained(env: BenchEnv, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await env.db.pool.query<{ n: string }>("SELECT count(*) AS n FROM jobs WHERE status NOT IN ('done', 'failed', 'cancelled')");
    if (rows[0]!.n === "0") return;
    if (Date.now() > deadline) throw new Error(`${rows[0]!.n} jobs unfinished after ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** Jobs per second from the first start to the last finish of every job in the database. */
async function drainRate(env: BenchEnv): Promise<number> {
  const { rows } = await env.db.pool.query<{ n: string; seconds: number }>(
    `SELECT count(*) AS n,
            extract(epoch FROM (SELECT max(finished_at) FROM jobs) - (SELECT min(time) FROM events WHERE type = 'job.started')) AS seconds
       FROM jobs WHERE status = 'done'`,
  );
  return Number(rows[0]!.n) / Number(rows[0]!.seconds);
}

async function cleanUp(env: BenchEnv, workers: Child[]): Promise<void> {
  await Promise.all(workers.map((w) => w.stop()));
  await clearJobs(env.db);
  await clearPrefix(env.prefix);
}

export async function rateLimitAccuracy(env: BenchEnv, port: number, backlog = 5_000, limit = 500): Promise<Row[]> {
  let workers: Child[] = [];
  try {
    await env.db.pool.query(`INSERT INTO rate_limits (org_id, name, "limit", period_ms) VALUES ($1, 'bench', $2, 1000)`, [env.orgId, limit]);
    const ids = await create(env, backlog, { type: "bench_noop", rateLimit: "bench" });
    workers = await startWorkers(env, port, 2, NOOP);
    await drained(env, 120_000);
    const starts = [...(await startedAt(env, ids)).values()].sort((a, b) => a - b);
    // Starts per second between the first and the last start: n − 1 intervals.
    const rate = ((starts.length - 1) / (starts.at(-1)! - starts[0]!)) * 1000;
    let busiest = 0;
    for (let lo = 0, hi = 0; hi < starts.length; hi++) {
      while (starts[hi]! - starts[lo]! >= 1000) lo++;
      busiest = Math.max(busiest, hi - lo + 1);
    }
    const name = `the limit (${limit}/s)`;
    return [
      {
        scenario: `Rate limit ${limit}/s (2 workers × 300 slots)`,
        metric: `${backlog.toLocaleString("en-US")} jobs: starts per second over the drain`,
        conveyor: rate,
        baseline: limit,
        baselineName: name,
        unit: "starts/s",
        target: "within ±5 % of the limit",
        met: Math.abs(rate - limit) <= 0.05 * limit,
      },
      {
        scenario: `Rate limit ${limit}/s (2 workers × 300 slots)`,
        metric: "most starts in any 1-second window",
        conveyor: busiest,
        baseline: limit,
        baselineName: name,
        unit: "starts",
        target: "≤ the limit",
        met: busiest <= limit,
      },
    ];
  } finally {
    await cleanUp(env, workers);
  }
}

export async function concurrencyKeys(env: BenchEnv, port: number, count = 100_000, keys = 10_000): Promise<Row[]> {
  const drain = async (keyed: boolean): Promise<number> => {
    let workers: Child[] = [];
    try {
      for (let i = 0; i < count; i += 10_000) {
        const n = Math.min(10_000, count - i);
        if (!keyed) await create(env, n, { type: "bench_noop" });
        else for (let k = 0; k < n; k += 1000) await createKeyed(env, Math.min(1000, n - k), i + k, keys);
      }
      workers = await startWorkers(env, port, 1, NOOP);
      await drained(env, 600_000);
      return await drainRate(env);
    } finally {
      await cleanUp(env, workers);
    }
  };
  const plain = await drain(false);
  const keyed = await drain(true);
  return [
    {
      scenario: "Concurrency keys (1 worker × 300 slots)",
      metric: `${count.toLocaleString("en-US")} due jobs over ${keys.toLocaleString("en-US")} keys of limit 1: drain rate`,
      conveyor: keyed,
      baseline: plain,
      baselineName: "the same jobs without keys",
      unit: "jobs/s",
      target: "≥ 0.8×",
      met: keyed >= 0.8 * plain,
    },
  ];
}

/** `n` jobs whose concurrency keys continue round-robin from job number `from` over `keys` keys. */
async function createKeyed(env: BenchEnv, n: number, from: number, keys: number): Promise<void> {
  const now = new Date();
  await insertJobs(
    env.db.pool,
    Array.from({ length: n }, (_, i) => ({
      id: newId(),
      orgId: env.orgId,
      type: "bench_noop",
      payloadJson: "{}",
      maxRetries: 0,
      createdAt: now,
      concurrencyKey: `key-${(from + i) % keys}`,
      concurrencyLimit: 1,
    })),
  );
}

export async function pausedOrg(env: BenchEnv, port: number, held = 100_000, samples = 50): Promise<Row[]> {
  const waits = async (): Promise<number> => {
    const other = await otherOrg(env);
    const result: number[] = [];
    for (let i = 0; i < samples; i++) {
      const [id] = await create(env, 1, { type: "bench_noop", orgId: other });
      for (let tries = 0; ; tries++) {
        const started = (await startedAt(env, [id!])).get(id!);
        if (started !== undefined) {
          const { rows } = await env.db.pool.query<{ created: Date }>("SELECT created_at AS created FROM jobs WHERE id = $1", [id]);
          result.push(started - rows[0]!.created.getTime());
          break;
        }
        if (tries > 1000) throw new Error("another org's job did not start within 20 s");
        await sleep(20);
      }
    }
    return percentile(result, 99);
  };
  let workers: Child[] = [];
  let alone: number;
  try {
    workers = await startWorkers(env, port, 1, NOOP);
    alone = await waits();
  } finally {
    await cleanUp(env, workers);
  }
  workers = [];
  try {
    await updateQueueSettings(env.db.pool, env.orgId, "bench_noop", { paused: true });
    await create(env, held, { type: "bench_noop" });
    workers = await startWorkers(env, port, 1, NOOP);
    const behind = await waits();
    return [
      {
        scenario: "A paused org (1 worker × 300 slots)",
        metric: `another org's job while one org's ${held.toLocaleString("en-US")} jobs are paused: p99 enqueue → start`,
        conveyor: behind,
        baseline: alone,
        baselineName: "the same job with nothing held",
        unit: "ms",
        target: "≤ 1,000 ms",
        met: behind <= 1_000,
      },
    ];
  } finally {
    await cleanUp(env, workers);
  }
}

export async function postWithDedupe(env: BenchEnv, port: number, durationS: number): Promise<Row[]> {
  let api: Child | undefined;
  try {
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(port) }));
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    const url = `http://127.0.0.1:${port}/jobs`;
    const headers = { "x-api-key": env.apiKey };
    const plain = JSON.stringify({ type: "webhook", payload: { url: "https://example.com/hooks/orders", payload: { order: 42 } } });
    let n = 0;
    const deduped = () =>
      JSON.stringify({ type: "webhook", payload: { url: "https://example.com/hooks/orders", payload: { order: 42 } }, dedupe_key: `order:${++n}` });
    await load({ url, method: "POST", body: plain, headers, durationS: 1 });
    // Alternating runs, the better of two each, so a slow moment of the machine does not decide the ratio.
    const without = Math.max(
      (await load({ url, method: "POST", body: plain, headers, durationS })).rps,
      (await load({ url, method: "POST", body: plain, headers, durationS })).rps,
    );
    const withKey = Math.max(
      (await load({ url, method: "POST", bodyOf: deduped, headers, durationS })).rps,
      (await load({ url, method: "POST", bodyOf: deduped, headers, durationS })).rps,
    );
    return [
      {
        scenario: "POST /jobs",
        metric: "sustained throughput with a dedupe_key",
        conveyor: withKey,
        baseline: without,
        baselineName: "POST /jobs without one",
        unit: "req/s",
        target: "≥ 0.9×",
        met: withKey >= 0.9 * without,
      },
    ];
  } finally {
    await api?.stop();
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
}
