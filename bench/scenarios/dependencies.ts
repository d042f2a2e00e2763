// Dependencies (docs/reference/lifecycle.md#dependencies, issue 25): what a graph costs beside plain jobs, measured in the same run.
// - graph creation: POST /jobs/batch of a 1,000-node graph (ten layers of 100, two dependencies each) against a
//   1,000-job batch without dependencies, median request time of sequential requests; target ≤ 2×.
// - chain: a 100-job chain of no-op jobs, first created to last done, against 100 × one job's created→done p50
//   (measured alone, sequentially); target ≤ 1.5×.
// - fan-in: 10,000 no-op children and one parent (through 100 jobs of 100 each: a job depends on at most 100), the
//   parent's start after the last child finished, worst of 5 runs; target ≤ 1 s.
import { run, sleep, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";
import { NOOP_PLUGIN } from "./worker";

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function dependencies(env: BenchEnv, ports: { api: number; worker: number }, concurrency: number): Promise<Row[]> {
  let api: Child | undefined;
  let workerProc: Child | undefined;
  const base = `http://127.0.0.1:${ports.api}`;
  const post = async (path: string, body: unknown): Promise<{ id: string }[] & { id: string }> => {
    const res = await fetch(`${base}${path}`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json", "x-api-key": env.apiKey },
    });
    if (res.status !== 202) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as { id: string }[] & { id: string };
  };
  const rows: Row[] = [];
  try {
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(ports.api) }));
    await waitForHttp(`${base}/healthz`);

    // Graph creation, API only (no worker: nothing runs meanwhile).
    const webhook = (i: number) => ({ type: "webhook", payload: { url: "https://example.com/hooks/orders", payload: { order: i } } });
    const plain = { jobs: Array.from({ length: 1000 }, (_, i) => webhook(i)) };
    const graph = {
      jobs: Array.from({ length: 1000 }, (_, i) => {
        const layer = Math.floor(i / 100);
        const k = i % 100;
        return { ...webhook(i), ref: `n${i}`, ...(layer ? { depends_on: [`n${(layer - 1) * 100 + k}`, `n${(layer - 1) * 100 + ((k + 1) % 100)}`] } : {}) };
      }),
    };
    const time = async (body: unknown) => {
      const t = performance.now();
      await post("/jobs/batch", body);
      return performance.now() - t;
    };
    await time(plain);
    await time(graph);
    const plainMs: number[] = [];
    const graphMs: number[] = [];
    for (let i = 0; i < 10; i++) {
      plainMs.push(await time(plain));
      graphMs.push(await time(graph));
    }
    await clearJobs(env.db);
    rows.push({
      scenario: "Dependencies: 1,000-node graph in one batch",
      metric: "request time, median of 10",
      conveyor: median(graphMs),
      baseline: median(plainMs),
      baselineName: "1,000-job batch without dependencies",
      unit: "ms",
      target: "≤ 2× the plain batch",
      met: median(graphMs) <= 2 * median(plainMs),
    });

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
    const noop = { type: "bench_noop", payload: {} };
    const waitDone = async (ids: string[], timeoutMs = 120_000) => {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        const { rows: left } = await env.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND status <> 'done'", [
          ids,
        ]);
        if (left[0]!.n === 0) return;
        await sleep(10);
      }
      throw new Error("jobs did not finish in time");
    };

    // One job alone, sequentially: created → done.
    const single: number[] = [];
    for (let i = 0; i < 21; i++) {
      const job = await post("/jobs", noop);
      await waitDone([job.id]);
      if (i === 0) continue;
      const { rows: r } = await env.db.pool.query<{ ms: number }>("SELECT extract(epoch FROM finished_at - created_at) * 1000 AS ms FROM jobs WHERE id = $1", [
        job.id,
      ]);
      single.push(Number(r[0]!.ms));
    }
    const chain = Array.from({ length: 100 }, (_, i) => ({ ...noop, ref: `c${i}`, ...(i ? { depends_on: [`c${i - 1}`] } : {}) }));
    const chainIds = (await post("/jobs/batch", { jobs: chain })).map((j) => j.id);
    await waitDone(chainIds);
    const { rows: span } = await env.db.pool.query<{ ms: number }>(
      "SELECT extract(epoch FROM max(finished_at) - min(created_at)) * 1000 AS ms FROM jobs WHERE id = ANY($1::uuid[])",
      [chainIds],
    );
    const chainMs = Number(span[0]!.ms);
    rows.push({
      scenario: "Dependencies: 100-job chain of no-op jobs",
      metric: "first created → last done",
      conveyor: chainMs,
      baseline: 100 * median(single),
      baselineName: "100 × one job's created→done p50",
      unit: "ms",
      target: "≤ 1.5× the baseline",
      met: chainMs <= 1.5 * 100 * median(single),
    });
    await clearJobs(env.db);

    // Fan-in: 10,000 children, 100 gates of 100, one parent.
    const lateness: number[] = [];
    for (let runNo = 0; runNo < 5; runNo++) {
      const children: string[] = [];
      for (let b = 0; b < 10; b++) children.push(...(await post("/jobs/batch", { jobs: Array.from({ length: 1000 }, () => noop) })).map((j) => j.id));
      const gates = Array.from({ length: 100 }, (_, g) => ({ ...noop, ref: `g${g}`, depends_on: children.slice(g * 100, g * 100 + 100) }));
      const created = await post("/jobs/batch", { jobs: [...gates, { ...noop, depends_on: gates.map((g) => g.ref) }] });
      const parent = created[100]!.id;
      await waitDone([parent], 300_000);
      const { rows: late } = await env.db.pool.query<{ ms: number }>(
        `SELECT extract(epoch FROM (SELECT min(time) FROM events WHERE job_id = $1 AND type = 'job.started')
                              - (SELECT max(finished_at) FROM jobs WHERE id = ANY($2::uuid[]))) * 1000 AS ms`,
        [parent, children],
      );
      lateness.push(Number(late[0]!.ms));
      await clearJobs(env.db);
    }
    rows.push({
      scenario: "Dependencies: fan-in of 10,000 children",
      metric: "parent start after the last child, worst of 5",
      conveyor: Math.max(...lateness),
      baseline: null,
      baselineName: "",
      unit: "ms",
      target: "≤ 1,000 ms",
      met: Math.max(...lateness) <= 1000,
    });
    return rows;
  } finally {
    await api?.stop();
    await workerProc?.stop();
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
}
