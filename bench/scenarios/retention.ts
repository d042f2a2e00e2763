// docs/reference/lifecycle.md#steering retention under load: 1,000,000 expired finished jobs (each with a log line and an event) are deleted by
// the leader worker while POST /jobs runs at half its measured capacity (fixed rate). POST p99 is compared with the
// same rate, same processes, before deletion starts (the worker running with JOB_RETENTION_DAYS=0); target ≤ 1.5×.
// Also reported: how fast the backlog goes while the API is under that load.
import { fixedRate } from "../lib/fixed-rate";
import { load } from "../lib/load";
import { run, sleep, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, clearPrefix, conveyorEnv, type BenchEnv } from "../lib/setup";
import { NOOP_PLUGIN } from "./worker";

/** `count` jobs that finished 40 days ago (done, failed or cancelled), each with one log line and one event. */
async function seedExpiredJobs(env: BenchEnv, count: number): Promise<void> {
  const startMs = Date.now() - 50 * 86_400_000;
  for (let done = 0; done < count; done += 250_000) {
    const n = Math.min(250_000, count - done);
    await env.db.pool.query(
      `WITH inserted AS (
         INSERT INTO jobs (id, org_id, type, status, payload, max_retries, created_at, updated_at, finished_at)
         SELECT (lpad(to_hex($3::bigint + g), 12, '0') || '7' || substr(md5(g::text), 1, 3) || '8' || substr(md5(random()::text), 1, 15))::uuid,
                $1, 'webhook', (ARRAY['done','failed','cancelled'])[1 + g % 3]::job_status,
                jsonb_build_object('url', 'https://example.com/hooks/' || g), 0,
                to_timestamp(($3::bigint + g) / 1000.0), to_timestamp(($3::bigint + g) / 1000.0), now() - interval '40 days'
           FROM generate_series($4::bigint, $4::bigint + $2 - 1) AS g
         RETURNING id, org_id, created_at
       ), logged AS (
         INSERT INTO job_logs (job_id, attempt, level, message, timestamp)
         SELECT id, 1, 'info', 'Attempt 1 of 1 started.', created_at FROM inserted
       )
       INSERT INTO events (id, org_id, job_id, type, time, data)
       SELECT $4::bigint + row_number() OVER () , org_id, id, 'job.created', created_at, '{}'::jsonb FROM inserted`,
      [env.orgId, n, startMs, done + 1],
    );
  }
  await env.db.pool.query("VACUUM ANALYZE jobs, job_logs, events");
  await env.db.pool.query("CHECKPOINT");
}

const body = JSON.stringify({ type: "webhook", payload: { url: "https://example.com/hooks/orders", payload: { order: 42, total: "19.90" } } });

async function expiredLeft(env: BenchEnv): Promise<number> {
  const { rows } = await env.db.pool.query<{ n: string }>("SELECT count(*) AS n FROM jobs WHERE finished_at < now() - interval '30 days'");
  return Number(rows[0]!.n);
}

export async function retention(env: BenchEnv, ports: { api: number; worker: number }, count: number, durationS: number): Promise<Row[]> {
  await seedExpiredJobs(env, count);
  let api: Child | undefined;
  let worker: Child | undefined;
  // The worker serves only the no-op type: the webhook jobs POSTed here wait in Postgres, as they would for a
  // type whose workers are busy, and no handler competes for the CPU.
  const startWorker = async (days: number) => {
    const child = run(
      "apps/worker/src/main.ts",
      conveyorEnv(env, {
        WORKER_TYPES: "bench_noop",
        WORKER_PLUGINS: NOOP_PLUGIN,
        WORKER_METRICS_PORT: String(ports.worker),
        JOB_RETENTION_DAYS: String(days),
      }),
    );
    await waitForHttp(`http://127.0.0.1:${ports.worker}/healthz`);
    return child;
  };
  try {
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(ports.api) }));
    await waitForHttp(`http://127.0.0.1:${ports.api}/healthz`);
    const target = { url: `http://127.0.0.1:${ports.api}/jobs`, method: "POST" as const, body, headers: { "x-api-key": env.apiKey } };
    worker = await startWorker(0);
    await load({ ...target, durationS: 1 });
    const capacity = await load({ ...target, durationS });
    const rate = Math.round(capacity.rps / 2);
    const quiet = await fixedRate({ ...target, durationS, rate, connections: 128, warmupS: 2 });
    await worker.stop();
    worker = undefined;

    const before = await expiredLeft(env);
    worker = await startWorker(30);
    // The new worker leads within a second or two and starts deleting at once.
    const leadBy = Date.now() + 15_000;
    while ((await expiredLeft(env)) === before && Date.now() < leadBy) await sleep(100);
    const atStart = await expiredLeft(env);
    const started = performance.now();
    const deleting = await fixedRate({ ...target, durationS, rate, connections: 128, warmupS: 2 });
    const seconds = (performance.now() - started) / 1000;
    const atEnd = await expiredLeft(env);
    for (const result of [quiet, deleting]) {
      if (result.non2xx || result.errors) throw new Error(`POST /jobs answered non-2xx ${result.non2xx} times and failed ${result.errors} times`);
    }
    const throughout = atEnd > 0 ? "" : " (the backlog ran out during the measurement)";
    const scenario = `Retention (${(count / 1e6).toFixed(2)} M expired jobs)`;
    return [
      {
        scenario,
        metric: `POST /jobs p99 at ${rate} req/s (50 %) while deleting${throughout}`,
        conveyor: deleting.p99,
        baseline: quiet.p99,
        baselineName: "same rate, no deletion",
        unit: "ms",
        target: "≤ 1.5× baseline",
        met: deleting.p99 <= 1.5 * quiet.p99,
      },
      { scenario, metric: "POST /jobs p50 while deleting", conveyor: deleting.p50, baseline: quiet.p50, baselineName: "same rate, no deletion", unit: "ms" },
      {
        scenario,
        metric: "jobs deleted per second under that load",
        conveyor: (atStart - atEnd) / seconds,
        baseline: null,
        baselineName: "",
        unit: "jobs/s",
      },
    ];
  } finally {
    await worker?.stop();
    await api?.stop();
    await clearJobs(env.db);
    await clearPrefix(env.prefix);
  }
}
