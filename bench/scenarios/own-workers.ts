// Issue 44 (docs/reference/lifecycle.md#your-own-workers): an organization's own workers over the worker protocol, each figure beside a baseline from the
// same run on the same stack —
//   1. a Python no-op worker (the SDK, one process, concurrency 50), and the TypeScript client's createWorker the same
//      way, each against the built-in worker (no-op plugin, concurrency 50): jobs/s queued → done (target ≥ 0.5×);
//   2. a lone job on an idle system from POST /jobs to the waiting Python worker's function start (target p50 ≤ 20 ms),
//      beside the built-in worker's POST → handler start;
//   3. POST /jobs throughput with 1,000 idle long-polls open beside it, against none (target ≥ 0.9×; docs/reference/robustness.md#r59).
// The Python worker runs from a virtual environment made for the bench (bench/.pyenv, the SDK installed from the
// repository) unless BENCH_PYTHON names an interpreter that has it.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { Agent, request } from "undici";
import { insertJobs, newId } from "@conveyor/db";
import { load } from "../lib/load";
import { repoRoot, run, sleep, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";
import { drainNoopJobs, NOOP_PLUGIN } from "./worker";

const TYPE = "bench_py_noop";
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

/** A Python with the SDK: BENCH_PYTHON, or bench/.pyenv made (once) with the SDK installed from the repository. */
function python(): string {
  if (process.env.BENCH_PYTHON) return process.env.BENCH_PYTHON;
  const venv = path.join(repoRoot, "bench", ".pyenv");
  const bin = path.join(venv, "bin", "python");
  if (!existsSync(bin)) {
    execFileSync("python3", ["-m", "venv", venv], { stdio: "inherit" });
    execFileSync(bin, ["-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", path.join(repoRoot, "sdk", "python")], { stdio: "inherit" });
  }
  return bin;
}

/** The organization's own type and a key of the worker role, written as the API would. */
async function registerOwnType(env: BenchEnv): Promise<string> {
  await env.db.pool.query(
    `INSERT INTO org_job_types (org_id, name, payload_schema) VALUES ($1, $2, '{"type": "object"}') ON CONFLICT (org_id, name) DO NOTHING`,
    [env.orgId, TYPE],
  );
  const key = `cvk_${randomBytes(32).toString("base64url").replace(/[-_]/g, "B").slice(0, 43)}`;
  const { rows } = await env.db.pool.query<{ created_by: string }>("SELECT created_by FROM api_keys WHERE org_id = $1 LIMIT 1", [env.orgId]);
  await env.db.pool.query(
    "INSERT INTO api_keys (id, org_id, created_by, name, prefix, key_hash, role) VALUES ($1, $2, $3, 'bench workers', $4, $5, 'worker')",
    [newId(), env.orgId, rows[0]!.created_by, key.slice(0, 8), createHash("sha256").update(key).digest()],
  );
  return key;
}

type PythonWorker = { proc: ChildProcess; starts: Map<string, number>; stop(): Promise<void> };

async function startPythonWorker(url: string, key: string, concurrency: number, printStarts: boolean): Promise<PythonWorker> {
  const proc = spawn(python(), [path.join(repoRoot, "bench", "baselines", "python-worker.py")], {
    env: {
      PATH: process.env.PATH ?? "",
      CONVEYOR_URL: url,
      CONVEYOR_WORKER_KEY: key,
      CONCURRENCY: String(concurrency),
      TYPE,
      PRINT_STARTS: printStarts ? "1" : "0",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const starts = new Map<string, number>();
  let partial = "";
  let ready: () => void = () => {};
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  proc.stdout!.on("data", (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split("\n");
    partial = lines.pop()!;
    for (const line of lines) {
      if (line === "READY") ready();
      const match = /^START (\S+) (\S+)$/.exec(line);
      if (match) starts.set(match[1]!, Number(match[2]));
    }
  });
  await isReady;
  // Its first long-poll open (the worker registers with its first lease call).
  await sleep(500);
  return {
    proc,
    starts,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once("exit", () => resolve());
        proc.kill("SIGTERM");
        setTimeout(() => proc.kill("SIGKILL"), 15_000).unref();
      }),
  };
}

async function queueOwnJobs(env: BenchEnv, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1000) {
    const now = new Date();
    await insertJobs(
      env.db.pool,
      Array.from({ length: Math.min(1000, count - i) }, () => ({
        id: newId(),
        orgId: env.orgId,
        type: TYPE,
        payloadJson: '{"n":1}',
        maxRetries: 0,
        createdAt: now,
      })),
    );
  }
}

/** jobs/s queued → done for the organization's own type, timed in Postgres as drainNoopJobs is. */
async function drainOwnJobs(env: BenchEnv, jobs: number): Promise<number> {
  const { rows: start } = await env.db.pool.query<{ at: Date }>("SELECT clock_timestamp() AS at");
  await queueOwnJobs(env, jobs);
  for (;;) {
    const { rows } = await env.db.pool.query<{ n: string }>("SELECT count(*) AS n FROM jobs WHERE status IN ('pending', 'processing')");
    if (Number(rows[0]!.n) === 0) break;
    await sleep(100);
  }
  const { rows: done } = await env.db.pool.query<{ n: string; at: Date }>("SELECT count(*) AS n, max(updated_at) AS at FROM jobs WHERE status = 'done'");
  if (Number(done[0]!.n) !== jobs) throw new Error(`expected ${jobs} jobs done, found ${done[0]!.n}`);
  return jobs / ((done[0]!.at.getTime() - start[0]!.at.getTime()) / 1000);
}

export async function ownWorkers(
  env: BenchEnv,
  ports: { api: number; worker: number },
  options: { jobs: number; loneJobs: number; seconds: number },
): Promise<Row[]> {
  const key = await registerOwnType(env);
  const base = `http://127.0.0.1:${ports.api}`;
  const rows: Row[] = [];
  let api: Child | undefined;
  let builtIn: Child | undefined;
  let py: PythonWorker | undefined;
  try {
    // 1. Throughput: the built-in worker (no-op plugin, concurrency 50), then the Python worker on the same stack.
    builtIn = run(
      "apps/worker/src/main.ts",
      conveyorEnv(env, { WORKER_TYPES: "bench_noop", WORKER_PLUGINS: NOOP_PLUGIN, WORKER_CONCURRENCY: "50", WORKER_METRICS_PORT: String(ports.worker) }),
    );
    await waitForHttp(`http://127.0.0.1:${ports.worker}/healthz`);
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(ports.api) }));
    await waitForHttp(`${base}/healthz`);
    await sleep(1000);
    const builtInRate = await drainNoopJobs(env, options.jobs);
    await clearJobs(env.db);
    py = await startPythonWorker(base, key, 50, false);
    await drainOwnJobs(env, Math.min(1000, options.jobs)); // warm-up
    await clearJobs(env.db);
    const pyRate = await drainOwnJobs(env, options.jobs);
    await py.stop();
    py = undefined;
    await clearJobs(env.db);
    // The TypeScript client's createWorker, the same way.
    const ts = run("bench/baselines/ts-worker.ts", { CONVEYOR_URL: base, CONVEYOR_WORKER_KEY: key, CONCURRENCY: "50", TYPE });
    await ts.result;
    await sleep(500); // its first long-poll open, as for the Python worker
    await drainOwnJobs(env, Math.min(1000, options.jobs)); // warm-up
    await clearJobs(env.db);
    const tsRate = await drainOwnJobs(env, options.jobs);
    await ts.stop();
    await clearJobs(env.db);
    rows.push({
      scenario: "Own workers (docs/reference/lifecycle.md#your-own-workers)",
      metric: "TypeScript createWorker no-op, concurrency 50, queued → done",
      conveyor: tsRate,
      baseline: builtInRate,
      baselineName: "built-in worker, no-op plugin, concurrency 50, same stack",
      unit: "jobs/s",
      target: "≥ 0.5× built-in",
      met: tsRate >= 0.5 * builtInRate,
    });
    rows.push({
      scenario: "Own workers (docs/reference/lifecycle.md#your-own-workers)",
      metric: "Python no-op worker, concurrency 50, queued → done",
      conveyor: pyRate,
      baseline: builtInRate,
      baselineName: "built-in worker, no-op plugin, concurrency 50, same stack",
      unit: "jobs/s",
      target: "≥ 0.5× built-in",
      met: pyRate >= 0.5 * builtInRate,
    });

    // 2. A lone job: POST → the waiting Python worker's function start; the built-in worker's POST → handler start beside it.
    const post = async (type: string) => {
      const sent = Date.now();
      const res = await request(`${base}/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": env.apiKey },
        body: JSON.stringify({ type, payload: { n: 1 } }),
      });
      return { sent, id: ((await res.body.json()) as { id: string }).id };
    };
    const builtInLatencies: number[] = [];
    for (let i = 0; i < options.loneJobs + 10; i++) {
      const { sent, id } = await post("bench_noop");
      for (;;) {
        const { rows: found } = await env.db.pool.query<{ started_at: Date | null }>("SELECT started_at FROM jobs WHERE id = $1", [id]);
        if (found[0]?.started_at) {
          if (i >= 10) builtInLatencies.push(found[0].started_at.getTime() - sent);
          break;
        }
        await sleep(2);
      }
      await sleep(20);
    }
    await builtIn.stop();
    builtIn = undefined;
    py = await startPythonWorker(base, key, 10, true);
    const pyLatencies: number[] = [];
    for (let i = 0; i < options.loneJobs + 10; i++) {
      const { sent, id } = await post(TYPE);
      for (;;) {
        const started = py.starts.get(id);
        if (started !== undefined) {
          if (i >= 10) pyLatencies.push(started - sent);
          break;
        }
        await sleep(1);
      }
      await sleep(20);
    }
    await py.stop();
    py = undefined;
    await clearJobs(env.db);
    pyLatencies.sort((a, b) => a - b);
    builtInLatencies.sort((a, b) => a - b);
    rows.push(
      {
        scenario: "Own workers (docs/reference/lifecycle.md#your-own-workers)",
        metric: "lone job, POST → Python function start p50",
        conveyor: percentile(pyLatencies, 0.5),
        baseline: percentile(builtInLatencies, 0.5),
        baselineName: "built-in worker, POST → handler start, same run",
        unit: "ms",
        target: "≤ 20 ms",
        met: percentile(pyLatencies, 0.5) <= 20,
      },
      {
        scenario: "Own workers (docs/reference/lifecycle.md#your-own-workers)",
        metric: "lone job, POST → Python function start p99",
        conveyor: percentile(pyLatencies, 0.99),
        baseline: percentile(builtInLatencies, 0.99),
        baselineName: "built-in worker, POST → handler start, same run",
        unit: "ms",
      },
    );

    // 3. POST /jobs beside 1,000 idle long-polls (a type with no jobs), against none.
    const body = JSON.stringify({ type: "webhook", payload: { url: "https://example.com/hooks/orders", payload: { order: 42 } } });
    const target = { url: `${base}/jobs`, method: "POST" as const, body, headers: { "x-api-key": env.apiKey } };
    await load({ ...target, durationS: 1 });
    const alone = await load({ ...target, durationS: options.seconds });
    await clearJobs(env.db);
    const agent = new Agent({ connections: 1_100, headersTimeout: 60_000, bodyTimeout: 60_000 });
    const polling = { on: true };
    const poll = async (workerId: string) => {
      while (polling.on) {
        await request(`${base}/worker/lease`, {
          method: "POST",
          dispatcher: agent,
          headers: { "content-type": "application/json", "x-api-key": key },
          body: JSON.stringify({ types: [TYPE], max: 1, wait_seconds: 30, worker_id: workerId, worker_name: "idle" }),
        })
          .then((r) => r.body.dump())
          .catch(() => {});
      }
    };
    const pollers = Array.from({ length: 1_000 }, () => poll(newId()));
    // Measured once the API holds all 1,000 waiting (its gauge), not while it is still taking them in.
    const waiting = async () => {
      const text = await (await fetch(`${base}/metrics`)).text();
      return Number(/^conveyor_worker_long_polls (\d+)/m.exec(text)?.[1] ?? 0);
    };
    const deadline = Date.now() + 60_000;
    while ((await waiting()) < 1_000 && Date.now() < deadline) await sleep(200);
    const waitingBefore = await waiting();
    await sleep(1_000);
    const beside = await load({ ...target, durationS: options.seconds });
    const waitingAfter = await waiting();
    polling.on = false;
    await api.stop();
    api = undefined;
    await Promise.race([Promise.all(pollers), sleep(5_000)]);
    await agent.close().catch(() => {});
    rows.push({
      scenario: "Own workers (docs/reference/lifecycle.md#your-own-workers)",
      metric: `POST /jobs beside 1,000 idle long-polls (${waitingBefore} → ${waitingAfter} waiting)`,
      conveyor: beside.rps,
      baseline: alone.rps,
      baselineName: "POST /jobs, no long-polls, same API",
      unit: "req/s",
      target: "≥ 0.9×",
      met: beside.rps >= 0.9 * alone.rps,
    });
    return rows;
  } finally {
    await py?.stop();
    await builtIn?.stop();
    await api?.stop();
    await clearJobs(env.db);
    await env.db.pool.query("TRUNCATE worker_leases, protocol_workers");
    await clearPrefix(env.prefix);
  }
}
