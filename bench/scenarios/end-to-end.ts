// 4. End to end on one box (API + one worker): POST-to-done p50/p99 at fixed rates, and the highest rate
// whose backlog stays steady, against raw BullMQ (fixed-rate producer + no-op worker) at the same rates.
import { fixedRate } from "../lib/fixed-rate";
import { run, sleep, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";
import { NOOP_PLUGIN } from "./worker";

type Step = { rate: number; achieved: number; p50: number; p99: number; drainedMs: number; steady: boolean };

async function conveyorStep(env: BenchEnv, port: number, rate: number, durationS: number): Promise<Step> {
  const body = JSON.stringify({ type: "bench_noop", payload: { n: 1 } });
  const { rows: before } = await env.db.pool.query<{ now: Date }>("SELECT now()");
  const result = await fixedRate({
    url: `http://127.0.0.1:${port}/jobs`,
    method: "POST",
    body,
    headers: { "x-api-key": env.apiKey },
    durationS,
    rate,
    connections: Math.min(256, Math.max(32, rate / 8)),
  });
  const loadEnded = Date.now();
  let drainedMs = NaN;
  while (Date.now() - loadEnded < 15_000) {
    const { rows } = await env.db.pool.query<{ n: string }>("SELECT count(*) AS n FROM jobs WHERE status <> 'done' AND created_at >= $1", [before[0]!.now]);
    if (Number(rows[0]!.n) === 0) {
      drainedMs = Date.now() - loadEnded;
      break;
    }
    await sleep(20);
  }
  const { rows } = await env.db.pool.query<{ p50: number; p99: number; n: string }>(
    `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99, count(*) AS n
       FROM (SELECT extract(epoch FROM (updated_at - created_at)) * 1000 AS ms FROM jobs WHERE status = 'done' AND created_at >= $1) AS t`,
    [before[0]!.now],
  );
  await clearJobs(env.db);
  const achieved = result.total / durationS;
  // Steady: the load generator kept the rate and the backlog was gone within a second of the load stopping.
  return {
    rate,
    achieved,
    p50: Number(rows[0]!.p50),
    p99: Number(rows[0]!.p99),
    drainedMs,
    steady: achieved >= rate * 0.95 && drainedMs <= 1000 && result.non2xx === 0,
  };
}

async function baselineStep(env: BenchEnv, rate: number, durationS: number, concurrency: number): Promise<{ p50: number; p99: number }> {
  const prefix = `${env.prefix}-base`;
  const common = { REDIS_URL: env.redisUrl, PREFIX: prefix, RATE: String(rate), DURATION_MS: String(durationS * 1000), CONCURRENCY: String(concurrency) };
  const worker = run("bench/baselines/bullmq-end-to-end.ts", { ...common, ROLE: "worker" });
  await worker.result;
  const producer = (await run("bench/baselines/bullmq-end-to-end.ts", { ...common, ROLE: "producer" }).result) as { p50_ms: number; p99_ms: number };
  await worker.stop();
  await clearPrefix(prefix);
  return { p50: producer.p50_ms, p99: producer.p99_ms };
}

export async function endToEnd(env: BenchEnv, ports: { api: number; worker: number }, rates: number[], durationS: number, concurrency: number): Promise<Row[]> {
  let api: Child | undefined;
  let workerProc: Child | undefined;
  const steps: Step[] = [];
  const baselines: { p50: number; p99: number }[] = [];
  try {
    workerProc = run(
      "apps/worker/src/main.ts",
      conveyorEnv(env, {
        WORKER_TYPES: "bench_noop",
        WORKER_PLUGINS: NOOP_PLUGIN,
        WORKER_CONCURRENCY: String(concurrency),
        WORKER_METRICS_PORT: String(ports.worker),
      }),
    );
    await waitForHttp(`http://127.0.0.1:${ports.worker}/healthz`);
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(ports.api) }));
    await waitForHttp(`http://127.0.0.1:${ports.api}/healthz`);
    await conveyorStep(env, ports.api, 100, 1); // warm-up
    for (const rate of rates) steps.push(await conveyorStep(env, ports.api, rate, durationS));
  } finally {
    await api?.stop();
    await workerProc?.stop();
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
  for (const rate of rates) baselines.push(await baselineStep(env, rate, durationS, concurrency));

  const rows: Row[] = [];
  steps.forEach((step, i) => {
    const name = "BullMQ add → no-op worker";
    const note = step.steady
      ? ""
      : ` (not steady: ${Math.round(step.achieved)}/s sent, drained in ${Number.isNaN(step.drainedMs) ? "> 15 s" : `${step.drainedMs} ms`})`;
    rows.push({
      scenario: "End to end (API + worker)",
      metric: `POST→done p50 at ${step.rate}/s${note}`,
      conveyor: step.p50,
      baseline: baselines[i]!.p50,
      baselineName: name,
      unit: "ms",
    });
    rows.push({
      scenario: "End to end (API + worker)",
      metric: `POST→done p99 at ${step.rate}/s`,
      conveyor: step.p99,
      baseline: baselines[i]!.p99,
      baselineName: name,
      unit: "ms",
      ...(step.rate === 1000 ? { target: "≤ 250 ms", met: step.p99 <= 250 && step.steady } : {}),
    });
  });
  const best = Math.max(0, ...steps.filter((s) => s.steady).map((s) => s.rate));
  rows.push({
    scenario: "End to end (API + worker)",
    metric: "highest steady rate tried",
    conveyor: best,
    baseline: null,
    baselineName: "",
    unit: "jobs/s",
    target: "≥ 2,000 jobs/s",
    met: best >= 2000,
  });
  return rows;
}
