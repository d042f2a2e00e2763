// Transitions "cancelled" (a pending job: waiting to start, delayed, or waiting for a retry) and "cancel requested"
// (a processing job), for one or many jobs in one statement (docs/reference/lifecycle.md#steering). A cancelled job leaves the dispatcher's queue
// at once and never starts; a processing job's worker stops the attempt (the caller tells the workers) and its
// outcome is recorded as cancelled — or done/failed if the handler finished first. Final jobs are left alone.
import type pg from "pg";
import type { JobStatus } from "@conveyor/contracts";
import { EVENT_BASE, EVENTS_CHANNEL, TENANT_JOB } from "../core/job-sql";
import { settleDependents } from "./dependencies";
import { announce, countUsage, eventOf } from "./sql";

export type CancelOutcome = {
  id: string;
  type: string;
  /** The status the job had: pending became cancelled, processing got a cancel request, a final one stayed. */
  previous: JobStatus;
  /** A cancelled job that had been handed to BullMQ (the caller removes it there; a stray delivery is skipped). */
  dispatched: boolean;
  /** Whether this call changed it: pending became cancelled, or processing got its cancellation request now. */
  changed: boolean;
};

/**
 * Cancels the org's jobs among `ids`; ids of other orgs, internal jobs or no job are simply not in the answer. The
 * jobs waiting for a cancelled one are settled in the same transaction (`db` is inside one): cancelled in turn with
 * dependency_failed, or released if they run whatever their dependencies' outcome (docs/reference/lifecycle.md#dependencies).
 */
export async function cancelJobs(db: pg.PoolClient, options: { orgId: string; ids: readonly string[]; by: string }): Promise<CancelOutcome[]> {
  if (options.ids.length === 0) return [];
  const { rows } = await db.query<{ id: string; type: string; previous: JobStatus; dispatched: boolean | null; changed: boolean; settle: boolean | null }>(
    `WITH ${EVENT_BASE}, target AS (
       SELECT j.id, j.type, j.status FROM jobs j
        WHERE j.id = ANY($1::uuid[]) AND j.org_id = $2 AND ${TENANT_JOB("j")}
        ORDER BY j.id
          FOR UPDATE
     ), cancelled AS (
       UPDATE jobs j SET status = 'cancelled', finished_at = now(), updated_at = now(), fence = NULL
         FROM target t WHERE j.id = t.id AND t.status = 'pending'
       RETURNING j.*
     ), requested AS (
       UPDATE jobs j SET cancel_requested_at = now(), updated_at = now()
         FROM target t WHERE j.id = t.id AND t.status = 'processing' AND j.cancel_requested_at IS NULL
       RETURNING j.id, j.retries
     ), ${countUsage("(SELECT c.org_id, c.type, 'pending'::text AS old_status, NULL::timestamptz AS old_started_at, c.status::text AS new_status, c.started_at AS new_started_at FROM cancelled c)")}, dequeued AS (
       DELETE FROM job_queue q USING cancelled c WHERE q.job_id = c.id
       RETURNING q.job_id, q.dispatched_at IS NOT NULL AS dispatched
     ), announced AS (
       ${announce({ from: "(SELECT c.id, c.org_id, c.type, c::jobs AS job FROM cancelled c)", event: eventOf("cancelled") })}
     ), logged AS (
       INSERT INTO job_logs (job_id, attempt, level, message, timestamp)
       SELECT id, attempt, 'warn'::log_level, message, clock_timestamp() FROM (
         SELECT c.id, c.retries + 1 AS attempt, 'Cancelled by ' || $3 || CASE WHEN c.retries = 0 THEN ' before it started.' ELSE ' before its next attempt.' END AS message
           FROM cancelled c
         UNION ALL
         SELECT r.id, r.retries + 1, 'Cancellation requested by ' || $3 || ': stopping attempt ' || (r.retries + 1) || '.'
           FROM requested r
       ) AS lines
     ), notified AS (
       SELECT pg_notify('${EVENTS_CHANNEL}', '') FROM (SELECT 1 FROM cancelled LIMIT 1) AS any_cancelled
     )
     SELECT t.id, t.type, t.status AS previous, d.dispatched, (t.status = 'pending' OR r.id IS NOT NULL) AS changed, (SELECT count(*) FROM notified) AS notified,
            c.dependents > 0 AS settle
       FROM target t LEFT JOIN dequeued d ON d.job_id = t.id LEFT JOIN requested r ON r.id = t.id LEFT JOIN cancelled c ON c.id = t.id`,
    [options.ids, options.orgId, options.by],
  );
  // A waiting job whose last dependency finished while this statement waited for its row lock was given a queue row
  // this statement's snapshot does not show: removed here, in a statement that sees it.
  const cancelled = rows.filter((r) => r.previous === "pending").map((r) => r.id);
  if (cancelled.length) {
    const late = await db.query<{ job_id: string; dispatched: boolean }>(
      "DELETE FROM job_queue WHERE job_id = ANY($1::uuid[]) RETURNING job_id, dispatched_at IS NOT NULL AS dispatched",
      [cancelled],
    );
    for (const row of late.rows) if (row.dispatched) rows.find((r) => r.id === row.job_id)!.dispatched = true;
  }
  await settleDependents(
    db,
    rows.filter((r) => r.settle).map((r) => r.id),
  );
  return rows.map((r) => ({ id: r.id, type: r.type, previous: r.previous, dispatched: r.dispatched === true, changed: r.changed }));
}
