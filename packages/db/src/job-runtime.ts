// The worker's writes, in batches: claiming jobs, recording outcomes and log lines, storing artifacts, and
// what the reconciler reads. Every outcome carries the fence token of the attempt that produced it and is
// applied only if that attempt still owns the job, so a stale worker can never overwrite a newer attempt
// nor move a job out of done/failed.
import type pg from "pg";
import type { JobStatus, LogLevel } from "@conveyor/contracts";
import { DISPATCH_CHANNEL, EVENT_BASE, EVENTS_CHANNEL, TENANT_JOB } from "./job-sql";

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
       INSERT INTO events (id, org_id, job_id, type, time, data)
       SELECT e.base + row_number() OVER (ORDER BY x.id), x.org_id, x.id, x.event, now(), conveyor_job_data(x.job)
         FROM (SELECT id, org_id, 'job.started' AS event, job FROM claimed c WHERE ${TENANT_JOB("c")}
               UNION ALL
               SELECT id, org_id, 'job.cancelled', job FROM cancelled x WHERE ${TENANT_JOB("x")}) AS x
        CROSS JOIN event_base e
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

export type LogRow = { jobId: string; attempt: number; level: LogLevel; message: string; timestamp: Date };

export type Outcome = {
  id: string;
  fence: string;
  /**
   * done; failed; cancelled (the attempt stopped because someone cancelled the job); or pending: a retry is due at
   * `runAt`, or the attempt was released without consuming one (shutdown). A pending outcome of a job someone asked
   * to cancel is recorded as cancelled: it never runs again.
   */
  status: Extract<JobStatus, "done" | "failed" | "pending" | "cancelled">;
  retries: number;
  /** JSON text of the handler's result (stored when status is done). */
  result: string | null;
  /** Error message to store; null keeps the previous one (and done clears it). */
  error: string | null;
  /** When the next attempt is due, for a pending job. */
  runAt: Date | null;
  /** A log line written only if the outcome is applied (e.g. "Attempt 1 succeeded"). */
  appliedLine?: Omit<LogRow, "jobId">;
};

/**
 * Writes log lines and outcomes in one statement (one round trip, one transaction): the job rows, their place in
 * the dispatcher's queue (left when final, back in line when pending), their events, and a wake-up for the
 * dispatcher (slots are free). Returns the status each applied outcome left its job in; an id missing from the map
 * lost its fence (a newer attempt owns the job).
 */
export async function writeOutcomes(pool: pg.Pool, logs: readonly LogRow[], outcomes: readonly Outcome[]): Promise<Map<string, JobStatus>> {
  if (logs.length === 0 && outcomes.length === 0) return new Map();
  const sorted = [...outcomes].sort((a, b) => (a.id < b.id ? -1 : 1));
  const { rows } = await pool.query<{ id: string; status: JobStatus }>({
    name: "conveyor-write-outcomes",
    text: `WITH ${EVENT_BASE}, applied AS (
       UPDATE jobs j
          SET status = CASE WHEN o.status = 'pending' AND j.cancel_requested_at IS NOT NULL THEN 'cancelled' ELSE o.status END::job_status,
              retries = o.retries,
              -- Merged, not replaced: a provider callback (M-Pesa) may have recorded result.callback meanwhile.
              result = CASE WHEN o.status <> 'done' THEN j.result
                            WHEN jsonb_typeof(j.result) = 'object' AND jsonb_typeof(o.result::jsonb) = 'object' THEN j.result || o.result::jsonb
                            ELSE o.result::jsonb END,
              error = CASE WHEN o.status = 'done' THEN NULL ELSE COALESCE(o.error, j.error) END,
              run_at = CASE WHEN o.status = 'pending' THEN o.run_at ELSE j.run_at END,
              finished_at = CASE WHEN o.status = 'pending' AND j.cancel_requested_at IS NULL THEN NULL ELSE now() END,
              fence = NULL,
              updated_at = now()
         FROM unnest($6::uuid[], $7::text[], $8::text[], $9::int[], $10::text[], $11::text[], $12::timestamptz[])
           AS o(id, fence, status, retries, result, error, run_at)
        WHERE j.id = o.id AND j.fence = o.fence AND j.status = 'processing'
       RETURNING j.*
     ), finished AS (
       DELETE FROM job_queue q USING applied a WHERE q.job_id = a.id AND a.status <> 'pending'
     ), requeued AS (
       UPDATE job_queue q SET due_at = COALESCE(a.run_at, now()), dispatched_at = NULL
         FROM applied a WHERE q.job_id = a.id AND a.status = 'pending'
     ), announced AS (
       INSERT INTO events (id, org_id, job_id, type, time, data)
       SELECT e.base + row_number() OVER (ORDER BY a.id), a.org_id, a.id,
              CASE a.status WHEN 'done' THEN 'job.succeeded' WHEN 'failed' THEN 'job.failed' WHEN 'cancelled' THEN 'job.cancelled' ELSE 'job.retrying' END,
              now(), conveyor_job_data(a::jobs)
         FROM applied a CROSS JOIN event_base e
        WHERE ${TENANT_JOB("a")}
     ), logged AS (
       -- One INSERT, ordered: the lines queued so far, then the lines of outcomes that were applied.
       INSERT INTO job_logs (job_id, attempt, level, message, timestamp)
       SELECT job_id, attempt, level::log_level, message, ts FROM (
         SELECT t.job_id, t.attempt, t.level, t.message, t.ts, 1 AS part, t.n
           FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::timestamptz[]) WITH ORDINALITY AS t(job_id, attempt, level, message, ts, n)
         UNION ALL
         SELECT l.job_id, l.attempt, l.level, l.message, l.ts, 2, l.n
           FROM unnest($13::uuid[], $14::int[], $15::text[], $16::text[], $17::timestamptz[]) WITH ORDINALITY AS l(job_id, attempt, level, message, ts, n)
           JOIN applied a ON a.id = l.job_id
       ) AS lines
       ORDER BY part, n
     ), notified AS (
       -- The dispatcher hears of jobs back in line (a retry, a released attempt); freed slots it sees in BullMQ.
       SELECT pg_notify('${EVENTS_CHANNEL}', ''), (SELECT pg_notify('${DISPATCH_CHANNEL}', '') FROM applied WHERE status = 'pending' LIMIT 1)
         FROM (SELECT 1 FROM applied LIMIT 1) AS any_applied
     )
     SELECT id, status, (SELECT count(*) FROM notified) AS notified FROM applied`,
    values: [
      logs.map((l) => l.jobId),
      logs.map((l) => l.attempt),
      logs.map((l) => l.level),
      logs.map((l) => l.message),
      logs.map((l) => l.timestamp),
      sorted.map((o) => o.id),
      sorted.map((o) => o.fence),
      sorted.map((o) => o.status),
      sorted.map((o) => o.retries),
      sorted.map((o) => o.result),
      sorted.map((o) => o.error),
      sorted.map((o) => o.runAt),
      ...appliedLineColumns(sorted),
    ],
  });
  return new Map(rows.map((r) => [r.id, r.status]));
}

function appliedLineColumns(outcomes: readonly Outcome[]): unknown[][] {
  const withLine = outcomes.filter((o) => o.appliedLine);
  return [
    withLine.map((o) => o.id),
    withLine.map((o) => o.appliedLine!.attempt),
    withLine.map((o) => o.appliedLine!.level),
    withLine.map((o) => o.appliedLine!.message),
    withLine.map((o) => o.appliedLine!.timestamp),
  ];
}

/** Stores (or replaces) a job's artifact, only while the attempt holding `fence` owns the job. */
export async function saveJobArtifact(
  pool: pg.Pool,
  artifact: { jobId: string; fence: string; contentType: string; filename: string; data: Buffer },
): Promise<boolean> {
  const result = await pool.query(
    `INSERT INTO job_artifacts (job_id, content_type, filename, size, data)
     SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM jobs WHERE id = $1 AND fence = $6 AND status = 'processing')
     ON CONFLICT (job_id) DO UPDATE
       SET content_type = EXCLUDED.content_type, filename = EXCLUDED.filename, size = EXCLUDED.size, data = EXCLUDED.data, created_at = now()`,
    [artifact.jobId, artifact.contentType, artifact.filename, artifact.data.length, artifact.data, artifact.fence],
  );
  return (result.rowCount ?? 0) > 0;
}

/** Records plugin types so the API accepts them (and when a worker serving them last started). */
export async function registerJobTypes(pool: pg.Pool, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  await pool.query(
    `INSERT INTO job_types (name, source, registered_at, last_seen_at)
     SELECT name, 'plugin', now(), now() FROM unnest($1::text[]) AS t(name)
     ON CONFLICT (name) DO UPDATE SET last_seen_at = now()`,
    [names],
  );
}

export type LiveJob = {
  id: string;
  type: string;
  status: "pending" | "processing";
  retries: number;
  maxRetries: number;
  runAt: Date | null;
  updatedAt: Date;
  /** Handed to BullMQ by the dispatcher (a processing job always is): Redis should hold it. */
  dispatched: boolean;
};
export type LiveJobCursor = { updatedAt: Date; id: string };

/**
 * Pending and processing jobs ordered by (updated_at, id), after `after`, untouched since `olderThan`
 * (null: any age). Served by the partial index on live jobs, so it stays cheap however long the history.
 */
export async function liveJobsPage(pool: pg.Pool, options: { after: LiveJobCursor | null; olderThan: Date | null; limit: number }): Promise<LiveJob[]> {
  const { rows } = await pool.query<{
    id: string;
    type: string;
    status: "pending" | "processing";
    retries: number;
    max_retries: number;
    run_at: Date | null;
    updated_at: Date;
    dispatched: boolean;
  }>(
    `SELECT j.id, j.type, j.status, j.retries, j.max_retries, j.run_at, j.updated_at, (j.status = 'processing' OR q.dispatched_at IS NOT NULL) AS dispatched
       FROM jobs j LEFT JOIN job_queue q ON q.job_id = j.id
      WHERE j.status IN ('pending', 'processing')
        AND ($1::timestamptz IS NULL OR (j.updated_at, j.id) > ($1::timestamptz, $2::uuid))
        AND ($3::timestamptz IS NULL OR j.updated_at < $3::timestamptz)
      ORDER BY j.updated_at, j.id
      LIMIT $4`,
    [options.after?.updatedAt ?? null, options.after?.id ?? null, options.olderThan, options.limit],
  );
  return rows.map((r) => ({
    id: r.id,
    type: r.type,
    status: r.status,
    retries: r.retries,
    maxRetries: r.max_retries,
    runAt: r.run_at,
    updatedAt: r.updated_at,
    dispatched: r.dispatched,
  }));
}

/** Forgets idempotency keys past their 24 hours, a bounded number at a time. */
export async function deleteExpiredIdempotencyKeys(pool: pg.Pool, limit = 1000): Promise<number> {
  const result = await pool.query(`DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at < now() LIMIT $1)`, [limit]);
  return result.rowCount ?? 0;
}
