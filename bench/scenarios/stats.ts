// 6. GET /jobs/stats (the console's overview) with 1,000,000 jobs in the org, all created within the last ~17 minutes
// (one millisecond apart, ending now, so every one of them is inside both windows: the worst case), 60 % of them
// finished. Measured: the first request, which counts everything older than 30 s into job_stats once; then one
// request at a time for each window. Baseline: the same counts read straight from the jobs on every request (what
// the endpoint would cost without job_stats), timed in this process.
import { load } from "../lib/load";
import { run, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { clearJobs, conveyorEnv, type BenchEnv } from "../lib/setup";

const TYPES = ["webhook", "send_email", "send_sms", "generate_pdf"];

/** `count` jobs one millisecond apart ending now, ids UUID v7 of their creation time; done, failed and cancelled ones finished 0.5 s later. */
export async function seedFinishedJobs(env: BenchEnv, count: number): Promise<void> {
  const startMs = Date.now() - count;
  for (let done = 0; done < count; done += 250_000) {
    await env.db.pool.query(
      `INSERT INTO jobs (id, org_id, type, status, payload, max_retries, created_at, updated_at, finished_at)
       SELECT (lpad(to_hex($3::bigint + g), 12, '0') || '7' || substr(md5(g::text), 1, 3) || '8' || substr(md5(random()::text), 1, 15))::uuid,
              $1, ($5::text[])[1 + g % 4], (ARRAY['pending','processing','done','failed','cancelled'])[1 + g % 5]::job_status,
              jsonb_build_object('n', g), 0, to_timestamp(($3::bigint + g) / 1000.0), to_timestamp(($3::bigint + g) / 1000.0),
              CASE WHEN g % 5 >= 2 THEN to_timestamp(($3::bigint + g + 500) / 1000.0) END
         FROM generate_series($4::bigint, $4::bigint + $2 - 1) AS g`,
      [env.orgId, Math.min(250_000, count - done), startMs, done, TYPES],
    );
  }
  await env.db.pool.query("VACUUM ANALYZE jobs");
  await env.db.pool.query("CHECKPOINT");
}

/** The hour's counts by minute and type read from the jobs alone, as one request would without job_stats. */
async function directCountMs(env: BenchEnv): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await env.db.pool.query(
      `SELECT date_bin('1 minute', t, 'epoch') AS minute, type, sum(c), sum(d), sum(f), sum(x) FROM (
         SELECT created_at AS t, type, 1 AS c, 0 AS d, 0 AS f, 0 AS x FROM jobs
          WHERE org_id = $1 AND created_at >= now() - interval '1 hour' AND left(type, 1) <> '_'
         UNION ALL
         SELECT finished_at, type, 0, (status = 'done')::int, (status = 'failed')::int, (status = 'cancelled')::int FROM jobs
          WHERE org_id = $1 AND finished_at >= now() - interval '1 hour' AND left(type, 1) <> '_'
       ) x GROUP BY 1, 2`,
      [env.orgId],
    );
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[2]!;
}

export async function stats(env: BenchEnv, port: number, count: number, durationS: number): Promise<Row[]> {
  await seedFinishedJobs(env, count);
  const baseline = await directCountMs(env);
  let api: Child | undefined;
  try {
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(port) }));
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    const url = (window: string) => `http://127.0.0.1:${port}/jobs/stats?window=${window}`;
    const headers = { "x-api-key": env.apiKey };
    const started = performance.now();
    const first = await fetch(url("hour"), { headers });
    const firstMs = performance.now() - started;
    const body = (await first.json()) as { buckets: { created: number }[] };
    const created = body.buckets.reduce((n, b) => n + b.created, 0);
    if (first.status !== 200 || created !== count) throw new Error(`GET /jobs/stats answered ${first.status} counting ${created} created jobs of ${count}`);
    const hour = await load({ url: url("hour"), headers, durationS, connections: 1 });
    const day = await load({ url: url("day"), headers, durationS, connections: 1 });
    if (hour.non2xx || day.non2xx) throw new Error(`GET /jobs/stats refused ${hour.non2xx + day.non2xx} requests`);
    const scenario = `GET /jobs/stats (${(count / 1e6).toFixed(1)} M jobs in the last 17 min)`;
    const baselineName = "the hour counted from jobs per request";
    return [
      { scenario, metric: "first request (counts the backlog into job_stats)", conveyor: firstMs, baseline, baselineName, unit: "ms" },
      { scenario, metric: "window=hour p50, one request in flight", conveyor: hour.p50, baseline, baselineName, unit: "ms" },
      {
        scenario,
        metric: "window=hour p99, one request in flight",
        conveyor: hour.p99,
        baseline,
        baselineName,
        unit: "ms",
        target: "≤ 150 ms",
        met: hour.p99 <= 150,
      },
      {
        scenario,
        metric: "window=day p99, one request in flight",
        conveyor: day.p99,
        baseline,
        baselineName,
        unit: "ms",
        target: "≤ 150 ms",
        met: day.p99 <= 150,
      },
    ];
  } finally {
    await api?.stop();
    await clearJobs(env.db);
  }
}
