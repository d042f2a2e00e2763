// Transition "created" (SPEC §5, §9): a job row, its place in the dispatcher's queue, its payload's search values and
// its job.created event, in one statement, then a wake-up for the dispatcher. The API never talks to Redis to create
// a job: the dispatcher hands it to BullMQ when it is due and there is room.
import type pg from "pg";
import { searchValues, type JobStatus } from "@conveyor/contracts";
import { DISPATCH_CHANNEL, EVENT_BASE, EVENTS_CHANNEL } from "../job-sql";
import { announce, eventOf } from "./sql";

export type NewJob = {
  id: string;
  orgId: string;
  type: string;
  /** The validated payload, already serialised as JSON. */
  payloadJson: string;
  /** The same payload parsed, when the caller has it: its search values are read from it instead of parsing again. */
  payload?: unknown;
  maxRetries: number;
  createdAt: Date;
  /** 1..10 (default 5). */
  priority?: number;
  /** When it is due, if later than now. */
  runAt?: Date | null;
  replayOf?: string | null;
  scheduleId?: string | null;
};

/**
 * Inserts jobs in one statement (the API batches concurrent requests into one call). `job.created` is timed by
 * Postgres' clock, like every other event; `created_at` is the creator's.
 */
export async function insertJobs(client: pg.Pool | pg.PoolClient, jobs: readonly NewJob[]): Promise<void> {
  if (jobs.length === 0) return;
  await client.query({
    name: "conveyor-insert-jobs",
    text: `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::int[], $6::timestamptz[], $7::smallint[], $8::timestamptz[], $9::uuid[], $10::uuid[], $11::text[])
         WITH ORDINALITY AS t(id, org_id, type, payload, max_retries, created_at, priority, run_at, replay_of, schedule_id, search, n)
     ), ${EVENT_BASE}, inserted AS (
       INSERT INTO jobs (id, org_id, type, status, payload, retries, max_retries, created_at, updated_at, run_at, priority, replay_of, schedule_id)
       SELECT id, org_id, type, 'pending', payload::jsonb, 0, max_retries, created_at, created_at, run_at, priority, replay_of, schedule_id
         FROM input ORDER BY n
       RETURNING *
     ), searchable AS (
       INSERT INTO job_search (job_id, org_id, search_values)
       SELECT id, org_id, ARRAY(SELECT jsonb_array_elements_text(search::jsonb)) FROM input WHERE search <> '[]'
     ), queued AS (
       INSERT INTO job_queue (job_id, type, org_id, priority, due_at)
       SELECT id, type, org_id, priority, COALESCE(run_at, created_at) FROM inserted
     ), announced AS (
       ${announce({ from: "(SELECT i.id, i.org_id, i.type, i::jobs AS job FROM inserted i)", event: eventOf("created") })}
     )
     SELECT pg_notify('${DISPATCH_CHANNEL}', ''), pg_notify('${EVENTS_CHANNEL}', '')`,
    values: [
      jobs.map((j) => j.id),
      jobs.map((j) => j.orgId),
      jobs.map((j) => j.type),
      jobs.map((j) => j.payloadJson),
      jobs.map((j) => j.maxRetries),
      jobs.map((j) => j.createdAt),
      jobs.map((j) => j.priority ?? 5),
      jobs.map((j) => j.runAt ?? null),
      jobs.map((j) => j.replayOf ?? null),
      jobs.map((j) => j.scheduleId ?? null),
      // Internal jobs (TENANT_JOB) are never searched.
      jobs.map((j) => (j.type.startsWith("_") ? "[]" : JSON.stringify(searchValues(j.payload ?? JSON.parse(j.payloadJson))))),
    ],
  });
}

export type IdempotentInsert = { created: true } | { created: false; existing: { id: string; status: JobStatus; requestHash: Buffer } };

/**
 * Inserts `job` unless `key` was used by the org within its lifetime, atomically: of concurrent requests with
 * the same key exactly one creates a job; the others get the job it created. An expired key is taken over.
 */
export async function insertJobIdempotently(pool: pg.Pool, job: NewJob, key: string, requestHash: Buffer, ttlMs: number): Promise<IdempotentInsert> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await insertJobs(client, [job]);
    const claimed = await client.query(
      `INSERT INTO idempotency_keys (org_id, key, job_id, request_hash, expires_at)
       VALUES ($1, $2, $3, $4, $5::timestamptz + $6 * interval '1 millisecond')
       ON CONFLICT (org_id, key) DO UPDATE
         SET job_id = EXCLUDED.job_id, request_hash = EXCLUDED.request_hash, expires_at = EXCLUDED.expires_at
         WHERE idempotency_keys.expires_at <= $5
       RETURNING job_id`,
      [job.orgId, key, job.id, requestHash, job.createdAt, ttlMs],
    );
    if (claimed.rowCount) {
      await client.query("COMMIT");
      return { created: true };
    }
    await client.query("ROLLBACK");
    const { rows } = await client.query<{ id: string; status: JobStatus; request_hash: Buffer }>(
      `SELECT j.id, j.status, k.request_hash FROM idempotency_keys k JOIN jobs j ON j.id = k.job_id
        WHERE k.org_id = $1 AND k.key = $2`,
      [job.orgId, key],
    );
    const row = rows[0];
    if (!row) throw new Error("idempotency key vanished between conflict and read");
    return { created: false, existing: { id: row.id, status: row.status, requestHash: row.request_hash } };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
