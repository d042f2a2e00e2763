// Retention (docs/reference/lifecycle.md#steering): finished jobs older than JOB_RETENTION_DAYS go, with their logs, artifacts, callbacks and
// idempotency keys (foreign keys cascade) and their events, search values and dependency edges (deleted here: the
// hot path writes those without a foreign key). A job a live job depends on stays until that one is final. Ended
// waitpoints (docs/reference/lifecycle.md#waitpoints-and-durable-steps) go the same way once no job left depends on them. In small statements: every writing
// transaction holds back the event readers' horizon (events/events.ts) and its locks, so a batch must stay short.
// Partitioned tables (the audit log, the webhook deliveries: docs/reference/time.md#partitions-and-retention) lose
// whole partitions instead (dropPartitionsBefore); only their DEFAULT partition is deleted from in batches.
import pg from "pg";
import { utcDay } from "../core/job-sql";
import { inTransaction } from "../core/transaction";
import {
  defaultPartition,
  listPartitions,
  LOCK_NOT_AVAILABLE,
  LOCK_TIMEOUT,
  PARTITION_LOCK_TIMEOUT_MS,
  WEBHOOK_DELIVERY_PARTITIONS,
  type PartitionedTable,
} from "./partitions";

/**
 * Deletes at most `limit` jobs that finished before `before`, oldest first, and answers how many. Rows another
 * transaction holds are skipped (SKIP LOCKED): the next batch takes them.
 */
export async function deleteFinishedJobs(db: pg.Pool | pg.PoolClient, options: { before: Date; limit: number }): Promise<number> {
  const { rows } = await db.query<{ n: number; emptied: { org_id: string; day: string; failure_group: string }[] | null }>(
    `WITH gone AS (
       DELETE FROM jobs WHERE id IN (
         SELECT x.id FROM jobs x
          WHERE x.finished_at < $1 AND x.status IN ('done', 'failed', 'cancelled')
            -- Never a job a live job depends on (docs/reference/lifecycle.md#dependencies): its handler reads the job's result and artifact.
            AND NOT (x.dependents > 0 AND EXISTS (
                  SELECT 1 FROM job_dependencies d JOIN jobs w ON w.id = d.job_id
                   WHERE d.depends_on_id = x.id AND w.status IN ('pending', 'processing')))
          ORDER BY x.finished_at
          LIMIT $2
            FOR UPDATE SKIP LOCKED)
       RETURNING id, org_id, status, failure_group, created_at
     ), counts_gone AS (
       -- GET /jobs/failures counts the failed jobs there are; a group none is left of goes (failure-groups.ts).
       UPDATE failure_counts c SET failed = c.failed - g.n
         FROM (SELECT org_id, failure_group, count(*)::int AS n FROM gone WHERE status = 'failed' AND failure_group IS NOT NULL
                GROUP BY org_id, failure_group ORDER BY org_id, failure_group) g
        WHERE c.org_id = g.org_id AND c.failure_group = g.failure_group
     ), days_gone AS (
       -- And by creation day, in the same key order as the transitions count them (job-machine/sql.ts).
       UPDATE failure_counts_daily d SET failed = d.failed - g.n
         FROM (SELECT org_id, ${utcDay("created_at")} AS day, failure_group, count(*)::int AS n FROM gone WHERE status = 'failed' AND failure_group IS NOT NULL
                GROUP BY 1, 2, 3 ORDER BY 1, 2, 3) g
        WHERE d.org_id = g.org_id AND d.day = g.day AND d.failure_group = g.failure_group
       RETURNING d.org_id, d.day, d.failure_group, d.failed
     ), events_gone AS (
       DELETE FROM events WHERE job_id IN (SELECT id FROM gone)
     ), search_gone AS (
       DELETE FROM job_search WHERE job_id IN (SELECT id FROM gone)
     ), edges_gone AS (
       DELETE FROM job_dependencies WHERE job_id IN (SELECT id FROM gone) OR depends_on_id IN (SELECT id FROM gone)
     ), queue_gone AS (
       DELETE FROM job_queue WHERE job_id IN (SELECT id FROM gone)
     ), steps_gone AS (
       DELETE FROM job_steps WHERE job_id IN (SELECT id FROM gone)
     )
     SELECT (SELECT count(*)::int FROM gone) AS n,
            (SELECT json_agg(json_build_object('org_id', org_id, 'day', day, 'failure_group', failure_group)) FROM days_gone WHERE failed <= 0) AS emptied`,
    [options.before, options.limit],
  );
  const { n, emptied } = rows[0]!;
  if (emptied) await trimFailureDays(db, emptied);
  return n;
}

/**
 * Deletes the failure_counts_daily rows of `days` that count no failed job any more (retention deleted the last of
 * them): old days go with their jobs. Apart from the statement that emptied them, so a failure counted meanwhile
 * (a job of that day failing only now) is never lost: the row is deleted only if it still counts none.
 */
async function trimFailureDays(db: pg.Pool | pg.PoolClient, days: { org_id: string; day: string; failure_group: string }[]): Promise<void> {
  await db.query(
    `DELETE FROM failure_counts_daily d
      WHERE (d.org_id, d.day, d.failure_group) IN (
              -- Locked in key order, as the transitions lock them (job-machine/sql.ts): never a wait in a cycle.
              SELECT x.org_id, x.day, x.failure_group FROM failure_counts_daily x
                JOIN unnest($1::uuid[], $2::date[], $3::text[]) AS t(org_id, day, failure_group)
                  ON x.org_id = t.org_id AND x.day = t.day AND x.failure_group = t.failure_group
               WHERE x.failed <= 0
               ORDER BY x.org_id, x.day, x.failure_group
                 FOR UPDATE OF x)
        AND d.failed <= 0`,
    [days.map((d) => d.org_id), days.map((d) => d.day), days.map((d) => d.failure_group)],
  );
}

const DELIVERIES_DEFAULT = pg.escapeIdentifier(defaultPartition(WEBHOOK_DELIVERY_PARTITIONS));

/**
 * Deletes at most `limit` webhook delivery records made before `before` from the DEFAULT partition, and answers how
 * many: the days that have a partition go whole (dropPartitionsBefore); DEFAULT holds only what was written while its
 * day had none (docs/reference/time.md#partitions-and-retention), so it is small, and its records before the cut-off
 * are found by reading it in id order (the order they were written), oldest first, on the primary key.
 */
export async function deleteWebhookDeliveriesBefore(db: pg.Pool | pg.PoolClient, options: { before: Date; limit: number }): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM ${DELIVERIES_DEFAULT}
      WHERE id IN (SELECT id FROM ${DELIVERIES_DEFAULT} WHERE at < $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [options.before, options.limit],
  );
  return rowCount ?? 0;
}

/**
 * Deletes at most `limit` waitpoints that ended (completed, expired, cancelled) before `before`, oldest end first,
 * with their events, and answers how many. A waitpoint a job still there depends on (an edge of `depends_on` or of a
 * `ctx.waitFor` step) stays: that job's graph, `ctx.dependencies` and replays read it. Its dependents' own retention
 * deletes their edges, and a later sweep takes it. The candidates are locked first (SKIP LOCKED: a job being created
 * on one holds it FOR SHARE and keeps it) and checked for edges again in a second statement, whose snapshot sees every
 * edge committed before the lock was taken; no new edge can reach a waitpoint while it is locked.
 */
export async function deleteEndedWaitpoints(pool: pg.Pool, options: { before: Date; limit: number }): Promise<number> {
  return inTransaction(pool, async (tx) => {
    const { rows: locked } = await tx.query<{ id: string }>(
      `SELECT w.id FROM waitpoints w
        WHERE w.status <> 'waiting' AND w.finished_at < $1
          AND NOT EXISTS (SELECT 1 FROM job_dependencies d WHERE d.depends_on_id = w.id)
          AND NOT EXISTS (SELECT 1 FROM job_steps s WHERE s.waitpoint_id = w.id)
        ORDER BY w.finished_at
        LIMIT $2
          FOR UPDATE OF w SKIP LOCKED`,
      [options.before, options.limit],
    );
    if (locked.length === 0) return 0;
    const { rows } = await tx.query<{ n: number }>(
      `WITH gone AS (
         DELETE FROM waitpoints w
          WHERE w.id = ANY($1::uuid[])
            AND NOT EXISTS (SELECT 1 FROM job_dependencies d WHERE d.depends_on_id = w.id)
            AND NOT EXISTS (SELECT 1 FROM job_steps s WHERE s.waitpoint_id = w.id)
         RETURNING w.id
       ), events_gone AS (
         DELETE FROM events WHERE job_id IN (SELECT id FROM gone)
       )
       SELECT count(*)::int AS n FROM gone`,
      [locked.map((r) => r.id)],
    );
    return rows[0]!.n;
  });
}

/**
 * Retention by partition: detaches and drops every partition of `spec.table` whose whole range ends at or before
 * `before` (never one holding a row younger than it), oldest first, each in its own transaction with a lock timeout:
 * detaching takes the parent's ACCESS EXCLUSIVE lock (no DETACH CONCURRENTLY beside a DEFAULT partition), and a reader
 * holding the parent must not be waited on for long, nor queue every other reader behind the pass. A partition whose
 * lock is not had in time stays; the pass stops there and answers `blocked`, and the next round tries again.
 * Answers the partitions dropped.
 */
export async function dropPartitionsBefore(
  pool: pg.Pool,
  spec: PartitionedTable,
  before: Date,
  options: { lockTimeoutMs?: number } = {},
): Promise<{ dropped: string[]; blocked: boolean }> {
  const dropped: string[] = [];
  for (const partition of await listPartitions(pool, spec)) {
    if (partition.end.getTime() > before.getTime()) break;
    try {
      await inTransaction(pool, async (tx) => {
        await tx.query(LOCK_TIMEOUT, [`${options.lockTimeoutMs ?? PARTITION_LOCK_TIMEOUT_MS}ms`]);
        await tx.query(`ALTER TABLE ${pg.escapeIdentifier(spec.table)} DETACH PARTITION ${pg.escapeIdentifier(partition.name)}`);
        await tx.query(`DROP TABLE ${pg.escapeIdentifier(partition.name)}`);
      });
    } catch (error) {
      if ((error as { code?: string }).code === LOCK_NOT_AVAILABLE) return { dropped, blocked: true };
      throw error;
    }
    dropped.push(partition.name);
  }
  return { dropped, blocked: false };
}
