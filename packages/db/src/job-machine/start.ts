// Transition "started": a worker takes the job for the attempt holding a fence — the status and the event in one
// statement, before the handler runs. Also the take-over of an attempt that was
// lost (its worker died): that attempt is counted as interrupted, and a job someone asked to cancel meanwhile is
// cancelled instead of run again.
import type pg from "pg";
import { MAX_INTERRUPTIONS } from "@conveyor/contracts";
import { EVENT_BASE, EVENTS_CHANNEL } from "../core/job-sql";
import { inTransaction } from "../core/transaction";
import { settleDependents } from "./dependencies";
import { announce, countFailures, countUsage, eventData, eventOfStatus, holderLives, statusIs } from "./sql";

/**
 * An UPDATE of rate-limit rows (`table` as `alias`) joined to the starts wanted per limit (`wanted` as w, with n):
 * each grants as many as its window still allows (conveyor_rate_left, which "held back" reads too) and records them in
 * it. Concurrent claims wanting one limit queue on its row, and each re-reads the window the previous one left: no
 * window ever admits more than the limit — which is what makes the limit exact whatever the number of workers
 * (docs/reference/flow-control.md#flow-control).
 */
function grant(table: string, alias: string, limit: string, period: string, wanted: string, match: string): string {
  const allowed = `greatest(0, least(w.n, conveyor_rate_left(${alias}, now())))`;
  return `UPDATE ${table} ${alias}
          SET last_grant = ${allowed}, starts = conveyor_window_add(${alias}.starts, ${alias}.${period}, ${alias}.${limit}, ${allowed})
         FROM ${wanted} AS w
        WHERE ${match}`;
}

/** When a limit's window, as just updated, admits another start: now if it is not full, else when its oldest start leaves. */
const freesAt = (alias: string, period: string) =>
  `CASE WHEN conveyor_rate_left(${alias}, now()) > 0 THEN now()
        ELSE ${alias}.starts[1] + conveyor_window_span(${alias}.${period}) END`;

/**
 * How soon a rate limit's window must free for a claim it refuses to wait for it instead of putting the job back in
 * line: the worker waits and claims again. Going back in line costs a dispatcher round, a hand-over and a delivery
 * (a few hundred milliseconds under load) every time a window frees — a limit of 500/s ran at 414/s — so the
 * dispatcher hands jobs over this far ahead of the window (flow/flow-control.ts) and the claim bridges the gap.
 */
export const RATE_LIMIT_LEAD_MS = 200;

/**
 * Whether the pending job `job` (a row with id, org_id, type, concurrency_key, concurrency_limit), under its queue's
 * settings `qs` and its type's state `ts` (rows, NULL when missing), is held back from starting by anything but a rate
 * limit: its queue paused, its type paused after a provider's 429, its concurrency key or its organization's cap full
 * of other jobs in flight. The conditions are the stored functions `conveyor_hold` composes
 * (docs/reference/flow-control.md#why-a-job-waits), which Postgres inlines into the claim.
 */
const heldBack = (job: string, qs: string, ts: string) =>
  `conveyor_queue_paused(${qs}) OR conveyor_type_paused_until(${ts}) IS NOT NULL
   OR (${job}.concurrency_key IS NOT NULL
       AND EXISTS (SELECT FROM conveyor_key_full(${job}.org_id, ${job}.concurrency_key, ${job}.concurrency_limit, ${job}.id)))
   OR (conveyor_org_cap(${qs}.concurrency_limit, ${ts}.org_concurrency_limit) IS NOT NULL
       AND EXISTS (SELECT FROM conveyor_org_full(${job}.org_id, ${job}.type, conveyor_org_cap(${qs}.concurrency_limit, ${ts}.org_concurrency_limit), ${job}.id)))`;

/** The error of a job failed because its attempts keep getting lost (`job` is the row before the change). */
const GIVING_UP = (job: string) =>
  `'Attempt ' || (${job}.retries + 1) || ' was interrupted ' || (${job}.interruptions + 1) || ' times; giving up, as the job probably crashes its worker.'`;

/**
 * A claim of job `id` for the attempt holding `fence`. A fence that begins with the claiming worker's id in the worker
 * registry and a colon (`<worker id>:<anything unique to the attempt>`) names the job's holder: while that worker's
 * heartbeat lives, no other claim takes the job over (docs/reference/lifecycle.md#storage-and-leases).
 */
export type ClaimRequest = { id: string; fence: string };

/** A claim refused for a moment: a rate limit's window frees at `retryAt` (within RATE_LIMIT_LEAD_MS); claim again then. */
export type ClaimWait = { id: string; retryAt: Date };

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
  /** The job's own timeout_ms, if it set one. */
  timeoutMs: number | null;
  /** The W3C traceparent of the request that created the job, when it was traced (docs/reference/high-availability.md#scale-out-and-observability). */
  traceParent: string | null;
  /** How many jobs it depends on (docs/reference/lifecycle.md#dependencies): the handler's ctx.dependencies are read when there are any. */
  dependencies: number;
};

/**
 * Claims the jobs for the attempts holding `fence`: pending jobs (the usual case), and processing jobs whose attempt
 * was lost — their holder is gone from the worker registry (holderLives, docs/reference/lifecycle.md#storage-and-leases) — counted as an interruption (a
 * processing job whose holder lives is not returned: another delivery of its id starts nothing; one whose fence is
 * this claim's own is answered again, unchanged);
 * a pending job whose queue or type is paused, whose concurrency key or organization's cap is full of other jobs in
 * flight, or whose rate limits have no start left in their windows, goes back in line instead (it is never failed or
 * retried for it) — unless the windows free within RATE_LIMIT_LEAD_MS: then it is answered with a ClaimWait;
 * if someone asked to cancel the job meanwhile, it is cancelled instead of run again, and a job lost more than
 * MAX_INTERRUPTIONS times is failed (it probably crashes its worker). Jobs that are done, failed,
 * cancelled, unknown, or being claimed by a concurrent delivery are not returned. The job.started event is the
 * attempt's first log line (jobs/attempts.ts); it is committed before the handler runs, so it survives a handler
 * that kills its process.
 */
export async function claimJobs(pool: pg.Pool, requests: readonly ClaimRequest[]): Promise<(ClaimedJob | ClaimWait)[]> {
  if (requests.length === 0) return [];
  // The usual case first (a pending job nothing could hold back), then the whole claim for the jobs it left.
  const plain = await claimPlain(pool, requests);
  const started = new Set(plain.map((c) => c.id));
  const rest = requests.filter((r) => !started.has(r.id));
  const claimed = rest.length ? [...plain, ...(await claim(pool, rest, false))] : plain;
  if (claimed.length === requests.length) return claimed;
  // A take-over that ends a job with dependents (docs/reference/lifecycle.md#dependencies) is left out of the one-statement claim: it is made again
  // here with the settling of those dependents, in one transaction.
  const returned = new Set(claimed.map((c) => c.id));
  // Past this point the claim above has committed: what follows retries on its own rather than have the caller claim
  // again (which would count the attempts just started as lost).
  const { rows } = await inTransaction(
    pool,
    (tx) =>
      tx.query<{ id: string }>(
        `SELECT id FROM jobs WHERE id = ANY($1::uuid[]) AND status = 'processing' AND dependents > 0
          AND (cancel_requested_at IS NOT NULL OR interruptions >= ${MAX_INTERRUPTIONS})
          AND fence IS DISTINCT FROM ($2::text[])[array_position($1::uuid[], id)] AND NOT ${holderLives("jobs")}`,
        [requests.filter((r) => !returned.has(r.id)).map((r) => r.id), requests.filter((r) => !returned.has(r.id)).map((r) => r.fence)],
      ),
    { retry: true },
  );
  if (rows.length === 0) return claimed;
  const slow = new Set(rows.map((r) => r.id));
  await inTransaction(
    pool,
    async (tx) => {
      await claim(
        tx,
        requests.filter((r) => slow.has(r.id)),
        true,
      );
      await settleDependents(tx, [...slow]);
    },
    { retry: true },
  );
  return claimed;
}

/** The columns of a claimed job the claim statements answer with; `previous_status` and `retry_at` as named below. */
type ClaimRow = {
  id: string;
  org_id: string;
  type: string;
  payload: string;
  retries: number;
  max_retries: number;
  interruptions: number;
  timeout_ms: number | null;
  trace_parent: string | null;
  dependencies: number;
  previous_status: "pending" | "processing";
  retry_at: Date | null;
};

const claimedJob = (r: ClaimRow): ClaimedJob => ({
  id: r.id,
  orgId: r.org_id,
  type: r.type,
  payload: r.payload,
  retries: r.retries,
  maxRetries: r.max_retries,
  interruptions: r.interruptions,
  timeoutMs: r.timeout_ms,
  traceParent: r.trace_parent,
  dependencies: r.dependencies,
  previousStatus: r.previous_status,
});

/**
 * The claim's usual case in a statement of its own: the pending jobs that nothing holds back (heldBack's conditions)
 * and nothing could — no rate limit on the job, its queue or its type, no cap of its queue, no dependency still
 * open — started as the whole claim starts them
 * (status, fence, started_at, the job.started event, the usage counts). A job it leaves (held back or possibly so,
 * processing, taken over, already final) is for the whole claim. The whole claim's statement carries every case —
 * rate-limit grants, holds, take-overs, cancellations, failures, logs — and Postgres builds and tears down each of its
 * twelve writing parts at every run, whatever the batch holds: this one has four (docs/decisions/2026-12-07-lean-transitions.md).
 */
async function claimPlain(db: pg.Pool | pg.PoolClient, requests: readonly ClaimRequest[]): Promise<ClaimedJob[]> {
  const sorted = [...requests].sort((a, b) => (a.id < b.id ? -1 : 1));
  const { rows } = await db.query<ClaimRow>({
    name: "conveyor-claim-plain-jobs",
    text: `WITH ${EVENT_BASE}, started AS (
       UPDATE jobs j SET status = 'processing', fence = ($2::text[])[array_position($1::uuid[], j.id)], updated_at = now(), started_at = now()
        WHERE j.id = ANY($1::uuid[]) AND ${statusIs("j", "pending")} AND j.dependencies_pending = 0
          -- Not held back (heldBack; its queue's cap, rare, is left to the whole claim, as is any rate limit, which
          -- the whole claim grants): the queue's settings and the type's state are each read once per job, as
          -- anti-joins, and its key and the deployment's cap are counted only when it has them (the guards spare the
          -- others a subquery's run: +3-6 µs per job without them).
          AND j.rate_limit IS NULL
          AND (j.concurrency_key IS NULL OR NOT EXISTS (SELECT FROM conveyor_key_full(j.org_id, j.concurrency_key, j.concurrency_limit, j.id)))
          AND NOT EXISTS (SELECT FROM queue_settings qs WHERE qs.org_id = j.org_id AND qs.type = j.type
                           AND (conveyor_queue_paused(qs) OR qs.rate_limit IS NOT NULL OR qs.concurrency_limit IS NOT NULL))
          AND NOT EXISTS (SELECT FROM type_state ts WHERE ts.type = j.type
                           AND (conveyor_type_paused_until(ts) IS NOT NULL OR ts.rate_limit IS NOT NULL
                                OR (conveyor_org_cap(NULL, ts.org_concurrency_limit) IS NOT NULL
                                    AND EXISTS (SELECT FROM conveyor_org_full(j.org_id, j.type, conveyor_org_cap(NULL, ts.org_concurrency_limit), j.id)))))
       RETURNING j.id, j.org_id, j.type, j.payload, j.retries, j.max_retries, j.interruptions, j.timeout_ms, j.trace_parent, j.dependencies, j.status, j.started_at,
                 ${eventData("j")} AS data
     ), ${countUsage(`(SELECT s.org_id, s.type, 'pending'::text AS old_status, NULL::timestamptz AS old_started_at, s.status::text AS new_status, s.started_at AS new_started_at FROM started s)`)}, announced AS (
       ${announce({ from: "started", event: eventOfStatus("x.status"), data: "x.data" })}
     ), notified AS (
       SELECT pg_notify('${EVENTS_CHANNEL}', '') FROM (SELECT 1 FROM started LIMIT 1) AS any_change
     )
     SELECT s.id, s.org_id, s.type, s.payload::text AS payload, s.retries, s.max_retries, s.interruptions, s.timeout_ms, s.trace_parent, s.dependencies,
            'pending' AS previous_status, NULL::timestamptz AS retry_at, (SELECT count(*) FROM notified) AS notified
       FROM started s`,
    values: [sorted.map((r) => r.id), sorted.map((r) => r.fence)],
  });
  return rows.map(claimedJob);
}

/**
 * The one statement of claimJobs. Unless `settling`, a take-over that would end a job with dependents (cancelled
 * or failed) is left out: the caller makes it with the settling of those dependents.
 */
async function claim(db: pg.Pool | pg.PoolClient, requests: readonly ClaimRequest[], settling: boolean): Promise<(ClaimedJob | ClaimWait)[]> {
  // Rows are locked in id order, as every other multi-row writer of jobs does, so claims never deadlock with them.
  const sorted = [...requests].sort((a, b) => (a.id < b.id ? -1 : 1));
  const { rows } = await db.query<ClaimRow>({
    // Prepared once per connection: the planner is not run again for every batch.
    name: "conveyor-claim-jobs",
    text: `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::text[]) AS t(id, fence)
     ), ${EVENT_BASE}, named AS MATERIALIZED (
       -- The claimed jobs as they are before this statement, read once: the pending ones to start, the processing
       -- ones a take-over may end (their usage is counted from their started_at).
       SELECT j.id, j.org_id, j.type, j.rate_limit, j.concurrency_key, j.concurrency_limit, j.status, j.started_at, j.dependencies_pending
         FROM jobs j WHERE j.id = ANY($1::uuid[])
     ), pending AS MATERIALIZED (
       -- paused: held back by something other than a rate limit (those are granted below).
       SELECT j.id, j.org_id, j.type, j.rate_limit, qs.rate_limit AS queue_limit, ts.rate_limit IS NOT NULL AS type_limited,
              ${heldBack("j", "qs", "ts")} AS paused, conveyor_type_paused_until(ts) AS paused_until
         FROM named j
         LEFT JOIN queue_settings qs ON qs.org_id = j.org_id AND qs.type = j.type
         LEFT JOIN type_state ts ON ts.type = j.type
        -- (A job waiting for dependencies has no queue row and is never handed over: this only guards a stray.)
        WHERE ${statusIs("j", "pending")} AND j.dependencies_pending = 0
     ), wants AS (
       -- Every rate limit each job starts under (its own, its queue's), ranked per limit within this claim.
       SELECT w.id, w.org_id, w.name, row_number() OVER (PARTITION BY w.org_id, w.name ORDER BY w.id) AS rank
         FROM (SELECT DISTINCT p.id, p.org_id, l.name FROM pending p CROSS JOIN LATERAL (VALUES (p.rate_limit), (p.queue_limit)) AS l(name)
                WHERE NOT p.paused AND l.name IS NOT NULL) AS w
     ), granted AS (
       ${grant("rate_limits", "r", '"limit"', "period_ms", "(SELECT org_id, name, count(*)::int AS n FROM wants GROUP BY org_id, name)", "r.org_id = w.org_id AND r.name = w.name")}
       RETURNING r.org_id, r.name, r.last_grant, ${freesAt("r", "period_ms")} AS frees_at
     ), type_wants AS (
       SELECT p.id, p.type, row_number() OVER (PARTITION BY p.type ORDER BY p.id) AS rank FROM pending p WHERE NOT p.paused AND p.type_limited
     ), type_granted AS (
       ${grant("type_state", "t", "rate_limit", "rate_period_ms", "(SELECT type, count(*)::int AS n FROM type_wants GROUP BY type)", "t.type = w.type")}
       RETURNING t.type, t.last_grant, ${freesAt("t", "rate_period_ms")} AS frees_at
     ), refused AS (
       SELECT w.id, g.frees_at FROM wants w JOIN granted g ON g.org_id = w.org_id AND g.name = w.name WHERE w.rank > g.last_grant
       UNION ALL
       SELECT w.id, g.frees_at FROM type_wants w JOIN type_granted g ON g.type = w.type WHERE w.rank > g.last_grant
     ), refused_until AS (
       SELECT id, max(frees_at) AS frees_at FROM refused GROUP BY id
     ), held AS (
       -- Held back since it was handed over — its queue paused, its type paused by a provider's 429, its concurrency
       -- key or its organization's cap full, a rate limit spent — back in line, due when that ends (a pause of its
       -- queue, a key or a cap: when the dispatcher finds room again), never started.
       -- A window freeing within the lead keeps the job handed over: its worker waits and claims again.
       UPDATE job_queue q SET dispatched_at = NULL, envelope_id = NULL,
              due_at = greatest(q.due_at, p.paused_until, (SELECT r.frees_at FROM refused_until r WHERE r.id = p.id))
         FROM pending p
        WHERE q.job_id = p.id
          AND (p.paused OR p.id IN (SELECT id FROM refused_until WHERE frees_at > now() + ${RATE_LIMIT_LEAD_MS} * interval '1 millisecond'))
       RETURNING q.job_id
     ), started AS (
       -- The jobs to start are named by id and each finds its fence by its place in the list: joined with the list
       -- (or with pending), every row was compared with every other (a nested loop: 4,032 rows removed for 64 jobs).
       UPDATE jobs j SET status = 'processing', fence = ($2::text[])[array_position($1::uuid[], j.id)], updated_at = now(), started_at = now()
        WHERE j.id = ANY(ARRAY(SELECT p.id FROM pending p WHERE NOT p.paused AND p.id NOT IN (SELECT id FROM refused)))
          AND ${statusIs("j", "pending")}
       RETURNING j.id, j.org_id, j.type, j.payload, j.retries, j.max_retries, j.interruptions, j.timeout_ms, j.trace_parent, j.dependencies, j.status, 'pending'::text AS previous_status, j AS job
     ), taken_over AS (
       UPDATE jobs j
          SET status = CASE WHEN j.cancel_requested_at IS NOT NULL THEN 'cancelled'
                            WHEN j.interruptions >= ${MAX_INTERRUPTIONS} THEN 'failed'
                            ELSE 'processing' END::job_status,
              fence = CASE WHEN j.cancel_requested_at IS NULL AND j.interruptions < ${MAX_INTERRUPTIONS} THEN i.fence END,
              finished_at = CASE WHEN j.cancel_requested_at IS NOT NULL OR j.interruptions >= ${MAX_INTERRUPTIONS} THEN now() END,
              started_at = CASE WHEN j.cancel_requested_at IS NULL AND j.interruptions < ${MAX_INTERRUPTIONS} THEN now() ELSE j.started_at END,
              interruptions = j.interruptions + (j.cancel_requested_at IS NULL)::int,
              error = CASE WHEN j.cancel_requested_at IS NULL AND j.interruptions >= ${MAX_INTERRUPTIONS} THEN ${GIVING_UP("j")} ELSE j.error END,
              updated_at = now()
         FROM input i
        WHERE j.id = ANY($1::uuid[]) AND j.id = i.id AND ${statusIs("j", "processing")}
          -- Only a lapsed holder's attempt is taken over (docs/reference/lifecycle.md#storage-and-leases): while the worker that holds the job lives, a
          -- second delivery of its id starts nothing. The attempt asking again with its own fence is answered below.
          AND j.fence IS DISTINCT FROM i.fence AND NOT ${holderLives("j")}
          AND ($3::boolean OR j.dependents = 0 OR (j.cancel_requested_at IS NULL AND j.interruptions < ${MAX_INTERRUPTIONS}))
       RETURNING j.id, j.org_id, j.type, j.payload, j.retries, j.max_retries, j.interruptions, j.timeout_ms, j.trace_parent, j.dependencies, j.status, 'processing'::text AS previous_status, j AS job
     ), reclaimed AS (
       -- The attempt that holds the job claiming it again (its first claim committed, but the answer was lost with the
       -- connection and the worker retried): answered as it was, nothing written.
       SELECT j.id, j.org_id, j.type, j.payload, j.retries, j.max_retries, j.interruptions, j.timeout_ms, j.trace_parent, j.dependencies, j.status,
              CASE WHEN j.interruptions > 0 THEN 'processing' ELSE 'pending' END AS previous_status
         FROM jobs j JOIN input i ON i.id = j.id AND i.fence = j.fence
        WHERE j.id = ANY($1::uuid[]) AND ${statusIs("j", "processing")}
     ), changed AS (
       SELECT * FROM started UNION ALL SELECT * FROM taken_over
     ), ${countUsage(`(SELECT s.org_id, s.type, 'pending'::text AS old_status, NULL::timestamptz AS old_started_at, s.status::text AS new_status, (s.job).started_at AS new_started_at FROM started s
        UNION ALL
        SELECT t.org_id, t.type, 'processing', p.started_at, t.status::text, (t.job).started_at FROM taken_over t JOIN named p ON p.id = t.id)`)}, dequeued AS (
       DELETE FROM job_queue q USING taken_over t WHERE q.job_id = t.id AND t.status <> 'processing'
     ), announced AS (
       ${announce({ from: "changed", event: eventOfStatus("x.status") })}
     ), ${countFailures(
       "(SELECT t.id, t.org_id, t.type, t.status, (t.job).failure_group AS failure_group, (t.job).finished_at AS finished_at, (t.job).created_at AS created_at FROM taken_over t)",
     )}, logged AS (
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
     SELECT c.id, c.org_id, c.type, c.payload::text AS payload, c.retries, c.max_retries, c.interruptions, c.timeout_ms, c.trace_parent, c.dependencies, c.previous_status,
            NULL::timestamptz AS retry_at, (SELECT count(*) FROM notified) AS notified, (SELECT count(*) FROM held) AS held
       FROM changed c WHERE c.status = 'processing'
     UNION ALL
     SELECT c.id, c.org_id, c.type, c.payload::text, c.retries, c.max_retries, c.interruptions, c.timeout_ms, c.trace_parent, c.dependencies, c.previous_status,
            NULL, NULL, NULL
       FROM reclaimed c
     UNION ALL
     SELECT r.id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, r.frees_at, NULL, NULL
       FROM refused_until r JOIN pending p ON p.id = r.id
      WHERE NOT p.paused AND r.frees_at <= now() + ${RATE_LIMIT_LEAD_MS} * interval '1 millisecond'`,
    values: [sorted.map((r) => r.id), sorted.map((r) => r.fence), settling],
  });
  return rows.map((r) => (r.retry_at ? { id: r.id, retryAt: r.retry_at } : claimedJob(r)));
}
