// Retention (SPEC §8): finished jobs older than JOB_RETENTION_DAYS go, with their logs, events, artifacts,
// callbacks and idempotency keys (foreign keys cascade). In small statements: every writing transaction holds
// back the event readers' horizon (events.ts) and its locks, so a batch must stay short.
import type pg from "pg";

/**
 * Deletes at most `limit` jobs that finished before `before`, oldest first, and answers how many. Rows another
 * transaction holds are skipped (SKIP LOCKED): the next batch takes them.
 */
export async function deleteFinishedJobs(db: pg.Pool | pg.PoolClient, options: { before: Date; limit: number }): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM jobs WHERE id IN (
       SELECT id FROM jobs
        WHERE finished_at < $1 AND status IN ('done', 'failed', 'cancelled')
        ORDER BY finished_at
        LIMIT $2
          FOR UPDATE SKIP LOCKED)`,
    [options.before, options.limit],
  );
  return rowCount ?? 0;
}
