// Job reads and writes for the API. Every query names the org: a job of another org is indistinguishable
// from a job that does not exist. Lists are rendered to JSON by Postgres itself, so streaming a million
// rows costs the API a string concatenation per row, not a Date and an object.
import type pg from "pg";
import QueryStream from "pg-query-stream";
import { searchValues, type JobFilter, type JobStatus } from "@conveyor/contracts";
import { jobListSql, withSearchHits } from "./job-filter";
import { DISPATCH_CHANNEL, EVENT_BASE, EVENTS_CHANNEL, iso, TENANT_JOB } from "./job-sql";

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
 * Inserts jobs in one statement (the API batches concurrent requests into one call): each job row, its place in the
 * dispatcher's queue and its job.created event, then wakes the dispatcher. The API never talks to Redis to create a
 * job: the dispatcher hands it to BullMQ when it is due and there is room (SPEC §9).
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
       INSERT INTO events (id, org_id, job_id, type, time, data)
       SELECT e.base + row_number() OVER (ORDER BY i.id), i.org_id, i.id, 'job.created', i.created_at, conveyor_job_data(i::jobs)
         FROM inserted i CROSS JOIN event_base e
        WHERE ${TENANT_JOB("i")}
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

export type JobListQuery = {
  orgId: string;
  /** GET /jobs's filters (SPEC §8); none: every job of the org. */
  filter?: JobFilter;
  /** Only jobs older than this id (keyset pagination, newest first). */
  before?: string;
  limit: number;
};

/** One page of the list as JSON texts, newest first; `more` tells whether older jobs remain. */
export async function listJobsPage(pool: pg.Pool, query: JobListQuery): Promise<{ items: string[]; more: boolean }> {
  const { sql, params } = jobListSql({ ...query, filter: await withSearchHits(pool, query.orgId, query.filter) });
  const { rows } = await pool.query<{ item: string }>(`${sql} LIMIT ${query.limit + 1}`, params);
  const more = rows.length > query.limit;
  return { items: rows.slice(0, query.limit).map((r) => r.item), more };
}

/**
 * Streams every job of the org (newest first) through a server-side cursor, as JSON texts. Memory stays
 * flat whatever the count. The caller must `release()` when done or abandoned.
 */
export async function streamJobs(
  pool: pg.Pool,
  query: Omit<JobListQuery, "limit" | "before">,
): Promise<{ rows: AsyncIterable<{ item: string }>; release(): void }> {
  const filter = await withSearchHits(pool, query.orgId, query.filter);
  const client = await pool.connect();
  const { sql, params } = jobListSql({ ...query, filter });
  const stream = client.query(new QueryStream(sql, params, { batchSize: 1000, highWaterMark: 1000 }));
  let finished = false;
  stream.once("end", () => (finished = true));
  let released = false;
  return {
    rows: stream as AsyncIterable<{ item: string }>,
    release() {
      if (released) return;
      released = true;
      if (finished) return client.release();
      // A cursor abandoned mid-way leaves the connection mid-protocol: close it instead of reusing it.
      stream.destroy();
      client.release(true);
    },
  };
}

/** A job as GET /jobs/{id} shows it: the list item's fields, with payload, result and error. */
export type JobDetail = {
  id: string;
  type: string;
  status: JobStatus;
  payload: unknown;
  retries: number;
  max_retries: number;
  created_at: string;
  updated_at: string;
  run_at: string | null;
  priority: number;
  replay_of: string | null;
  schedule_id: string | null;
  cancel_requested_at: string | null;
  result: unknown;
  error: string | null;
};

/** The job GET /jobs/{id} shows (fields in their documented order), or null when it is not the org's. */
export async function findJob(db: pg.Pool | pg.PoolClient, orgId: string, id: string): Promise<JobDetail | null> {
  const { rows } = await db.query<{ job: JobDetail }>(
    `SELECT conveyor_job_item(j)::jsonb || jsonb_build_object('payload', j.payload, 'result', j.result, 'error', j.error) AS job
       FROM jobs j WHERE j.id = $1 AND j.org_id = $2 AND ${TENANT_JOB("j")}`,
    [id, orgId],
  );
  return rows[0] ? orderJobFields(rows[0].job) : null;
}

const DETAIL_ORDER = [
  "id",
  "type",
  "status",
  "payload",
  "retries",
  "max_retries",
  "created_at",
  "updated_at",
  "run_at",
  "priority",
  "replay_of",
  "schedule_id",
  "cancel_requested_at",
  "result",
  "error",
];

/** jsonb does not keep key order; the seed's fields come first, as documented. */
function orderJobFields(job: JobDetail): JobDetail {
  return Object.fromEntries(DETAIL_ORDER.map((key) => [key, job[key as keyof JobDetail] ?? null])) as JobDetail;
}

export type JobLogLine = { attempt: number; message: string; level: string; timestamp: string };

/** The job's log lines in write order, or null when the job is not the org's. */
export async function findJobLogs(pool: pg.Pool, orgId: string, jobId: string): Promise<JobLogLine[] | null> {
  const { rows } = await pool.query<JobLogLine & { owned: boolean }>(
    `SELECT true AS owned, l.attempt, l.message, l.level, ${iso("l.timestamp")} AS timestamp
       FROM jobs j LEFT JOIN job_logs l ON l.job_id = j.id
      WHERE j.id = $1 AND j.org_id = $2 AND ${TENANT_JOB("j")}
      ORDER BY l.id`,
    [jobId, orgId],
  );
  if (rows.length === 0) return null;
  return rows.filter((r) => r.attempt !== null).map(({ attempt, message, level, timestamp }) => ({ attempt, message, level, timestamp }));
}

export type JobArtifactFile = { contentType: string; filename: string; data: Buffer };

/** The file a job produced, or null (no such job in the org, or no artifact). */
export async function findJobArtifact(pool: pg.Pool, orgId: string, jobId: string): Promise<JobArtifactFile | null> {
  const { rows } = await pool.query<{ content_type: string; filename: string; data: Buffer }>(
    `SELECT a.content_type, a.filename, a.data FROM job_artifacts a JOIN jobs j ON j.id = a.job_id
      WHERE a.job_id = $1 AND j.org_id = $2 AND ${TENANT_JOB("j")}`,
    [jobId, orgId],
  );
  const row = rows[0];
  return row ? { contentType: row.content_type, filename: row.filename, data: row.data } : null;
}

/** Names of plugin types registered by workers (built-in types are not stored). */
export async function listRegisteredTypes(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>("SELECT name FROM job_types ORDER BY name");
  return rows.map((r) => r.name);
}
