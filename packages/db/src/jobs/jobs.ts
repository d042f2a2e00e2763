// Job reads for the API (creating one is the job machine's). Every query names the org: a job of another org is indistinguishable
// from a job that does not exist. Lists are rendered to JSON by Postgres itself, so streaming a million
// rows costs the API a string concatenation per row, not a Date and an object.
import type pg from "pg";
import QueryStream from "pg-query-stream";
import { JOB_DETAIL_FIELDS, type JobFilter, type JobStatus, type JobStepJson } from "@conveyor/contracts";
import { jobListSql, withSearchHits } from "./job-filter";
import { iso, TENANT_JOB } from "../core/job-sql";

export type JobListQuery = {
  orgId: string;
  /** GET /jobs's filters (docs/reference/lifecycle.md#steering); none: every job of the org. */
  filter?: JobFilter;
  /** Only jobs past this id in the list's order: the previous page's last (keyset pagination). */
  past?: string;
  /** Oldest first (by creation: ids are time-ordered) instead of newest first. */
  oldestFirst?: boolean;
  limit: number;
  /** Each item also carries `error` (its first 300 characters). */
  withError?: boolean;
};

/** One page of the list as JSON texts, in its order; `more` tells whether jobs remain past it. */
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
  query: Omit<JobListQuery, "limit" | "past">,
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
  concurrency_key: string | null;
  concurrency_limit: number | null;
  rate_limit: string | null;
  timeout_ms: number | null;
  dedupe_key: string | null;
  debounce_key: string | null;
  waiting_for: string | null;
  /** When its last attempt started, and when it finished (null: not yet, or not recorded). */
  started_at: string | null;
  finished_at: string | null;
  /** What its handler last reported of its progress (docs/reference/events.md#progress-and-live-results), or null. */
  progress: { fraction: number; message: string | null; at: string } | null;
  /** Dependencies (docs/reference/lifecycle.md#dependencies): the jobs it waits for, the jobs waiting for it, and what a failed one does to it. */
  depends_on: string[];
  dependents: string[];
  on_dependency_failure: "cancel" | "run";
  /** Its replays, oldest first (replay history: each names this job in `replay_of`). */
  replayed_as: string[];
  /** Its durable steps, sleeps and waits (docs/reference/lifecycle.md#waitpoints-and-durable-steps), in the order they began. */
  steps: JobStepJson[];
  result: unknown;
  error: string | null;
};

/**
 * Steps in the order the handler passed them, read on the database's clock alone (issue 48 #9: "remind" listed before
 * "send"): a step is passed when its result is recorded (finished_at, the database's now()), a sleep or a wait when it
 * suspends the attempt (started_at, the database's now()). A step's started_at is the worker's clock, before its
 * function ran: ordering by it mixed two clocks.
 */
const STEP_ORDER = `CASE WHEN s.kind = 'step' THEN coalesce(s.finished_at, s.started_at) ELSE s.started_at END, s.name`;

/** The job GET /jobs/{id} shows (fields in their documented order), or null when it is not the org's. */
export async function findJob(db: pg.Pool | pg.PoolClient, orgId: string, id: string): Promise<JobDetail | null> {
  const { rows } = await db.query<{ job: JobDetail }>(
    `SELECT conveyor_job_item(j)::jsonb || jsonb_build_object('payload', j.payload, 'result', j.result, 'error', j.error,
              'depends_on', CASE WHEN j.dependencies = 0 THEN '[]'::jsonb
                                 ELSE (SELECT coalesce(jsonb_agg(d.depends_on_id ORDER BY d.depends_on_id), '[]') FROM job_dependencies d WHERE d.job_id = j.id) END,
              'dependents', CASE WHEN j.dependents = 0 THEN '[]'::jsonb
                                 ELSE (SELECT coalesce(jsonb_agg(d.job_id ORDER BY d.job_id), '[]') FROM job_dependencies d WHERE d.depends_on_id = j.id) END,
              'on_dependency_failure', CASE WHEN j.run_on_dependency_failure THEN 'run' ELSE 'cancel' END,
              -- Through jobs_replay_of_idx (only replays are in it).
              'replayed_as', (SELECT coalesce(jsonb_agg(r.id ORDER BY r.id), '[]') FROM jobs r WHERE r.replay_of = j.id AND r.org_id = j.org_id),
              -- Durable steps, sleeps and waits (docs/reference/lifecycle.md#waitpoints-and-durable-steps), in the order they began.
              'steps', (SELECT coalesce(jsonb_agg(jsonb_build_object('name', s.name, 'kind', s.kind, 'status', s.status, 'attempt', s.attempt,
                                  'started_at', ${iso("s.started_at")}, 'finished_at', ${iso("s.finished_at")}, 'wake_at', ${iso("s.wake_at")},
                                  'waitpoint_id', s.waitpoint_id) ORDER BY ${STEP_ORDER}), '[]') FROM job_steps s WHERE s.job_id = j.id)) AS job
       FROM jobs j WHERE j.id = $1 AND j.org_id = $2 AND ${TENANT_JOB("j")}`,
    [id, orgId],
  );
  return rows[0] ? orderJobFields(rows[0].job) : null;
}

/**
 * Which of `orgIds` has a job with this id (none, or one: ids are unique across organizations): the console's "Look in
 * …" for a job id its organization does not have, offered only where the job is.
 */
export async function findJobOrgs(db: pg.Pool | pg.PoolClient, orgIds: readonly string[], id: string): Promise<string[]> {
  if (orgIds.length === 0) return [];
  const { rows } = await db.query<{ org_id: string }>(`SELECT j.org_id FROM jobs j WHERE j.id = $1 AND j.org_id = ANY($2::uuid[]) AND ${TENANT_JOB("j")}`, [
    id,
    orgIds,
  ]);
  return rows.map((row) => row.org_id);
}

/** jsonb does not keep key order: the detail's fields in JOB_DETAIL_FIELDS' order (@conveyor/contracts/job-shape). */
function orderJobFields(job: JobDetail): JobDetail {
  return Object.fromEntries(JOB_DETAIL_FIELDS.map((key) => [key, job[key as keyof JobDetail] ?? null])) as JobDetail;
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

export type JobGraph = { nodes: unknown[]; edges: { from: string; to: string }[]; truncated: boolean };

/**
 * The connected graph of dependencies the job is in (docs/reference/lifecycle.md#dependencies): its jobs as list items (at most `limit`, the job
 * first, then the nearest) and the edges between them, `from` the dependency `to` the job waiting for it. Null when the job is not the
 * org's.
 */
export async function findJobGraph(pool: pg.Pool, orgId: string, id: string, limit: number): Promise<JobGraph | null> {
  const { rows } = await pool.query<{ id: string; item: unknown }>(
    // Breadth first from the job; UNION visits each job once however the edges loop back.
    `WITH RECURSIVE reach(id) AS (
       SELECT j.id FROM jobs j WHERE j.id = $1 AND j.org_id = $2 AND ${TENANT_JOB("j")}
       UNION
       SELECT n.id FROM reach r CROSS JOIN LATERAL (
         SELECT d.depends_on_id AS id FROM job_dependencies d WHERE d.job_id = r.id AND d.org_id = $2
         UNION ALL
         SELECT d.job_id FROM job_dependencies d WHERE d.depends_on_id = r.id AND d.org_id = $2
       ) n
     ), nodes AS (
       SELECT id, row_number() OVER () AS n FROM (SELECT id FROM reach LIMIT $3 + 1) AS r
     )
     -- A waitpoint a job waits on is a node of its own (docs/reference/lifecycle.md#waitpoints-and-durable-steps), marked kind "waitpoint".
     SELECT n.id, CASE WHEN j.id IS NOT NULL THEN conveyor_job_item(j)::jsonb ELSE
                           jsonb_build_object('kind', 'waitpoint', 'id', w.id, 'status', w.status, 'description', w.description,
                                              'created_at', ${iso("w.created_at")}, 'expires_at', ${iso("w.expires_at")},
                                              'finished_at', ${iso("w.finished_at")}) END AS item
       FROM nodes n LEFT JOIN jobs j ON j.id = n.id LEFT JOIN waitpoints w ON w.id = n.id AND w.org_id = $2
      WHERE j.id IS NOT NULL OR w.id IS NOT NULL ORDER BY n.n`,
    [id, orgId, limit],
  );
  if (rows.length === 0) return null;
  const truncated = rows.length > limit;
  const kept = rows.slice(0, limit);
  const { rows: edges } = await pool.query<{ from: string; to: string }>(
    `SELECT depends_on_id AS "from", job_id AS "to" FROM job_dependencies
      WHERE job_id = ANY($1::uuid[]) AND depends_on_id = ANY($1::uuid[]) ORDER BY depends_on_id, job_id`,
    [kept.map((r) => r.id)],
  );
  return { nodes: kept.map((r) => r.item), edges, truncated };
}

/** The statuses of jobs by id, in the order given (jobs just created). */
export async function jobStatuses(client: pg.Pool | pg.PoolClient, ids: readonly string[]): Promise<JobStatus[]> {
  const { rows } = await client.query<{ id: string; status: JobStatus }>("SELECT id, status FROM jobs WHERE id = ANY($1::uuid[])", [ids]);
  const byId = new Map(rows.map((r) => [r.id, r.status]));
  return ids.map((id) => byId.get(id)!);
}

/** Names of plugin types registered by workers (built-in types are not stored). */
export async function listRegisteredTypes(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>("SELECT name FROM job_types ORDER BY name");
  return rows.map((r) => r.name);
}
