// Retention (SPEC §8): finished jobs older than JOB_RETENTION_DAYS go, with their logs, artifacts, callbacks and
// idempotency keys (foreign keys cascade) and their events, search values and dependency edges (deleted here: the
// hot path writes those without a foreign key). A job a live job depends on stays until that one is final. In small
// statements: every writing transaction holds back the event readers' horizon (events.ts) and its locks, so a batch
// must stay short.
import type pg from "pg";

/**
 * Deletes at most `limit` jobs that finished before `before`, oldest first, and answers how many. Rows another
 * transaction holds are skipped (SKIP LOCKED): the next batch takes them.
 */
export async function deleteFinishedJobs(db: pg.Pool | pg.PoolClient, options: { before: Date; limit: number }): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `WITH gone AS (
       DELETE FROM jobs WHERE id IN (
         SELECT x.id FROM jobs x
          WHERE x.finished_at < $1 AND x.status IN ('done', 'failed', 'cancelled')
            -- Never a job a live job depends on (SPEC §15): its handler reads the job's result and artifact.
            AND NOT (x.dependents > 0 AND EXISTS (
                  SELECT 1 FROM job_dependencies d JOIN jobs w ON w.id = d.job_id
                   WHERE d.depends_on_id = x.id AND w.status IN ('pending', 'processing')))
          ORDER BY x.finished_at
          LIMIT $2
            FOR UPDATE SKIP LOCKED)
       RETURNING id, org_id, status, failure_group
     ), counts_gone AS (
       -- GET /jobs/failures counts the failed jobs there are; a group none is left of goes (failure-groups.ts).
       UPDATE failure_counts c SET failed = c.failed - g.n
         FROM (SELECT org_id, failure_group, count(*)::int AS n FROM gone WHERE status = 'failed' AND failure_group IS NOT NULL
                GROUP BY org_id, failure_group ORDER BY org_id, failure_group) g
        WHERE c.org_id = g.org_id AND c.failure_group = g.failure_group
     ), events_gone AS (
       DELETE FROM events WHERE job_id IN (SELECT id FROM gone)
     ), search_gone AS (
       DELETE FROM job_search WHERE job_id IN (SELECT id FROM gone)
     ), edges_gone AS (
       DELETE FROM job_dependencies WHERE job_id IN (SELECT id FROM gone) OR depends_on_id IN (SELECT id FROM gone)
     ), queue_gone AS (
       DELETE FROM job_queue WHERE job_id IN (SELECT id FROM gone)
     )
     SELECT count(*)::int AS n FROM gone`,
    [options.before, options.limit],
  );
  return rows[0]!.n;
}

/**
 * Deletes at most `limit` webhook delivery records made before `before`, and answers how many. Records are taken in
 * id order, which is the order they were written (their `at` is Postgres' time at the write), from the oldest: the
 * statement reads at most `limit` rows of the primary key and needs no index on `at`. A younger record among the
 * oldest `limit` (a write whose transaction began earlier than it took its id) ends the batch short; the next sweep
 * goes on from there.
 */
export async function deleteWebhookDeliveriesBefore(db: pg.Pool | pg.PoolClient, options: { before: Date; limit: number }): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM webhook_deliveries
      WHERE id IN (SELECT id FROM webhook_deliveries ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
        AND at < $1`,
    [options.before, options.limit],
  );
  return rowCount ?? 0;
}
