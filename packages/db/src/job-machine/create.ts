// Transition "created" (docs/reference/lifecycle.md#lifecycle, docs/reference/time.md#time-priority-and-fairness): a job row, its place in the dispatcher's queue, its payload's search values and
// its job.created event, in one statement, then a wake-up for the dispatcher. The API never talks to Redis to create
// a job: the dispatcher hands it to BullMQ when it is due and there is room.
import type pg from "pg";
import { CONCURRENCY_LIMIT_DEFAULT, searchValues, type JobStatus } from "@conveyor/contracts";
import { DISPATCH_CHANNEL, dispatchTypes, EVENT_BASE, EVENTS_CHANNEL, TENANT_JOB } from "../core/job-sql";
import { inTransaction, Rollback, rollingBack } from "../core/transaction";
import { insertDependencyEdges, lockDependencies, settleDependents, type DependencyEdge } from "./dependencies";
import { announce, eventData, eventOf } from "./sql";

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
  /** Flow control (docs/reference/flow-control.md#flow-control). */
  concurrencyKey?: string | null;
  concurrencyLimit?: number | null;
  rateLimit?: string | null;
  timeoutMs?: number | null;
  /** Refused (not inserted) while a job of the org created within `seconds` with this key has not failed or been cancelled. */
  dedupe?: { key: string; seconds: number } | null;
  /** A debounced job: its queue row holds the key until it is handed over (job-machine/debounce.ts). */
  debounceKey?: string | null;
  /** The W3C traceparent of the creating request (docs/reference/high-availability.md#scale-out-and-observability), when tracing is on. */
  traceParent?: string | null;
  /**
   * Jobs this one waits for (docs/reference/lifecycle.md#dependencies): ids of the org's jobs, or of jobs of the same call. Checked here: one that
   * is no job of the org throws UnknownDependencyError (and nothing is created).
   */
  dependsOn?: readonly string[];
  /** Runs even when a dependency failed or was cancelled (`on_dependency_failure: "run"`). */
  runOnDependencyFailure?: boolean;
};

/** What a job's place in a graph adds to its row: counts of dependencies (unfinished too) and of dependents. */
type GraphCounts = { dependencies: number; pending: number; dependents: number };

/** Ids of the jobs a dedupe key refused, with the key: another job holds it. */
export type Refused = Map<string, string>;

/**
 * Inserts jobs in one statement (the API batches concurrent requests into one call). `job.created` is timed by
 * Postgres' clock, like every other event; `created_at` is the creator's. A job whose dedupe key is held is not
 * inserted: its id is in the answer (of jobs sharing a key in one call, the caller keeps only the first). Of
 * concurrent calls with one key, the unique key row lets exactly one in.
 */
export async function insertJobs(client: pg.Pool | pg.PoolClient, jobs: readonly NewJob[]): Promise<Refused> {
  if (jobs.length === 0) return new Map();
  if (!jobs.some((j) => j.dependsOn?.length)) return insertRows(client, jobs, new Map());
  // A graph takes a few statements, which must commit together: a connection given is inside a transaction.
  return "totalCount" in client ? inTransaction(client, (tx) => insertGraph(tx, jobs)) : insertGraph(client, jobs);
}

/**
 * Jobs with dependencies: their outside dependencies locked and counted (lockDependencies), the rows (a job with
 * a dependency not final has no queue row yet), the edges, and — for a job depending on one that has failed or
 * was cancelled already — its cancellation (or, with on_dependency_failure "run", nothing: that one is final).
 */
async function insertGraph(tx: pg.PoolClient, jobs: readonly NewJob[]): Promise<Refused> {
  const created = new Set(jobs.map((j) => j.id));
  const edges: DependencyEdge[] = jobs.flatMap((j) => [...new Set(j.dependsOn ?? [])].map((dependsOn) => ({ jobId: j.id, orgId: j.orgId, dependsOn })));
  const outside = await lockDependencies(tx, edges, created);
  const counts = new Map<string, GraphCounts>(jobs.map((j) => [j.id, { dependencies: 0, pending: 0, dependents: 0 }]));
  const failedRoots = new Set<string>();
  const doomed: string[] = [];
  for (const job of jobs) {
    const own = counts.get(job.id)!;
    let failed = false;
    for (const dependsOn of new Set(job.dependsOn ?? [])) {
      own.dependencies++;
      const status = created.has(dependsOn) ? "pending" : outside.get(dependsOn)!;
      if (created.has(dependsOn)) counts.get(dependsOn)!.dependents++;
      if (status === "pending" || status === "processing") own.pending++;
      else if (status !== "done" && !job.runOnDependencyFailure) {
        failed = true;
        failedRoots.add(dependsOn);
      }
    }
    // Held back like a waiting job (no queue row) until settled below, in this transaction.
    if (failed) {
      own.pending++;
      doomed.push(job.id);
    }
  }
  const refused = await insertRows(tx, jobs, counts);
  if (refused.size) throw new Error("a job of a graph was refused by its dedupe key; the API does not allow dedupe keys in graphs");
  await insertDependencyEdges(tx, edges);
  if (doomed.length) await settleDependents(tx, [...failedRoots], doomed);
  return refused;
}

/**
 * Two CTEs, `created_counted` and `stored_counted`, counting the rows of `inserted` (columns `org_id`, `type`,
 * `created_at`, `payload_bytes`: the payload's size as its jsonb text, NULL for an internal job) in the usage rows
 * (docs/reference/tenants.md#usage-quotas-and-backpressure): jobs created and their payload bytes by organization, UTC
 * day of created_at and type, and the organization's stored payload bytes and pending jobs (every job is pending when
 * it is inserted). What the jobs insert trigger counted until the statement counted it itself (docs/reference/lifecycle.md#storage-and-leases):
 * no transition table of whole rows, and each payload turned into text once rather than once per usage table. The
 * usage rows before the stored rows, each in key order, as countUsage takes them; both after every other write of the
 * statement, where the trigger took them: CTEs that the final SELECT does not read run after it, the last written
 * first, so these two come right after `inserted`, before the CTEs written after them.
 */
const COUNT_CREATED = `created_counted AS (
       INSERT INTO usage_counts AS u (org_id, day, type, stripe, jobs_created, payload_bytes)
       SELECT c.org_id, (c.created_at AT TIME ZONE 'UTC')::date, c.type, conveyor_usage_stripe(), count(*), sum(c.payload_bytes)
         FROM inserted c
        WHERE ${TENANT_JOB("c")}
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
       ON CONFLICT (org_id, day, type, stripe) DO UPDATE
          SET jobs_created = u.jobs_created + EXCLUDED.jobs_created, payload_bytes = u.payload_bytes + EXCLUDED.payload_bytes
       RETURNING 1
     ), stored_counted AS (
       INSERT INTO stored_payload_bytes AS s (org_id, stripe, bytes, pending_jobs)
       SELECT c.org_id, conveyor_usage_stripe(), sum(c.payload_bytes), count(*)
         FROM inserted c
        WHERE ${TENANT_JOB("c")}
          -- After the usage rows: the subquery runs their upsert first.
          AND (SELECT count(*) FROM created_counted) >= 0
        GROUP BY 1 ORDER BY 1
       ON CONFLICT (org_id, stripe) DO UPDATE SET bytes = s.bytes + EXCLUDED.bytes, pending_jobs = s.pending_jobs + EXCLUDED.pending_jobs
     )`;

/**
 * A job's search values as a Postgres array literal, with its short id (the last 8 characters of its id, which the
 * console shows) so it can be searched: every element quoted, `"` and `\\` escaped (array_in's own rules), so the
 * statement casts it to text[] without parsing JSON and unnesting it per job.
 */
export function searchLiteral(id: string, values: readonly string[]): string {
  let literal = "{";
  for (const value of values) literal += `"${value.replace(/["\\]/g, "\\$&")}",`;
  // The id as Postgres writes a uuid (lower case, no braces) has its last 8 hex digits last.
  return `${literal}"${id
    .replace(/[^0-9a-f]/gi, "")
    .slice(-8)
    .toLowerCase()}"}`;
}

/**
 * One input column of the creation statement: the batch's values, or null when every one is missing — unnest reads a
 * null array as a column of NULLs as long as the longest array, so a batch of plain jobs sends (and Postgres parses)
 * no array of a thousand NULLs for each option none of its jobs uses.
 */
function column<T>(jobs: readonly NewJob[], value: (job: NewJob) => T | null | undefined): (T | null)[] | null {
  const values = jobs.map((j) => value(j) ?? null);
  return values.some((v) => v !== null) ? values : null;
}

async function insertRows(client: pg.Pool | pg.PoolClient, jobs: readonly NewJob[], graph: ReadonlyMap<string, GraphCounts>): Promise<Refused> {
  // A batch without dedupe keys (every batch of plain jobs, every graph) runs a statement without the key's CTEs:
  // its rows go from the input straight to the insert, in the input's order.
  const dedupe = jobs.some((j) => j.dedupe);
  const { rows } = await client.query<{ refused: string[] | null }>({
    name: dedupe ? "conveyor-insert-jobs-dedupe" : "conveyor-insert-jobs",
    text: `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::int[], $6::timestamptz[], $7::smallint[], $8::timestamptz[], $9::uuid[], $10::uuid[], $11::text[],
                            $12::text[], $13::smallint[], $14::text[], $15::int[], $16::text[], $17::int[], $18::text[],
                            $19::smallint[], $20::smallint[], $21::int[], $22::boolean[], $23::text[])
         WITH ORDINALITY AS t(id, org_id, type, payload, max_retries, created_at, priority, run_at, replay_of, schedule_id, search,
                              concurrency_key, concurrency_limit, rate_limit, timeout_ms, dedupe_key, dedupe_seconds, debounce_key,
                              dependencies, dependencies_pending, dependents, run_on_dependency_failure, trace_parent, n)
     ), ${EVENT_BASE}, ${
       dedupe
         ? `deduped AS (
       -- A key is taken over when its job is older than this job's window, or failed or was cancelled. (Not when its
       -- job cannot be seen: a job committed while this statement waited for the key's row is not in its snapshot.)
       INSERT INTO dedupe_keys AS k (org_id, key, job_id, created_at)
       SELECT org_id, dedupe_key, id, created_at FROM input WHERE dedupe_key IS NOT NULL
       ON CONFLICT (org_id, key) DO UPDATE SET job_id = EXCLUDED.job_id, created_at = EXCLUDED.created_at
        WHERE k.created_at <= EXCLUDED.created_at - (SELECT i.dedupe_seconds FROM input i WHERE i.id = EXCLUDED.job_id) * interval '1 second'
           OR EXISTS (SELECT 1 FROM jobs d WHERE d.id = k.job_id AND d.status IN ('failed', 'cancelled'))
       RETURNING job_id
     ), accepted AS (
       SELECT * FROM input WHERE dedupe_key IS NULL OR id IN (SELECT job_id FROM deduped)
     ), `
         : ""
     }inserted AS (
       INSERT INTO jobs (id, org_id, type, status, payload, retries, max_retries, created_at, updated_at, run_at, priority, replay_of, schedule_id,
                         concurrency_key, concurrency_limit, rate_limit, timeout_ms, dedupe_key, debounce_key,
                         dependencies, dependencies_pending, dependents, run_on_dependency_failure, trace_parent)
       SELECT id, org_id, type, 'pending', payload::jsonb, 0, max_retries, created_at, created_at, run_at, priority, replay_of, schedule_id,
              concurrency_key, concurrency_limit, rate_limit, timeout_ms, dedupe_key, debounce_key,
              COALESCE(dependencies, 0), COALESCE(dependencies_pending, 0), COALESCE(dependents, 0), COALESCE(run_on_dependency_failure, false), trace_parent
         FROM ${dedupe ? "accepted ORDER BY n" : "input"}
       -- The event's JSON from the new row's own columns (not from a copy of the whole row taken apart again).
       RETURNING id, org_id, type, priority, run_at, created_at, concurrency_key, concurrency_limit, rate_limit, debounce_key, dependencies_pending,
                 ${eventData("jobs")} AS data, CASE WHEN ${TENANT_JOB("jobs")} THEN octet_length(payload::text) END AS payload_bytes
     ), ${COUNT_CREATED}, searchable AS (
       INSERT INTO job_search (job_id, org_id, search_values)
       SELECT id, org_id, search::text[] FROM ${
         // Without the keys' CTEs, the insert alone reads input (which Postgres then inlines, copying no row of it):
         // the search values are unnested apart, three columns. An internal job has none (null).
         dedupe ? "accepted" : "unnest($1::uuid[], $2::uuid[], $11::text[]) AS s(id, org_id, search)"
       } WHERE search IS NOT NULL
     ), queued AS (
       INSERT INTO job_queue (job_id, type, org_id, priority, due_at, concurrency_key, concurrency_limit, rate_limit, debounce_key)
       SELECT id, type, org_id, priority, COALESCE(run_at, created_at), concurrency_key, concurrency_limit, rate_limit, debounce_key FROM inserted
        -- A job waiting for dependencies joins the queue when the last one is final (dependencies.ts).
        WHERE dependencies_pending = 0
     ), announced AS (
       ${announce({ from: "inserted", event: eventOf("created"), data: "x.data" })}
     )
     SELECT pg_notify('${DISPATCH_CHANNEL}', ${dispatchTypes("inserted")}), pg_notify('${EVENTS_CHANNEL}', ''),
            ${dedupe ? "(SELECT array_agg(id::text || ' ' || dedupe_key) FROM input WHERE dedupe_key IS NOT NULL AND id NOT IN (SELECT job_id FROM deduped))" : "NULL::text[]"} AS refused`,
    values: [
      jobs.map((j) => j.id),
      jobs.map((j) => j.orgId),
      jobs.map((j) => j.type),
      jobs.map((j) => j.payloadJson),
      jobs.map((j) => j.maxRetries),
      jobs.map((j) => j.createdAt),
      jobs.map((j) => j.priority ?? 5),
      column(jobs, (j) => j.runAt),
      column(jobs, (j) => j.replayOf),
      column(jobs, (j) => j.scheduleId),
      // Internal jobs (TENANT_JOB) are never searched.
      jobs.map((j) => (j.type.startsWith("_") ? null : searchLiteral(j.id, searchValues(j.payload ?? JSON.parse(j.payloadJson))))),
      column(jobs, (j) => j.concurrencyKey),
      column(jobs, (j) => (j.concurrencyKey ? (j.concurrencyLimit ?? CONCURRENCY_LIMIT_DEFAULT) : null)),
      column(jobs, (j) => j.rateLimit),
      column(jobs, (j) => j.timeoutMs),
      column(jobs, (j) => j.dedupe?.key),
      column(jobs, (j) => j.dedupe?.seconds),
      column(jobs, (j) => j.debounceKey),
      // A graph's counts (a job outside any has none: the statement's COALESCE reads 0).
      column(jobs, (j) => graph.get(j.id)?.dependencies),
      column(jobs, (j) => graph.get(j.id)?.pending),
      column(jobs, (j) => graph.get(j.id)?.dependents),
      column(jobs, (j) => j.runOnDependencyFailure || null),
      column(jobs, (j) => j.traceParent),
    ],
  });
  const refused: Refused = new Map();
  for (const entry of rows[0]?.refused ?? []) {
    const space = entry.indexOf(" ");
    refused.set(entry.slice(0, space), entry.slice(space + 1));
  }
  return refused;
}

/** A check in a creation's transaction once its jobs are inserted (a quota): throwing rolls the creation back. */
export type CreationGuard = (tx: pg.PoolClient) => Promise<void>;

export type IdempotentInsert =
  /** `status`: the job's as this transaction created it (pending, or cancelled by a dependency that had failed). */
  | { created: true; status: JobStatus }
  /** `deduplicated`: the key is new, but the job's dedupe key is held by `existing`, which the key now names. */
  | { created: false; deduplicated: boolean; existing: { id: string; status: JobStatus; requestHash: Buffer } };

/**
 * Inserts `job` unless `key` was used by the org within its lifetime, atomically: of concurrent requests with
 * the same key exactly one creates a job; the others get the job it created. An expired key is taken over. A job
 * its dedupe key refuses is not created; the idempotency key then names the job holding the dedupe key.
 */
export async function insertJobIdempotently(
  pool: pg.Pool,
  job: NewJob,
  key: string,
  requestHash: Buffer,
  ttlMs: number,
  /** Runs in the transaction after the insert (quotas.ts `enforceQuotas`); throwing rolls it back. */
  guard?: CreationGuard,
): Promise<IdempotentInsert> {
  // Claimed for this job: created. Claimed for the dedupe key's holder: committed, then read. Not claimed (a live key
  // of another request): rolled back, then read.
  const created = await rollingBack(
    inTransaction(pool, async (client): Promise<IdempotentInsert | null | false> => {
      const refused = await insertJobs(client, [job]);
      if (guard && !refused.has(job.id)) await guard(client);
      const holder = refused.has(job.id)
        ? (await client.query<{ job_id: string }>("SELECT job_id FROM dedupe_keys WHERE org_id = $1 AND key = $2", [job.orgId, job.dedupe!.key])).rows[0]!
            .job_id
        : job.id;
      const claimed = await client.query(
        `INSERT INTO idempotency_keys (org_id, key, job_id, request_hash, expires_at)
       VALUES ($1, $2, $3, $4, $5::timestamptz + $6 * interval '1 millisecond')
       ON CONFLICT (org_id, key) DO UPDATE
         SET job_id = EXCLUDED.job_id, request_hash = EXCLUDED.request_hash, expires_at = EXCLUDED.expires_at
         WHERE idempotency_keys.expires_at <= $5
       RETURNING job_id`,
        [job.orgId, key, holder, requestHash, job.createdAt, ttlMs],
      );
      if (!claimed.rowCount) throw new Rollback(false);
      if (holder !== job.id) return null;
      // Read before the commit: once committed, a dispatcher may hand the job over before a later read.
      const status = job.dependsOn?.length
        ? (await client.query<{ status: JobStatus }>("SELECT status FROM jobs WHERE id = $1", [job.id])).rows[0]!.status
        : ("pending" as const);
      return { created: true, status };
    }),
  );
  if (created) return created;
  const { rows } = await pool.query<{ id: string; status: JobStatus; request_hash: Buffer }>(
    `SELECT j.id, j.status, k.request_hash FROM idempotency_keys k JOIN jobs j ON j.id = k.job_id
      WHERE k.org_id = $1 AND k.key = $2`,
    [job.orgId, key],
  );
  const row = rows[0];
  if (!row) throw new Error("idempotency key vanished between conflict and read");
  return { created: false, deduplicated: created === null, existing: { id: row.id, status: row.status, requestHash: row.request_hash } };
}
