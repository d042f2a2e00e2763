// 1. POST /jobs: sustained req/s (closed loop, autocannon) and p50/p99 at 80 % of that rate (open loop,
// wrk2-style fixed rate), against an Express stub that only answers 202.
import { fixedRate } from "../lib/fixed-rate";
import { load } from "../lib/load";
import { run, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";

const body = JSON.stringify({ type: "webhook", payload: { url: "https://example.com/hooks/orders", payload: { order: 42, total: "19.90" } } });

export async function postJobs(env: BenchEnv, port: number, durationS: number): Promise<Row[]> {
  const stub = run("bench/baselines/express-stub.ts", { PORT: String(port) });
  await waitForHttp(`http://127.0.0.1:${port}/healthz`);
  await load({ url: `http://127.0.0.1:${port}/jobs`, method: "POST", body, durationS: 1 });
  const baseline = await load({ url: `http://127.0.0.1:${port}/jobs`, method: "POST", body, durationS });
  await stub.stop();

  let api: Child | undefined;
  try {
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(port) }));
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    const target = { url: `http://127.0.0.1:${port}/jobs`, method: "POST" as const, body, headers: { "x-api-key": env.apiKey } };
    await load({ ...target, durationS: 1 });
    const max = await load({ ...target, durationS });
    const rate = Math.round(max.rps * 0.8);
    const steady = await fixedRate({ ...target, durationS, rate, connections: 128, warmupS: 2 });
    if (max.non2xx || steady.non2xx) throw new Error(`POST /jobs answered non-2xx ${max.non2xx + steady.non2xx} times`);
    // A request that failed outright has no latency; it must not silently leave the percentiles.
    if (max.errors || steady.errors) throw new Error(`POST /jobs failed without an answer ${max.errors + steady.errors} times`);
    await api.stop();
    api = undefined;

    // The stub at the same fixed rate, for the latency baseline.
    const stubAgain = run("bench/baselines/express-stub.ts", { PORT: String(port) });
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    const stubSteady = await fixedRate({ url: `http://127.0.0.1:${port}/jobs`, method: "POST", body, durationS, rate, connections: 128, warmupS: 2 });
    await stubAgain.stop();

    const name = "Express stub";
    return [
      {
        scenario: "POST /jobs",
        metric: "sustained throughput",
        conveyor: max.rps,
        baseline: baseline.rps,
        baselineName: name,
        unit: "req/s",
        target: "≥ 0.7× stub",
        met: max.rps >= 0.7 * baseline.rps,
      },
      { scenario: "POST /jobs", metric: `p50 at ${rate} req/s (80 %)`, conveyor: steady.p50, baseline: stubSteady.p50, baselineName: name, unit: "ms" },
      {
        scenario: "POST /jobs",
        metric: `p99 at ${rate} req/s (80 %)`,
        conveyor: steady.p99,
        baseline: stubSteady.p99,
        baselineName: name,
        unit: "ms",
        target: "≤ 50 ms",
        met: steady.p99 <= 50,
      },
    ];
  } finally {
    await api?.stop();
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
}
