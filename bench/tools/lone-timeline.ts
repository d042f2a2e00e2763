// Diagnostic (not part of `npm run bench`): where a lone job's time goes, POST → handler start, in three parts read
// from Postgres' own timestamps — the API until its insert (the job's created_at), the insert's commit, NOTIFY and the
// dispatcher's round until the hand-over statement (job_queue.dispatched_at), and BullMQ, the worker's fetch and its
// claim (started_at). The handler sleeps 20 ms so the queue row is still there to read. Percentiles in ms.
//
//   npx tsx --conditions=conveyor-source bench/tools/lone-timeline.ts [jobs]
import { request } from "undici";
import { freePort } from "@conveyor/testkit";
import { run, sleep, waitForHttp, type Child } from "../lib/procs";
import { conveyorEnv, prepare } from "../lib/setup";

const jobs = Number(process.argv[2] ?? 100);
const WARM_UP = 10;

type Times = { sent: number; created: number; dispatched: number; started: number };

async function main(): Promise<void> {
  const env = await prepare();
  let worker: Child | undefined;
  let api: Child | undefined;
  const times: Times[] = [];
  try {
    const [workerPort, apiPort] = [await freePort(), await freePort()];
    worker = run(
      "apps/worker/src/main.ts",
      conveyorEnv(env, {
        WORKER_TYPES: "bench_sleep",
        WORKER_PLUGINS: "bench/plugins/sleep20.js",
        WORKER_CONCURRENCY: "10",
        WORKER_METRICS_PORT: String(workerPort),
      }),
    );
    await waitForHttp(`http://127.0.0.1:${workerPort}/healthz`);
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(apiPort) }));
    await waitForHttp(`http://127.0.0.1:${apiPort}/healthz`);
    for (let i = 0; i < WARM_UP + jobs; i++) {
      const sent = performance.timeOrigin + performance.now();
      const res = await request(`http://127.0.0.1:${apiPort}/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": env.apiKey },
        body: JSON.stringify({ type: "bench_sleep", payload: {} }),
      });
      const { id } = (await res.body.json()) as { id: string };
      for (;;) {
        const { rows } = await env.db.pool.query<{ created: number; dispatched: number | null; started: number | null }>(
          `SELECT extract(epoch FROM j.created_at) * 1000 AS created, extract(epoch FROM q.dispatched_at) * 1000 AS dispatched,
                  extract(epoch FROM j.started_at) * 1000 AS started
             FROM jobs j LEFT JOIN job_queue q ON q.job_id = j.id WHERE j.id = $1`,
          [id],
        );
        const row = rows[0];
        if (row?.started) {
          // The queue row goes with the outcome: a poll that comes after it (a busy machine) leaves this job out.
          if (i >= WARM_UP && row.dispatched)
            times.push({ sent, created: Number(row.created), dispatched: Number(row.dispatched), started: Number(row.started) });
          break;
        }
        await sleep(2);
      }
      // Idle between jobs (the handler's 20 ms and more), as a lone job finds the system.
      await sleep(40);
    }
  } finally {
    await api?.stop();
    await worker?.stop();
    await env.close();
  }
  const part = (name: string, of: (t: Times) => number) => {
    const sorted = times.map(of).sort((a, b) => a - b);
    const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(1);
    console.log(`${name.padEnd(42)} p50 ${at(0.5).padStart(6)}  p90 ${at(0.9).padStart(6)}  p99 ${at(0.99).padStart(6)}`);
  };
  console.log(
    `lone job timeline, ${times.length} of ${jobs} jobs seen before their queue row went, load ${(await import("node:os")).loadavg()[0]!.toFixed(1)}`,
  );
  part("POST sent → created_at (API)", (t) => t.created - t.sent);
  part("created_at → dispatched_at (commit, round)", (t) => t.dispatched - t.created);
  part("dispatched_at → started_at (BullMQ, claim)", (t) => t.started - t.dispatched);
  part("POST sent → started_at", (t) => t.started - t.sent);
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
