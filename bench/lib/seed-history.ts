// A history of jobs written straight into Postgres (docs/reference/time.md#partitions-and-retention), as the API and the workers would have left it, for
// the benches at millions of jobs: each job with its search values, its events (created, started and its outcome)
// and two log lines, created evenly over `days` days up to now with UUID v7 ids of their creation time. 90 % done,
// 8 % failed (12 error messages per type, each with its own order number, so only normalising groups them), 2 %
// cancelled; the newest 0.1 % still pending (no queue row: nothing runs them in a read bench). Every value is a
// function of the job's number, so the tables agree without reading each other, and the statements are plain
// INSERT … SELECT over generate_series, one statement per 200,000 jobs. Secondary indexes are dropped first and made again after
// (the same definitions, read back from pg_indexes), which is what makes 10 M jobs minutes rather than hours.
import type pg from "pg";

export const HISTORY_TYPES = ["webhook", "send_email", "send_sms", "generate_pdf"];
const CHUNK = 200_000;
const DAY_MS = 86_400_000;
/** The tables the seeder writes; their secondary indexes are rebuilt after. */
export const HISTORY_TABLES = ["jobs", "job_search", "events", "job_logs"];

export type HistoryOptions = { orgId: string; count: number; days: number; onProgress?(done: number): void };

/**
 * The columns every table derives from job number g (its creation ms, id, type, status, times, error), computed
 * once per chunk (MATERIALIZED) and read by the four inserts of the same statement.
 */
const CHUNK_SQL = `
  WITH j AS MATERIALIZED (
    SELECT g, id, type, status, created_at, started_at, finished_at, error
      FROM generate_series($3::bigint, $3::bigint + $4 - 1) AS g
      CROSS JOIN LATERAL (SELECT $1::bigint + floor(g * $2::float8)::bigint AS ms, md5(g::text) AS h) t
      CROSS JOIN LATERAL (
        SELECT (lpad(to_hex(t.ms), 12, '0') || '7' || substr(t.h, 1, 3) || '8' || substr(t.h, 4, 15))::uuid AS id,
               ($6::text[])[1 + g % 4] AS type,
               CASE WHEN g >= $5::bigint - greatest(1, $5::bigint / 1000) THEN 'pending'
                    WHEN g % 50 < 4 THEN 'failed' WHEN g % 50 = 4 THEN 'cancelled' ELSE 'done' END AS status,
               to_timestamp(t.ms / 1000.0) AS created_at,
               to_timestamp((t.ms + 40) / 1000.0) AS started_at,
               to_timestamp((t.ms + 240 + g % 1000) / 1000.0) AS finished_at,
               (ARRAY['quota', 'timeout', 'refused', 'reset', 'throttled', 'unknown', 'invalid', 'missing', 'expired', 'locked', 'moved', 'gone'])[1 + (g / 50) % 12] ||
                 ': provider answered ' || (500 + g % 7) || ' for order ' || g || ' (request ' || t.h::uuid || ')' AS error
      ) x
  ), jobs_added AS (
    INSERT INTO jobs (id, org_id, type, status, payload, max_retries, result, error, created_at, updated_at, started_at, finished_at)
    SELECT j.id, $7, j.type, j.status::job_status,
           jsonb_build_object('url', 'https://example.com/hooks/' || g % 1000, 'payload', jsonb_build_object('order', 'ORD-' || g, 'total', (g % 10000) / 100.0)),
           3,
           CASE WHEN j.status = 'done' THEN jsonb_build_object('status', 200, 'webhook_id', 'msg_' || substr(md5(g::text), 1, 24)) END,
           CASE WHEN j.status = 'failed' THEN j.error END,
           j.created_at, CASE WHEN j.status = 'pending' THEN j.created_at ELSE j.finished_at END,
           CASE WHEN j.status <> 'pending' THEN j.started_at END, CASE WHEN j.status <> 'pending' THEN j.finished_at END
      FROM j
  ), search_added AS (
    INSERT INTO job_search (job_id, org_id, search_values)
    SELECT j.id, $7, ARRAY['https://example.com/hooks/' || g % 1000, 'ORD-' || g, ((g % 10000) / 100.0)::text] FROM j
  ), events_added AS (
    -- Ids: 4 per job in job order (the live ones are (transaction id << 20) + n, also increasing).
    INSERT INTO events (id, org_id, job_id, type, time, data)
    SELECT g * 4 + k, $7, j.id,
           CASE k WHEN 0 THEN 'job.created' WHEN 1 THEN 'job.started'
                  ELSE CASE j.status WHEN 'done' THEN 'job.succeeded' WHEN 'failed' THEN 'job.failed' ELSE 'job.cancelled' END END,
           CASE k WHEN 0 THEN j.created_at WHEN 1 THEN j.started_at ELSE j.finished_at END,
           jsonb_build_object('id', j.id, 'type', j.type,
                              'status', CASE k WHEN 0 THEN 'pending' WHEN 1 THEN 'processing' ELSE j.status END,
                              'retries', 0, 'max_retries', 3, 'created_at', j.created_at,
                              'updated_at', CASE k WHEN 0 THEN j.created_at WHEN 1 THEN j.started_at ELSE j.finished_at END,
                              'result', CASE WHEN k = 2 AND j.status = 'done' THEN jsonb_build_object('status', 200) END,
                              'error', CASE WHEN k = 2 AND j.status = 'failed' THEN j.error END)
      FROM j CROSS JOIN generate_series(0, 2) AS k
     WHERE k = 0 OR j.status <> 'pending'
  )
  INSERT INTO job_logs (job_id, attempt, level, message, timestamp)
  SELECT j.id, 1, CASE WHEN k = 1 AND j.status = 'failed' THEN 'error' ELSE 'info' END::log_level,
         CASE WHEN k = 0 THEN 'Attempt 1 of 4 started.'
              WHEN j.status = 'failed' THEN 'Attempt 1 failed: ' || j.error
              WHEN j.status = 'cancelled' THEN 'Attempt 1 stopped: cancelled.'
              ELSE 'Attempt 1 succeeded.' END,
         CASE k WHEN 0 THEN j.started_at ELSE j.finished_at END
    FROM j CROSS JOIN generate_series(0, 1) AS k
   WHERE j.status <> 'pending'`;

export async function seedHistory(pool: pg.Pool, options: HistoryOptions): Promise<void> {
  const { rows: indexes } = await pool.query<{ name: string; def: string }>(
    `SELECT i.indexname AS name, i.indexdef AS def FROM pg_indexes i
      WHERE i.schemaname = 'public' AND i.tablename = ANY($1)
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    [HISTORY_TABLES],
  );
  for (const index of indexes) await pool.query(`DROP INDEX "${index.name}"`);
  const step = (options.days * DAY_MS) / options.count;
  const startMs = Date.now() - options.days * DAY_MS;
  for (let from = 0; from < options.count; from += CHUNK) {
    const n = Math.min(CHUNK, options.count - from);
    const client = await pool.connect();
    try {
      await client.query("SET synchronous_commit = off");
      await client.query(CHUNK_SQL, [startMs, step, from, n, options.count, HISTORY_TYPES, options.orgId]);
    } finally {
      client.release();
    }
    options.onProgress?.(from + n);
  }
  for (const index of indexes) await pool.query(index.def);
  // What the transitions that failed them would have counted (the migrations' backfills, the same statements).
  await pool.query(
    `INSERT INTO failure_counts (org_id, failure_group, type, failed, first_seen, last_seen, sample_job_id)
     SELECT org_id, failure_group, min(type), count(*), min(finished_at), max(finished_at), (array_agg(id ORDER BY finished_at DESC, id DESC))[1]
       FROM jobs WHERE org_id = $1 AND status = 'failed' AND failure_group IS NOT NULL GROUP BY org_id, failure_group`,
    [options.orgId],
  );
  await pool.query(
    `INSERT INTO failure_counts_daily (org_id, day, failure_group, type, failed, first_seen, last_seen, sample_job_id)
     SELECT org_id, (created_at AT TIME ZONE 'UTC')::date, failure_group, min(type), count(*), min(finished_at), max(finished_at),
            (array_agg(id ORDER BY finished_at DESC, id DESC))[1]
       FROM jobs WHERE org_id = $1 AND status = 'failed' AND failure_group IS NOT NULL
      GROUP BY org_id, (created_at AT TIME ZONE 'UTC')::date, failure_group`,
    [options.orgId],
  );
  for (const table of [...HISTORY_TABLES, "failure_counts", "failure_counts_daily"]) await pool.query(`VACUUM ANALYZE ${table}`);
  await pool.query("CHECKPOINT");
}

export type TableBytes = { heap: number; indexes: number; total: number };

/** Heap, index and total bytes of each table of the database's public schema over 1 MB, largest first. */
export async function tableBytes(pool: pg.Pool): Promise<Record<string, TableBytes>> {
  const { rows } = await pool.query<{ name: string; heap: string; indexes: string; total: string }>(
    `SELECT c.relname AS name, pg_relation_size(c.oid) AS heap, pg_indexes_size(c.oid) AS indexes, pg_total_relation_size(c.oid) AS total
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind = 'r' AND pg_total_relation_size(c.oid) > 1048576
      ORDER BY pg_total_relation_size(c.oid) DESC`,
  );
  return Object.fromEntries(rows.map((r) => [r.name, { heap: Number(r.heap), indexes: Number(r.indexes), total: Number(r.total) }]));
}
