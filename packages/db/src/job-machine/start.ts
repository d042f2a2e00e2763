// Transition "started": a worker takes the job for the attempt holding a fence — the status and the event in one
// statement, before the handler runs. Also the take-over of an attempt that was
// lost (its worker died): that attempt is counted as interrupted, and a job someone asked to cancel meanwhile is
// cancelled instead of run again.
import type pg from "pg";
import { MAX_INTERRUPTIONS } from "@conveyor/contracts";
import { EVENT_BASE, EVENTS_CHANNEL } from "../job-sql";
import { announce, eventOfStatus } from "./sql";

/** The error of a job failed because its attempts keep getting lost (`job` is the row before the change). */
const GIVING_UP = (job: string) =>
  `'Attempt ' || (${job}.retries + 1) || ' was interrupted ' || (${job}.interruptions + 1) || ' times; giving up, as the job probably crashes its worker.'`;

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

/**
 * Claims the jobs for the attempts holding `fence`: pending jobs (the usual case), and processing jobs whose attempt
 * was lost (another delivery of the same job means the previous one is gone or stale) — counted as an interruption;
 * if someone asked to cancel the job meanwhile, it is cancelled instead of run again, and a job lost more than
 * MAX_INTERRUPTIONS times is failed (it probably crashes its worker). Jobs that are done, failed,
 * cancelled, unknown, or being claimed by a concurrent delivery are not returned. The job.started event is the
 * attempt's first log line (job-machine/lines.ts); it is committed before the handler runs, so it survives a handler
 * that kills its process.
 */
export async function claimJobs(pool: pg.Pool, requests: readonly ClaimRequest[]): Promise<ClaimedJob[]> {
  if (requests.length === 0) return [];
  // Rows are locked in id order, as every other multi-row writer of jobs does, so claims never deadlock with them.
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
     ), ${EVENT_BASE}, started AS (
       UPDATE jobs j SET status = 'processing', fence = i.fence, updated_at = now()
         FROM input i
        WHERE j.id = i.id AND j.status = 'pending'
       RETURNING j.id, j.org_id, j.type, j.payload, j.retries, j.max_retries, j.interruptions, j.status, 'pending'::text AS previous_status, j AS job
     ), taken_over AS (
       UPDATE jobs j
          SET status = CASE WHEN j.cancel_requested_at IS NOT NULL THEN 'cancelled'
                            WHEN j.interruptions >= ${MAX_INTERRUPTIONS} THEN 'failed'
                            ELSE 'processing' END::job_status,
              fence = CASE WHEN j.cancel_requested_at IS NULL AND j.interruptions < ${MAX_INTERRUPTIONS} THEN i.fence END,
              finished_at = CASE WHEN j.cancel_requested_at IS NOT NULL OR j.interruptions >= ${MAX_INTERRUPTIONS} THEN now() END,
              interruptions = j.interruptions + (j.cancel_requested_at IS NULL)::int,
              error = CASE WHEN j.cancel_requested_at IS NULL AND j.interruptions >= ${MAX_INTERRUPTIONS} THEN ${GIVING_UP("j")} ELSE j.error END,
              updated_at = now()
         FROM input i
        WHERE j.id = i.id AND j.status = 'processing'
       RETURNING j.id, j.org_id, j.type, j.payload, j.retries, j.max_retries, j.interruptions, j.status, 'processing'::text AS previous_status, j AS job
     ), changed AS (
       SELECT * FROM started UNION ALL SELECT * FROM taken_over
     ), dequeued AS (
       DELETE FROM job_queue q USING taken_over t WHERE q.job_id = t.id AND t.status <> 'processing'
     ), announced AS (
       ${announce({ from: "changed", event: eventOfStatus("x.status") })}
     ), logged AS (
       INSERT INTO job_logs (job_id, attempt, level, message, timestamp)
       SELECT id, retries + 1,
              CASE status WHEN 'cancelled' THEN 'warn' ELSE 'error' END::log_level,
              CASE status WHEN 'cancelled' THEN 'Attempt ' || (retries + 1) || ' was interrupted after a cancellation was requested: the job is cancelled.'
                          ELSE (job).error END,
              clock_timestamp()
         FROM taken_over WHERE status <> 'processing'
     ), notified AS (
       SELECT pg_notify('${EVENTS_CHANNEL}', '') FROM (SELECT 1 FROM changed LIMIT 1) AS any_change
     )
     SELECT c.id, c.org_id, c.type, c.payload::text AS payload, c.retries, c.max_retries, c.interruptions, c.previous_status,
            (SELECT count(*) FROM notified) AS notified
       FROM changed c WHERE c.status = 'processing'`,
    values: [sorted.map((r) => r.id), sorted.map((r) => r.fence)],
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
