// Durable steps and waitpoints (docs/reference/lifecycle.md#waitpoints-and-durable-steps, issue 34), each beside its baseline from the same run:
// - a 10-step no-op handler, created → done, against 10 chained no-op jobs and against 10 × one no-op job's
//   created → done p50 (measured alone, sequentially); target ≤ 1.2× the 10 × one job;
// - 10,000 jobs waiting on waitpoints (ctx.waitFor): while they wait, no job is processing or handed over (no slot
//   held); each waitpoint is then completed, and a job's restart after its waitpoint's completion is measured;
//   target p99 ≤ 1 s.
import os from "node:os";
import { run, sleep, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";
import { NOOP_PLUGIN } from "./worker";

const STEPS_PLUGIN = "bench/plugins/steps.js";
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const p99 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.99))]!;

export async function steps(env: BenchEnv, ports: { api: number; worker: number }, concurrency: number, waiting: number): Promise<Row[]> {
  let api: Child | undefined;
  let workerProc: Child | undefined;
  const base = `http://127.0.0.1:${ports.api}`;
  const call = async (path: string, body: unknown, expected: number) => {
    const res = await fetch(`${base}${path}`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json", "x-api-key": env.apiKey },
    });
    if (res.status !== expected) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as { id: string }[] & { id: string };
  };
  const count = async (sql: string, values: unknown[]) => (await env.db.pool.query<{ n: number }>(sql, values)).rows[0]!.n;
  const waitDone = async (ids: string[], timeoutMs = 300_000) => {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      if ((await count("SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND status <> 'done'", [ids])) === 0) return;
      await sleep(10);
    }
    throw new Error("jobs did not finish in time");
  };
  const spanMs = async (ids: string[]) =>
    Number(
      (
        await env.db.pool.query<{ ms: number }>(
          "SELECT extract(epoch FROM max(finished_at) - min(created_at)) * 1000 AS ms FROM jobs WHERE id = ANY($1::uuid[])",
          [ids],
        )
      ).rows[0]!.ms,
    );
  const rows: Row[] = [];
  try {
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(ports.api) }));
    await waitForHttp(`${base}/healthz`);
    workerProc = run(
      "apps/worker/src/main.ts",
      conveyorEnv(env, {
        WORKER_TYPES: "bench_noop,bench_steps",
        WORKER_PLUGINS: `${NOOP_PLUGIN},${STEPS_PLUGIN}`,
        WORKER_CONCURRENCY: String(concurrency),
        WORKER_METRICS_PORT: String(ports.worker),
      }),
    );
    await waitForHttp(`http://127.0.0.1:${ports.worker}/healthz`);
    const noop = { type: "bench_noop", payload: {} };

    const single: number[] = [];
    const stepped: number[] = [];
    const chained: number[] = [];
    for (let i = 0; i < 11; i++) {
      const one = await call("/jobs", noop, 202);
      await waitDone([one.id]);
      const ten = await call("/jobs", { type: "bench_steps", payload: { steps: 10 } }, 202);
      await waitDone([ten.id]);
      const chain = (
        await call("/jobs/batch", { jobs: Array.from({ length: 10 }, (_, k) => ({ ...noop, ref: `c${k}`, ...(k ? { depends_on: [`c${k - 1}`] } : {}) })) }, 202)
      ).map((j) => j.id);
      await waitDone(chain);
      if (i === 0) continue; // warm-up
      single.push(await spanMs([one.id]));
      stepped.push(await spanMs([ten.id]));
      chained.push(await spanMs(chain));
    }
    rows.push({
      scenario: "Steps: a 10-step no-op handler",
      metric: "created → done, median of 10",
      conveyor: median(stepped),
      baseline: 10 * median(single),
      baselineName: "10 × one no-op job's created→done median",
      unit: "ms",
      target: "≤ 1.2× the baseline",
      met: median(stepped) <= 1.2 * 10 * median(single),
    });
    rows.push({
      scenario: "Steps: 10 chained no-op jobs (for comparison)",
      metric: "first created → last done, median of 10",
      conveyor: median(chained),
      baseline: median(stepped),
      baselineName: "the 10-step handler",
      unit: "ms",
      met: true,
    });
    await clearJobs(env.db);
    // The waiting rows keep the rows above when they fail (a loaded machine may miss a deadline): a failure is a row.
    try {
      rows.push(...(await waitingRows()));
    } catch (error) {
      rows.push({
        scenario: `Steps: ${waiting.toLocaleString("en")} jobs waiting on waitpoints`,
        metric: `failed: ${(error as Error).message.split("\n")[0]}`,
        conveyor: NaN,
        baseline: null,
        baselineName: "",
        unit: "",
        met: false,
      });
    }
    return rows;
  } finally {
    await api?.stop();
    await workerProc?.stop();
    await clearJobs(env.db);
    await env.db.pool.query("DELETE FROM waitpoints").catch(() => {});
    await clearPrefix(env.prefix);
  }

  /** 10,000 jobs suspend on waitpoints holding no slot, then each waitpoint is completed and the jobs' restarts timed. */
  async function waitingRows(): Promise<Row[]> {
    const rows: Row[] = [];
    const load = () => os.loadavg()[0]!.toFixed(1);
    // Deadlines grow with the count: a shared machine at load 15 suspends 10,000 jobs in minutes, not seconds.
    const deadlineMs = Math.max(600_000, waiting * 120);
    const progress = (what: string, n: number) =>
      process.stdout.write(`  ${what}: ${n.toLocaleString("en")} of ${waiting.toLocaleString("en")} (load ${load()})\n`);
    const points: string[] = [];
    for (let i = 0; i < waiting; i += 50) {
      const made = await Promise.all(Array.from({ length: Math.min(50, waiting - i) }, () => call("/waitpoints", { timeout_seconds: 3600 }, 201)));
      points.push(...made.map((w) => w.id));
    }
    const jobs: string[] = [];
    for (let i = 0; i < points.length; i += 1000) {
      const batch = await call("/jobs/batch", { jobs: points.slice(i, i + 1000).map((wait) => ({ type: "bench_steps", payload: { wait } })) }, 202);
      jobs.push(...batch.map((j) => j.id));
    }
    const until = Date.now() + deadlineMs;
    let reported = Date.now();
    for (;;) {
      const suspended = await count("SELECT count(*)::int AS n FROM job_steps WHERE job_id = ANY($1::uuid[]) AND status = 'waiting'", [jobs]);
      if (suspended >= jobs.length) break;
      if (Date.now() > until) throw new Error(`${suspended} of ${jobs.length} jobs suspended in ${deadlineMs / 1000} s`);
      if (Date.now() - reported > 30_000) {
        progress("suspended", suspended);
        reported = Date.now();
      }
      await sleep(200);
    }
    const loadWaiting = load();
    const held = await count(
      "SELECT ((SELECT count(*) FROM jobs WHERE id = ANY($1::uuid[]) AND status = 'processing') + (SELECT count(*) FROM job_queue WHERE job_id = ANY($1::uuid[])))::int AS n",
      [jobs],
    );
    rows.push({
      scenario: `Steps: ${waiting.toLocaleString("en")} jobs waiting on waitpoints`,
      metric: `slots held (processing or handed over) while they wait (load ${loadWaiting})`,
      conveyor: held,
      baseline: null,
      baselineName: "",
      unit: "jobs",
      target: "0",
      met: held === 0,
    });
    const loadCompleting = load();
    for (let i = 0; i < points.length; i += 50) {
      await Promise.all(points.slice(i, i + 50).map((id) => call(`/waitpoints/${id}/complete`, { data: { ok: true } }, 200)));
    }
    await waitDone(jobs, deadlineMs);
    const { rows: late } = await env.db.pool.query<{ ms: number }>(
      `SELECT extract(epoch FROM (SELECT max(e.time) FROM events e WHERE e.job_id = s.job_id AND e.type = 'job.started') - w.finished_at) * 1000 AS ms
         FROM job_steps s JOIN waitpoints w ON w.id = s.waitpoint_id WHERE s.job_id = ANY($1::uuid[])`,
      [jobs],
    );
    const resume = p99(late.map((r) => Number(r.ms)));
    rows.push({
      scenario: `Steps: ${waiting.toLocaleString("en")} jobs waiting on waitpoints`,
      metric: `restart after the waitpoint's completion, p99 (load ${loadCompleting}–${load()})`,
      conveyor: resume,
      baseline: median(late.map((r) => Number(r.ms))),
      baselineName: "the same, p50",
      unit: "ms",
      target: "≤ 1,000 ms",
      met: resume <= 1000,
    });
    return rows;
  }
}
