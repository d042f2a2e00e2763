// The numbers behind the console's overview (GET /jobs/stats): jobs created and finished per minute and type, and the
// organization's queue right now. Counting a busy day from `jobs` on every request would read every job of the day, so
// minutes that are over are counted once into `job_stats` ("rolled up") and each request counts only what came since
// from `jobs`: created ones through the time-ordered ids (jobs_org_id_id_idx), finished ones through
// jobs_org_id_finished_at_idx. Internal jobs (types starting with `_`) are never counted.
import type pg from "pg";
import { DUE_LATER, TENANT_JOB } from "../core/job-sql";
import { inTransaction } from "../core/transaction";

export type JobCounts = { created: number; done: number; failed: number; cancelled: number };

/**
 * Ids are UUID v7 made from the API's clock when the job is created, and created_at from the same instant; the id
 * bound is this much looser than the created_at bound, for clocks that disagree a little.
 */
const ID_CLOCK_MARGIN_MS = 60_000;

/** The smallest UUID v7 of the millisecond `ms`: every id made at or after `ms` sorts after it. */
export function uuidFloor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

const ROLL_SQL = `
  WITH counted AS (
    SELECT date_bin('1 minute', j.created_at, 'epoch') AS minute, j.type, 1 AS created, 0 AS done, 0 AS failed, 0 AS cancelled
      FROM jobs j
     WHERE j.org_id = $1 AND j.id >= $4::uuid AND j.created_at >= $2 AND j.created_at < $3 AND ${TENANT_JOB("j")}
    UNION ALL
    SELECT date_bin('1 minute', j.finished_at, 'epoch'), j.type, 0, (j.status = 'done')::int, (j.status = 'failed')::int, (j.status = 'cancelled')::int
      FROM jobs j
     WHERE j.org_id = $1 AND j.finished_at >= $2 AND j.finished_at < $3 AND ${TENANT_JOB("j")}
  ), added AS (
    INSERT INTO job_stats AS s (org_id, minute, type, created, done, failed, cancelled)
    SELECT $1, minute, type, sum(created), sum(done), sum(failed), sum(cancelled) FROM counted GROUP BY minute, type
    ON CONFLICT (org_id, minute, type) DO UPDATE
      SET created = s.created + EXCLUDED.created, done = s.done + EXCLUDED.done,
          failed = s.failed + EXCLUDED.failed, cancelled = s.cancelled + EXCLUDED.cancelled
  ), pruned AS (
    DELETE FROM job_stats WHERE org_id = $1 AND minute < $5
  )
  INSERT INTO job_stats_progress (org_id, rolled_until) VALUES ($1, $3)
  ON CONFLICT (org_id) DO UPDATE SET rolled_until = EXCLUDED.rolled_until`;

/**
 * Counts the organization's jobs created or finished in [where it got to, `until`) into job_stats, starting no earlier
 * than `from` (rows before `from` are deleted: nothing shows them any more). One roller per organization at a time
 * (an advisory lock), so API replicas never count a job twice. Returns how far job_stats now counts.
 *
 * `until` must lie far enough in the past that nothing created or finished before it can still commit: a job
 * committed later with an older timestamp would be missed.
 */
export async function rollJobStats(pool: pg.Pool, input: { orgId: string; from: Date; until: Date }): Promise<Date> {
  const { orgId, from, until } = input;
  return inTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`job-stats:${orgId}`]);
    const { rows } = await client.query<{ rolled_until: Date }>("SELECT rolled_until FROM job_stats_progress WHERE org_id = $1", [orgId]);
    const reached = rows[0]?.rolled_until;
    const start = reached && reached > from ? reached : from;
    if (until <= start) {
      return start;
    }
    await client.query(ROLL_SQL, [orgId, start, until, uuidFloor(start.getTime() - ID_CLOCK_MARGIN_MS), from]);
    return until;
  });
}

export type BucketCounts = JobCounts & { bucket: number; type: string };

/**
 * The organization's jobs created and finished since `start`, by bucket (`bucketMs` wide, the first starting at
 * `start`, the last running on to now) and type: job_stats up to `rolledUntil`, the jobs themselves after it. A time
 * past the last bucket's start (a clock a little ahead) counts in the last bucket. Buckets or types without jobs are
 * absent.
 */
export async function countJobsByBucket(
  pool: pg.Pool | pg.PoolClient,
  query: { orgId: string; start: Date; bucketMs: number; buckets: number; rolledUntil: Date | null },
): Promise<BucketCounts[]> {
  const { orgId, start, bucketMs, buckets } = query;
  const rolled = query.rolledUntil && query.rolledUntil > start ? query.rolledUntil : start;
  const { rows } = await pool.query<BucketCounts>(
    `SELECT least(floor(extract(epoch FROM x.t - $2::timestamptz) * 1000 / $3), $4 - 1)::int AS bucket, x.type,
            sum(x.created)::int AS created, sum(x.done)::int AS done, sum(x.failed)::int AS failed, sum(x.cancelled)::int AS cancelled
       FROM (
         SELECT s.minute AS t, s.type, s.created, s.done, s.failed, s.cancelled
           FROM job_stats s WHERE s.org_id = $1 AND s.minute >= $2 AND s.minute < $5
         UNION ALL
         SELECT j.created_at, j.type, 1, 0, 0, 0
           FROM jobs j WHERE j.org_id = $1 AND j.id >= $6::uuid AND j.created_at >= $5 AND ${TENANT_JOB("j")}
         UNION ALL
         SELECT j.finished_at, j.type, 0, (j.status = 'done')::int, (j.status = 'failed')::int, (j.status = 'cancelled')::int
           FROM jobs j WHERE j.org_id = $1 AND j.finished_at >= $5 AND ${TENANT_JOB("j")}
       ) x
      GROUP BY 1, 2`,
    [orgId, start, bucketMs, buckets, rolled, uuidFloor(rolled.getTime() - ID_CLOCK_MARGIN_MS)],
  );
  return rows;
}

export type QueueCounts = { pending: number; processing: number; waiting_due: number; delayed: number };

/**
 * The organization's live jobs at `now`, in one statement (one snapshot), so the parts add up: `pending` and
 * `processing` as the jobs list counts them (their status); of the pending ones, `delayed` are due later (run_at or a
 * retry's wait) and `waiting_due` are all the others — due and waiting for a worker, handed over and about to start,
 * or waiting for other jobs or a limit. pending = waiting_due + delayed, always.
 */
export async function countQueue(pool: pg.Pool | pg.PoolClient, query: { orgId: string; now: Date }): Promise<QueueCounts> {
  const { rows } = await pool.query<{ pending: number; processing: number; delayed: number }>(
    `SELECT count(*) FILTER (WHERE j.status = 'pending')::int AS pending,
            count(*) FILTER (WHERE j.status = 'processing')::int AS processing,
            count(*) FILTER (WHERE j.status = 'pending' AND ${DUE_LATER("q", "$2")})::int AS delayed
       FROM jobs j LEFT JOIN job_queue q ON q.job_id = j.id
      WHERE j.org_id = $1 AND j.status IN ('pending', 'processing') AND ${TENANT_JOB("j")}`,
    [query.orgId, query.now],
  );
  const row = rows[0] ?? { pending: 0, processing: 0, delayed: 0 };
  return { pending: row.pending, processing: row.processing, waiting_due: row.pending - row.delayed, delayed: row.delayed };
}

/** How far job_stats counts for the organization, as `db` sees it (a replica's answer matches its own job_stats). */
export async function statsRolledUntil(db: pg.Pool | pg.PoolClient, orgId: string): Promise<Date | null> {
  const { rows } = await db.query<{ rolled_until: Date }>("SELECT rolled_until FROM job_stats_progress WHERE org_id = $1", [orgId]);
  return rows[0]?.rolled_until ?? null;
}
