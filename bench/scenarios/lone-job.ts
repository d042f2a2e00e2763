// A lone job on an idle system (docs/reference/lifecycle.md#envelopes): from the moment before `POST /jobs` is sent to the moment its attempt
// started (the claim's `started_at`, taken just before the handler is called), one job at a time with the system
// idle in between — what envelopes must not make later. Beside raw BullMQ's add → processor start on an idle worker.
import { request } from "undici";
import { run, sleep, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";
import { NOOP_PLUGIN } from "./worker";

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

export async function loneJob(env: BenchEnv, ports: { api: number; worker: number }, jobs = 200): Promise<Row[]> {
  let api: Child | undefined;
  let worker: Child | undefined;
  const latencies: number[] = [];
  try {
    worker = run(
      "apps/worker/src/main.ts",
      conveyorEnv(env, { WORKER_TYPES: "bench_noop", WORKER_PLUGINS: NOOP_PLUGIN, WORKER_CONCURRENCY: "10", WORKER_METRICS_PORT: String(ports.worker) }),
    );
    await waitForHttp(`http://127.0.0.1:${ports.worker}/healthz`);
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(ports.api) }));
    await waitForHttp(`http://127.0.0.1:${ports.api}/healthz`);
    const post = async () => {
      const sent = Date.now();
      const res = await request(`http://127.0.0.1:${ports.api}/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": env.apiKey },
        body: JSON.stringify({ type: "bench_noop", payload: { n: 1 } }),
      });
      const { id } = (await res.body.json()) as { id: string };
      for (;;) {
        const { rows } = await env.db.pool.query<{ started_at: Date | null }>("SELECT started_at FROM jobs WHERE id = $1", [id]);
        if (rows[0]?.started_at) return rows[0].started_at.getTime() - sent;
        await sleep(2);
      }
    };
    for (let i = 0; i < 20; i++) await post(); // warm-up
    for (let i = 0; i < jobs; i++) {
      latencies.push(await post());
      // Idle between jobs, as a lone job finds the system.
      await sleep(20);
    }
  } finally {
    await api?.stop();
    await worker?.stop();
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
  const prefix = `${env.prefix}-lone`;
  const base = (await run("bench/baselines/bullmq-lone.ts", { REDIS_URL: env.redisUrl, PREFIX: prefix, JOBS: String(jobs) }).result) as {
    p50_ms: number;
    p99_ms: number;
  };
  await clearPrefix(prefix);
  latencies.sort((a, b) => a - b);
  const name = "BullMQ add → processor start, idle worker";
  const p50 = percentile(latencies, 0.5);
  const p99 = percentile(latencies, 0.99);
  return [
    {
      scenario: "Lone job (idle system)",
      metric: "POST → handler start p50",
      conveyor: p50,
      baseline: base.p50_ms,
      baselineName: name,
      unit: "ms",
      target: "≤ 10 ms",
      met: p50 <= 10,
    },
    {
      scenario: "Lone job (idle system)",
      metric: "POST → handler start p99",
      conveyor: p99,
      baseline: base.p99_ms,
      baselineName: name,
      unit: "ms",
      target: "≤ 25 ms",
      met: p99 <= 25,
    },
  ];
}
