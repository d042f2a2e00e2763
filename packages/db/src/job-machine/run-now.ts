// Transition "brought forward" (issue 38): a pending job that is not due yet — delayed by its run_at, or waiting out
// a retry's backoff — is made due now, at a person's request ("Run now" on a delayed job, "Retry now" on a job
// waiting to retry). Only a job still in the dispatcher's queue and not handed over moves: its run_at and the queue
// row's due time become now, the dispatcher is woken, and the change is announced as `job.updated`.
import type pg from "pg";
import { DISPATCH_CHANNEL, DUE_LATER, EVENT_BASE, EVENTS_CHANNEL, TENANT_JOB } from "../core/job-sql";
import { announce, eventOf } from "./sql";

export type BroughtForward = {
  /** The org's job was found (a visible job of `orgId`). */
  found: boolean;
  /** It was due later and is due now. */
  changed: boolean;
  /** Its status when asked (to say why nothing changed). */
  status: string | null;
  /** Whether it was waiting out a retry's backoff (retries > 0) rather than its first run_at. */
  retry: boolean;
};

/** Makes the org's job `jobId` due now if it is pending and due later (see the file's comment); logs who asked. */
export async function bringForward(db: pg.PoolClient, options: { orgId: string; jobId: string; by: string }): Promise<BroughtForward> {
  const { rows } = await db.query<{ status: string; retries: number; changed: boolean }>(
    `WITH ${EVENT_BASE}, target AS (
       SELECT j.id, j.status, j.retries FROM jobs j
        WHERE j.id = $1::uuid AND j.org_id = $2 AND ${TENANT_JOB("j")}
          FOR UPDATE
     ), queued AS (
       SELECT q.job_id FROM job_queue q JOIN target t ON t.id = q.job_id
        WHERE t.status = 'pending' AND ${DUE_LATER("q", "now()")}
          FOR UPDATE OF q
     ), moved AS (
       UPDATE jobs j SET run_at = now(), updated_at = now() FROM queued q WHERE j.id = q.job_id
       RETURNING j.*
     ), requeued AS (
       UPDATE job_queue q SET due_at = now() FROM moved m WHERE q.job_id = m.id
     ), announced AS (
       ${announce({ from: "(SELECT m.id, m.org_id, m.type, m::jobs AS job FROM moved m)", event: eventOf("broughtForward") })}
     ), logged AS (
       INSERT INTO job_logs (job_id, attempt, level, message, timestamp)
       SELECT m.id, m.retries + 1, 'info'::log_level,
              CASE WHEN m.retries > 0 THEN 'Retried now by ' || $3 || ' instead of after its wait.' ELSE 'Run now by ' || $3 || ' instead of at its run_at.' END,
              clock_timestamp()
         FROM moved m
     ), notified AS (
       SELECT pg_notify('${EVENTS_CHANNEL}', ''), pg_notify('${DISPATCH_CHANNEL}', '') FROM moved
     )
     SELECT t.status, t.retries, EXISTS (SELECT 1 FROM moved) AS changed, (SELECT count(*) FROM notified) AS notified FROM target t`,
    [options.jobId, options.orgId, options.by],
  );
  const row = rows[0];
  if (!row) return { found: false, changed: false, status: null, retry: false };
  return { found: true, changed: row.changed, status: row.status, retry: row.retries > 0 };
}
