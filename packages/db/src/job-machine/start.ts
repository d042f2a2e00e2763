// Transition "started": a worker takes the job for the attempt holding a fence — the status, the event and the
// attempt's first log lines in one statement, before the handler runs. Also the take-over of an attempt that was
// lost (its worker died): that attempt is counted as interrupted, and a job someone asked to cancel meanwhile is
// cancelled instead of run again.
import type pg from "pg";
import { EVENT_BASE, EVENTS_CHANNEL } from "../job-sql";
import { announce, eventOf } from "./sql";

export type ClaimRequest = { id: string; fence: string };

export type ClaimedJob = {
  id: string;
  orgId: string;
  type: string;
  /** The payload as JSON text (jsonb's canonical form). */
  payload: string;
  retries: number;
  maxRetries: number;
  /** Attempts lost with their worker so far, including the one this claim took over from. */
  interruptions: number;
  /** "processing" when this claim took the job over from an attempt that never reported back. */
  previousStatus: "pending" | "processing";
};

export type ClaimOptions = {
  /** Interruptions after which a taken-over job is not started again (the caller fails it). */
  maxInterruptions: number;
};

/**
 * Claims the jobs for the attempts holding `fence`: pending jobs, and processing jobs whose attempt was lost
 * (another delivery of the same job means the previous one is gone or stale). Jobs that are done, failed,
 * cancelled or unknown are not returned; a lost attempt of a job someone asked to cancel is not run again but
 * cancelled here. The "interrupted" and "started" log lines and the job.started event are written in the same
 * statement, so they survive a handler that kills its process. The org reads these lines, so they name no worker
 * host or PID.
 */
export async function claimJobs(pool: pg.Pool, requests: readonly ClaimRequest[], options: ClaimOptions): Promise<ClaimedJob[]> {
  if (requests.length === 0) return [];
  const sorted = [...requests].sort((a, b) => (a.id < b.id ? -1 : 1));
  const { rows } = await pool.query<{
    id: string;
    org_id: string;
    type: string;
    payload: string;
    retries: number;
    max_retries: number;
    interruptions: number;
    previous_status: "pending" | "processing";
  }>({
    // Prepared once per connection: the planner is not run again for every batch.
    name: "conveyor-claim-jobs",
    text: `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::text[]) AS t(id, fence)
     ), ${EVENT_BASE}, live AS (
       SELECT j.id, j.status, j.cancel_requested_at IS NOT NULL AS cancel_requested FROM jobs j JOIN input i ON i.id = j.id
        WHERE j.status IN ('pending', 'processing')
        ORDER BY j.id
          FOR UPDATE OF j
     ), claimed AS (
       UPDATE jobs j
          SET status = 'processing', fence = i.fence, updated_at = now(),
              interruptions = j.interruptions + (c.status = 'processing')::int
         FROM input i JOIN live c ON c.id = i.id
        WHERE j.id = i.id AND NOT c.cancel_requested
       -- The status it had comes along, so nothing below joins back to live.
       RETURNING j.id, j.org_id, j.type, j.payload, j.retries, j.max_retries, j.interruptions, c.status AS previous_status, j AS job
     ), cancelled AS (
       UPDATE jobs j SET status = 'cancelled', fence = NULL, finished_at = now(), updated_at = now()
         FROM live c WHERE j.id = c.id AND c.cancel_requested
       RETURNING j.id, j.org_id, j.type, j.retries, j AS job
     ), dequeued AS (
       DELETE FROM job_queue q USING cancelled c WHERE q.job_id = c.id
     ), announced AS (
       ${announce({
         from: `(SELECT id, org_id, type, job, ${eventOf("started")} AS event FROM claimed UNION ALL SELECT id, org_id, type, job, ${eventOf("cancelled")} FROM cancelled)`,
         event: "x.event",
       })}
     ), logged AS (
       INSERT INTO job_logs (job_id, attempt, level, message, timestamp)
       SELECT id, retries + 1, level::log_level, message, clock_timestamp() FROM (
         SELECT c.id, c.retries, 1 AS n, 'warn' AS level,
                'Attempt ' || (c.retries + 1) || ' was interrupted: the worker running it stopped or lost its lock (crash, kill, or a handler blocking too long).' AS message
           FROM claimed c WHERE c.previous_status = 'processing'
         UNION ALL
         SELECT id, retries, 2, 'info', 'Attempt ' || (retries + 1) || ' of ' || (max_retries + 1) || ' started.'
           FROM claimed WHERE interruptions <= $3
         UNION ALL
         SELECT id, retries, 3, 'warn', 'Attempt ' || (retries + 1) || ' was interrupted after a cancellation was requested: the job is cancelled.'
           FROM cancelled
       ) AS lines
       ORDER BY id, n
     ), notified AS (
       SELECT pg_notify('${EVENTS_CHANNEL}', '') FROM (SELECT 1 FROM claimed UNION ALL SELECT 1 FROM cancelled LIMIT 1) AS any_change
     )
     SELECT c.id, c.org_id, c.type, c.payload::text AS payload, c.retries, c.max_retries, c.interruptions, c.previous_status,
            (SELECT count(*) FROM notified) AS notified
       FROM claimed c`,
    values: [sorted.map((r) => r.id), sorted.map((r) => r.fence), options.maxInterruptions],
  });
  return rows.map((r) => ({
    id: r.id,
    orgId: r.org_id,
    type: r.type,
    payload: r.payload,
    retries: r.retries,
    maxRetries: r.max_retries,
    interruptions: r.interruptions,
    previousStatus: r.previous_status,
  }));
}
