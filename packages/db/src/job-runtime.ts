// The worker's writes, in batches: claiming jobs, recording outcomes and log lines, storing artifacts, and
// what the reconciler reads. Every outcome carries the fence token of the attempt that produced it and is
// applied only if that attempt still owns the job, so a stale worker can never overwrite a newer attempt
// nor move a job out of done/failed.
import type pg from "pg";
import type { JobStatus, LogLevel } from "@conveyor/contracts";

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
 * (another delivery of the same job means the previous one is gone or stale). Jobs that are done, failed
 * or unknown are not returned. The "interrupted" and "started" log lines are written in the same statement,
 * so they survive a handler that kills its process. The org reads these lines, so they name no worker host or PID.
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
     ), live AS (
       SELECT j.id, j.status FROM jobs j JOIN input i ON i.id = j.id
        WHERE j.status IN ('pending', 'processing')
        ORDER BY j.id
          FOR UPDATE OF j
     ), claimed AS (
       UPDATE jobs j
          SET status = 'processing', fence = i.fence, run_at = NULL, updated_at = now(),
              interruptions = j.interruptions + (c.status = 'processing')::int
         FROM input i JOIN live c ON c.id = i.id
        WHERE j.id = i.id
       RETURNING j.id, j.org_id, j.type, j.payload::text AS payload, j.retries, j.max_retries, j.interruptions, c.status AS previous_status
     ), logged AS (
       INSERT INTO job_logs (job_id, attempt, level, message, timestamp)
       SELECT id, retries + 1, level::log_level, message, clock_timestamp() FROM (
         SELECT id, retries, 1 AS n, 'warn' AS level,
                'Attempt ' || (retries + 1) || ' was interrupted: the worker running it stopped or lost its lock (crash, kill, or a handler blocking too long).' AS message
           FROM claimed WHERE previous_status = 'processing'
         UNION ALL
         SELECT id, retries, 2, 'info', 'Attempt ' || (retries + 1) || ' of ' || (max_retries + 1) || ' started.'
           FROM claimed WHERE interruptions <= $3
       ) AS lines
       ORDER BY id, n
     )
     SELECT * FROM claimed`,
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
  /** done; failed; or pending (a retry is scheduled, or the attempt was released without consuming one). */
  status: Extract<JobStatus, "done" | "failed" | "pending">;
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
 * Writes log lines and outcomes in one statement (one round trip, one transaction). Returns the ids whose
 * outcome was applied; an id missing from the set lost its fence (a newer attempt owns the job).
 */
export async function writeOutcomes(pool: pg.Pool, logs: readonly LogRow[], outcomes: readonly Outcome[]): Promise<Set<string>> {
  if (logs.length === 0 && outcomes.length === 0) return new Set();
  const sorted = [...outcomes].sort((a, b) => (a.id < b.id ? -1 : 1));
  const { rows } = await pool.query<{ id: string }>({
    name: "conveyor-write-outcomes",
    text: `WITH applied AS (
       UPDATE jobs j
          SET status = o.status::job_status,
              retries = o.retries,
              -- Merged, not replaced: a provider callback (M-Pesa) may have recorded result.callback meanwhile.
              result = CASE WHEN o.status <> 'done' THEN j.result
                            WHEN jsonb_typeof(j.result) = 'object' AND jsonb_typeof(o.result::jsonb) = 'object' THEN j.result || o.result::jsonb
                            ELSE o.result::jsonb END,
              error = CASE WHEN o.status = 'done' THEN NULL ELSE COALESCE(o.error, j.error) END,
              run_at = o.run_at,
              fence = NULL,
              updated_at = now()
         FROM unnest($6::uuid[], $7::text[], $8::text[], $9::int[], $10::text[], $11::text[], $12::timestamptz[])
           AS o(id, fence, status, retries, result, error, run_at)
        WHERE j.id = o.id AND j.fence = o.fence AND j.status = 'processing'
       RETURNING j.id
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
     )
     SELECT id FROM applied`,
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
  return new Set(rows.map((r) => r.id));
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

export type LiveJob = { id: string; type: string; status: "pending" | "processing"; retries: number; maxRetries: number; runAt: Date | null; updatedAt: Date };
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
  }>(
    `SELECT id, type, status, retries, max_retries, run_at, updated_at FROM jobs
      WHERE status IN ('pending', 'processing')
        AND ($1::timestamptz IS NULL OR (updated_at, id) > ($1::timestamptz, $2::uuid))
        AND ($3::timestamptz IS NULL OR updated_at < $3::timestamptz)
      ORDER BY updated_at, id
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
  }));
}

/** Forgets idempotency keys past their 24 hours, a bounded number at a time. */
export async function deleteExpiredIdempotencyKeys(pool: pg.Pool, limit = 1000): Promise<number> {
  const result = await pool.query(`DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at < now() LIMIT $1)`, [limit]);
  return result.rowCount ?? 0;
}
