// Failures grouped by error (issue 23): GET /jobs/failures p99 with one request in flight at 1,000,000 jobs in the org,
// created over the last 30 days, a quarter of them failed with errors of 48 kinds (each with its own numbers, ids and
// quoted values), beside the first page of the list (GET /jobs?limit=100) of the same table in the same run: every
// group (read from failure_counts); one type's groups of the last day (today's row of failure_counts_daily, and
// yesterday's part of the range from the failed jobs, jobs_failed_type_created_idx); one type's and every type's
// groups of the last 30 days (29 whole days from failure_counts_daily, the partial first day from the jobs) — each of
// which read every failure in range from the jobs before the daily counts (62,500 of a type).
import { run, waitForHttp, type Child } from "../lib/procs";
import type { Row } from "../lib/report";
import { sequential } from "../lib/sequential";
import { clearJobs, conveyorEnv, type BenchEnv } from "../lib/setup";

const TYPES = ["webhook", "send_email", "send_sms", "generate_pdf"];

const DAY_MS = 86_400_000;
/** The seeded jobs were created over this many days, up to the seeding. */
const SPREAD_DAYS = 30;

/**
 * `count` jobs with time-ordered ids, created evenly over the last SPREAD_DAYS days, a quarter failed: 12 error
 * messages per type, each failure with its own order number, job id and quoted value, so only normalising groups them.
 */
async function seedFailures(env: BenchEnv, count: number): Promise<void> {
  const startMs = Date.now() - SPREAD_DAYS * DAY_MS;
  // Milliseconds between two jobs' creation.
  const step = (SPREAD_DAYS * DAY_MS) / count;
  for (let done = 0; done < count; done += 250_000) {
    await env.db.pool.query(
      `INSERT INTO jobs (id, org_id, type, status, payload, max_retries, created_at, updated_at, finished_at, error)
       SELECT (lpad(to_hex(t.ms), 12, '0') || '7' || substr(md5(g::text), 1, 3) || '8' || substr(md5(random()::text), 1, 15))::uuid,
              $1, ($5::text[])[1 + g % 4], (ARRAY['pending','processing','done','failed'])[1 + (g / 4) % 4]::job_status,
              jsonb_build_object('n', g), 0, to_timestamp(t.ms / 1000.0), to_timestamp(t.ms / 1000.0),
              CASE WHEN (g / 4) % 4 >= 2 THEN to_timestamp((t.ms + 500) / 1000.0) END,
              CASE WHEN (g / 4) % 4 = 3 THEN
                (ARRAY['quota', 'timeout', 'refused', 'reset', 'throttled', 'unknown', 'invalid', 'missing', 'expired', 'locked', 'moved', 'gone'])[1 + (g / 16) % 12] ||
                ': provider answered ' || (500 + g % 7) || ' for order ' || g ||
                ' (request ' || md5(g::text)::uuid || ', template "t-' || g % 97 || '")' END
         FROM generate_series($4::bigint, $4::bigint + $2 - 1) AS g CROSS JOIN LATERAL (SELECT $3::bigint + floor(g * $6::float8)::bigint AS ms) t`,
      [env.orgId, Math.min(250_000, count - done), startMs, done, TYPES, step],
    );
  }
  // What the transitions that failed them would have counted (the migrations' backfills, the same statements).
  await env.db.pool.query(
    `INSERT INTO failure_counts (org_id, failure_group, type, failed, first_seen, last_seen, sample_job_id)
     SELECT org_id, failure_group, min(type), count(*), min(finished_at), max(finished_at), (array_agg(id ORDER BY finished_at DESC, id DESC))[1]
       FROM jobs WHERE org_id = $1 AND status = 'failed' AND failure_group IS NOT NULL GROUP BY org_id, failure_group`,
    [env.orgId],
  );
  await env.db.pool.query(
    `INSERT INTO failure_counts_daily (org_id, day, failure_group, type, failed, first_seen, last_seen, sample_job_id)
     SELECT org_id, (created_at AT TIME ZONE 'UTC')::date, failure_group, min(type), count(*), min(finished_at), max(finished_at),
            (array_agg(id ORDER BY finished_at DESC, id DESC))[1]
       FROM jobs WHERE org_id = $1 AND status = 'failed' AND failure_group IS NOT NULL
      GROUP BY org_id, (created_at AT TIME ZONE 'UTC')::date, failure_group`,
    [env.orgId],
  );
  await env.db.pool.query("VACUUM ANALYZE jobs");
  await env.db.pool.query("CHECKPOINT");
}

export async function failures(env: BenchEnv, port: number, count: number, durationS: number): Promise<Row[]> {
  await seedFailures(env, count);
  let api: Child | undefined;
  try {
    api = run("apps/api/src/server.ts", conveyorEnv(env, { PORT: String(port) }));
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    const origin = `http://127.0.0.1:${port}`;
    const headers = { "x-api-key": env.apiKey };
    const groups = (expected: number) => (status: number, text: string) => {
      if (status !== 200) throw new Error(`GET /jobs/failures answered ${status}: ${text.slice(0, 200)}`);
      const body = JSON.parse(text) as { groups: { count: number }[] };
      if (body.groups.length !== expected) throw new Error(`GET /jobs/failures answered ${body.groups.length} groups, not ${expected}`);
    };
    const page = await sequential({ origin, path: () => "/jobs?limit=100", headers, durationS });
    const all = await sequential({ origin, path: () => "/jobs/failures", headers, durationS, check: groups(TYPES.length * 12) });
    const since = (days: number) => encodeURIComponent(new Date(Date.now() - days * DAY_MS).toISOString());
    const narrowed = await sequential({
      origin,
      path: (i) => `/jobs/failures?type=${TYPES[i % TYPES.length]}&created_after=${since(1)}`,
      headers,
      durationS,
      check: groups(12),
    });
    const month = await sequential({
      origin,
      path: (i) => `/jobs/failures?type=${TYPES[i % TYPES.length]}&created_after=${since(SPREAD_DAYS)}`,
      headers,
      durationS,
      check: groups(12),
    });
    const monthAll = await sequential({
      origin,
      path: () => `/jobs/failures?created_after=${since(SPREAD_DAYS)}`,
      headers,
      durationS,
      check: groups(TYPES.length * 12),
    });
    const scenario = `GET /jobs/failures (${(count / 1e6).toFixed(1)} M jobs, ${(count / 4 / 1e3).toFixed(0)} k failed)`;
    // Each grouping's p99 beside the same table's first page, against the issue's ≤ 200 ms.
    const p99Row = (metric: string, p99: number): Row => ({
      scenario,
      metric: `${metric} p99, one in flight`,
      conveyor: p99,
      baseline: page.p99,
      baselineName: "GET /jobs?limit=100, same table",
      unit: "ms",
      target: "≤ 200 ms",
      met: p99 <= 200,
    });
    const days = `${SPREAD_DAYS - 1} whole days' counts + 1 partial day from the jobs`;
    return [
      p99Row("grouping every failure", all.p99),
      {
        scenario,
        metric: `grouping every failure p50 (${all.count} requests)`,
        conveyor: all.p50,
        baseline: page.p50,
        baselineName: "GET /jobs?limit=100, same table",
        unit: "ms",
      },
      p99Row("one type, last day (today's daily count + yesterday's part from the jobs)", narrowed.p99),
      p99Row(`one type, last ${SPREAD_DAYS} days (${days})`, month.p99),
      p99Row(`every type, last ${SPREAD_DAYS} days (${days})`, monthAll.p99),
    ];
  } finally {
    await api?.stop();
    await clearJobs(env.db);
    await env.db.pool.query("TRUNCATE failure_counts, failure_counts_daily");
  }
}
