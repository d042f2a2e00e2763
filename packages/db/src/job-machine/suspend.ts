// Transitions "suspended for a sleep" and "suspended for a wait" (docs/reference/lifecycle.md#waitpoints-and-durable-steps): a handler's ctx.sleep or ctx.waitFor ends
// its attempt without spending a retry, under the attempt's fence. The job goes back to pending like any job that
// is due later or held back, so the claim treats a resumed job like any other:
//   - a sleep: its queue row is due at the wake time (run_at), not handed over; waiting_for answers run_at;
//   - a wait: it has no queue row and one more dependency pending, an edge to the waitpoint (job_dependencies), so
//     the waitpoint's end releases it exactly as a finished dependency does (dependencies.ts; an expired or
//     cancelled waitpoint releases it too instead of cancelling it: the handler's ctx.waitFor hears of it).
// Each writes the step's row, the job's row, its queue row, the job.retrying event (as a released attempt does) and
// the notifications in one statement. A job someone asked to cancel is not suspended (the caller's attempt then
// ends as cancelled through the ordinary outcome path).
import type pg from "pg";
import { DISPATCH_CHANNEL, EVENT_BASE, EVENTS_CHANNEL } from "../core/job-sql";
import { inTransaction } from "../core/transaction";
import { announce, countUsage, eventOf } from "./sql";

/** The job row's change when an attempt is suspended: pending, no fence, no retry spent. */
const SUSPENDED = `status = 'pending', fence = NULL, finished_at = NULL, updated_at = now()`;
const OWNED = `j.id = $1 AND j.fence = $2 AND j.status = 'processing' AND j.cancel_requested_at IS NULL`;
/** The attempt a suspension ends, counted in usage (it was processing; its started_at does not change). */
const COUNTED = countUsage(
  "(SELECT a.org_id, a.type, 'processing'::text AS old_status, a.started_at AS old_started_at, a.status::text AS new_status, a.started_at AS new_started_at FROM applied a)",
);

/** Suspends the attempt until `wakeAt`. False when the attempt no longer owns the job (or it is being cancelled). */
export async function suspendForSleep(db: pg.Pool, s: { jobId: string; fence: string; name: string; attempt: number; wakeAt: Date }): Promise<boolean> {
  const { rows } = await db.query<{ id: string }>(
    `WITH ${EVENT_BASE}, applied AS (
       UPDATE jobs j SET ${SUSPENDED}, run_at = $5 WHERE ${OWNED} RETURNING j.*
     ), step AS (
       INSERT INTO job_steps (job_id, name, kind, status, attempt, wake_at, started_at)
       SELECT a.id, $3, 'sleep', 'sleeping', $4, $5, now() FROM applied a
       ON CONFLICT (job_id, name) DO UPDATE SET status = 'sleeping', wake_at = EXCLUDED.wake_at
     ), requeued AS (
       UPDATE job_queue q SET due_at = $5, dispatched_at = NULL, envelope_id = NULL FROM applied a WHERE q.job_id = a.id
     ), ${COUNTED}, announced AS (
       ${announce({ from: "(SELECT a.id, a.org_id, a.type, a::jobs AS job FROM applied a)", event: eventOf("released") })}
     ), notified AS (
       SELECT pg_notify('${EVENTS_CHANNEL}', ''), pg_notify('${DISPATCH_CHANNEL}', '') FROM applied
     )
     SELECT id, (SELECT count(*) FROM notified) AS n FROM applied`,
    [s.jobId, s.fence, s.name, s.attempt, s.wakeAt],
  );
  return rows.length === 1;
}

export type WaitSuspension =
  /** The attempt ended; the job waits for the waitpoint. */
  | { outcome: "suspended"; waitpointId: string }
  /** The waitpoint had already ended: nothing was suspended; the handler goes on with what it ended as. */
  | { outcome: "ended"; waitpointId: string; status: string; data: unknown }
  /** The attempt no longer owns the job, or it is being cancelled, or the waitpoint is not the job's org's. */
  | { outcome: "lost" };

/**
 * Suspends the attempt until a waitpoint ends: `waitpointId` (one of the job's org), or a new one made here with
 * `create` (in the same transaction, so a crash leaves neither). The waitpoint is locked against its end first: an
 * end that comes after sees the new edge and releases the job.
 */
export async function suspendForWait(
  pool: pg.Pool,
  s: {
    jobId: string;
    fence: string;
    name: string;
    attempt: number;
    waitpointId: string;
    create?: { orgId: string; tokenHash: Buffer; timeoutSeconds: number };
  },
): Promise<WaitSuspension> {
  const lost = new Error("lost");
  return inTransaction(pool, async (tx): Promise<WaitSuspension> => {
    if (s.create) {
      await tx.query(
        `INSERT INTO waitpoints (id, org_id, status, tags, token_hash, expires_at, job_id, created_at)
         VALUES ($1, $2, 'waiting', '{}', $3, now() + $4 * interval '1 second', $5, now())`,
        [s.waitpointId, s.create.orgId, s.create.tokenHash, s.create.timeoutSeconds, s.jobId],
      );
    }
    const point = await tx.query<{ status: string; data: unknown }>(
      `SELECT w.status, w.data FROM waitpoints w JOIN jobs j ON j.org_id = w.org_id AND j.id = $2 WHERE w.id = $1 FOR SHARE OF w`,
      [s.waitpointId, s.jobId],
    );
    const wp = point.rows[0];
    if (!wp) throw lost;
    if (wp.status !== "waiting") {
      // Recorded with its waitpoint, already over: a later attempt replays it from that waitpoint, GET /jobs/{id}
      // lists it, and waitpoint retention keeps the waitpoint while the job is there (nothing else would link them).
      await tx.query(
        `INSERT INTO job_steps (job_id, name, kind, status, attempt, waitpoint_id, started_at, finished_at)
         SELECT j.id, $3, 'wait', $6, $4, $5, now(), now() FROM jobs j WHERE ${OWNED}
         ON CONFLICT (job_id, name) DO UPDATE SET waitpoint_id = EXCLUDED.waitpoint_id`,
        [s.jobId, s.fence, s.name, s.attempt, s.waitpointId, wp.status === "completed" ? "completed" : "failed"],
      );
      return { outcome: "ended", waitpointId: s.waitpointId, status: wp.status, data: wp.data };
    }
    const { rows } = await tx.query<{ id: string }>(
      `WITH ${EVENT_BASE}, applied AS (
         UPDATE jobs j SET ${SUSPENDED}, dependencies_pending = j.dependencies_pending + 1 WHERE ${OWNED} RETURNING j.*
       ), edge AS (
         INSERT INTO job_dependencies (job_id, depends_on_id, org_id) SELECT a.id, $5, a.org_id FROM applied a ON CONFLICT DO NOTHING
       ), step AS (
         INSERT INTO job_steps (job_id, name, kind, status, attempt, waitpoint_id, started_at)
         SELECT a.id, $3, 'wait', 'waiting', $4, $5, now() FROM applied a
         ON CONFLICT (job_id, name) DO UPDATE SET status = 'waiting', waitpoint_id = EXCLUDED.waitpoint_id
       ), unqueued AS (
         DELETE FROM job_queue q USING applied a WHERE q.job_id = a.id
       ), ${COUNTED}, announced AS (
         ${announce({ from: "(SELECT a.id, a.org_id, a.type, a::jobs AS job FROM applied a)", event: eventOf("released") })}
       ), notified AS (
         SELECT pg_notify('${EVENTS_CHANNEL}', '') FROM applied
       )
       SELECT id, (SELECT count(*) FROM notified) AS n FROM applied`,
      [s.jobId, s.fence, s.name, s.attempt, s.waitpointId],
    );
    // Rolled back when not suspended, so a waitpoint made here does not outlive the attempt that lost the job.
    if (rows.length !== 1) throw lost;
    return { outcome: "suspended", waitpointId: s.waitpointId };
  }).catch((error: unknown) => {
    if (error === lost) return { outcome: "lost" } as const;
    throw error;
  });
}
