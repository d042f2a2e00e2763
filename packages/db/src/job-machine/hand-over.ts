// Transitions "handed over" and "returned to line": the dispatcher's marks on a job's queue row. A handed-over job
// stays `pending` (no event): it waits in BullMQ until a worker starts it. Which jobs are handed over is the
// dispatcher's decision (../flow/dispatch.ts); these only write it down. (Rate limits are spent when a job starts.)
import type pg from "pg";
import { sessionPool } from "../core/client";
import { DISPATCH_CHANNEL } from "../core/job-sql";
import { holderLives } from "./sql";

/**
 * A connection for the dispatcher's marks, with synchronous_commit off (a mark lost in a crash is a job handed over
 * again, which is harmless) and generic plans for its prepared statements, holding the dispatch lock: a session
 * advisory lock that only one dispatcher holds at a time, so limits counted from what is handed over cannot be overrun
 * by two leaders overlapping after a lease expiry. Null when another dispatcher holds the lock. The caller releases it
 * (destroying it if Postgres reported an error on it); closing the connection releases the lock, also when the
 * process dies.
 */
export async function handOverConnection(pool: pg.Pool): Promise<pg.PoolClient | null> {
  // A session lock and a SET: on a direct connection, never through a transaction pooler (issue 37).
  const client = await sessionPool(pool).connect();
  try {
    const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock(hashtextextended('conveyor_dispatcher', 0)) AS locked");
    if (!rows[0]!.locked) {
      client.release();
      return null;
    }
    // Set once the lock is held, so a connection given back to the pool carries none of it. Generic plans: the rounds'
    // statements are prepared on this connection and run with new values each round; left to choose, Postgres
    // planned findDueWork anew at every run (≈ 1 ms of planning for 0.2 ms of work), and the generic plans do as
    // well for a backlog (docs/decisions/2026-11-28-issue-32s-missed-rows-pgcost-dispatchers.md).
    await client.query("SET synchronous_commit = off; SET plan_cache_mode = force_generic_plan");
    return client;
  } catch (error) {
    client.release(true);
    throw error;
  }
}

/** Releases the dispatch lock and gives the connection back as the pool lent it (its settings reset). */
export async function closeHandOverConnection(client: pg.PoolClient): Promise<void> {
  await client
    .query("SELECT pg_advisory_unlock(hashtextextended('conveyor_dispatcher', 0)); RESET synchronous_commit; RESET plan_cache_mode")
    .then(() => client.release())
    .catch(() => client.release(true));
}

export type Candidate = { jobId: string; orgId: string; dueAt: Date; concurrencyKey: string | null; concurrencyLimit: number | null; rateLimit: string | null };

/**
 * Up to `shares[i]` due, waiting jobs of `orgs[i]` of one type and priority, oldest first, leaving out the jobs of
 * concurrency keys that are full (their count in flight — `conveyor_keys_in_flight` of "held back", read with the
 * limits, plus the jobs this round chose — reaches the job's limit) and of rate limits that are spent (`org key` /
 * `org name` strings). The counts are looked up in a JSON object rather than counted again per row: a subquery per
 * row priced a backlog's scan past jit_above_cost, and Postgres compiled the statement at every run (65 ms).
 */
export async function dueCandidates(
  db: pg.Pool | pg.PoolClient,
  choice: {
    type: string;
    priority: number;
    orgs: readonly string[];
    shares: readonly number[];
    /** Keys no job may join whatever its limit. */
    fullKeys: readonly string[];
    /** Jobs in flight per key. */
    keysInFlight: readonly [string, number][];
    spentLimits: readonly string[];
  },
): Promise<Candidate[]> {
  const { rows } = await db.query<{
    job_id: string;
    org_id: string;
    due_at: Date;
    concurrency_key: string | null;
    concurrency_limit: number | null;
    rate_limit: string | null;
  }>({
    name: "conveyor-due-candidates",
    text: `SELECT w.* FROM unnest($3::uuid[], $4::int[]) AS o(org_id, share)
      CROSS JOIN LATERAL (
        SELECT job_id, org_id, due_at, concurrency_key, concurrency_limit, rate_limit FROM job_queue
         WHERE type = $1 AND priority = $2 AND org_id = o.org_id AND dispatched_at IS NULL AND due_at <= now()
           AND (concurrency_key IS NULL OR (org_id::text || ' ' || concurrency_key <> ALL($5::text[])
                AND concurrency_limit > coalesce(($6::jsonb ->> (org_id::text || ' ' || concurrency_key))::int, 0)))
           AND (rate_limit IS NULL OR org_id::text || ' ' || rate_limit <> ALL($7::text[]))
         ORDER BY due_at, job_id
         LIMIT o.share
      ) AS w`,
    values: [
      choice.type,
      choice.priority,
      choice.orgs,
      choice.shares,
      choice.fullKeys,
      // A JSON object: looking a key up in it is a binary search, not a scan of every key in flight for each row.
      JSON.stringify(Object.fromEntries(choice.keysInFlight)),
      choice.spentLimits,
    ],
  });
  return rows.map((r) => ({
    jobId: r.job_id,
    orgId: r.org_id,
    dueAt: r.due_at,
    concurrencyKey: r.concurrency_key,
    concurrencyLimit: r.concurrency_limit,
    rateLimit: r.rate_limit,
  }));
}

/** Jobs to hand over together: one envelope, one BullMQ job (docs/reference/lifecycle.md#envelopes). */
export type EnvelopePlan = { id: string; jobIds: readonly string[] };

/**
 * Marks the jobs of `envelopes` handed over in them — those still waiting and due (a cancel, or a debounce pushing one
 * back, may have come first) — freeing their debounce keys, in one statement. `db` should be the `handOverConnection`.
 * Answers the ids marked, each with the trace context its job was created in when `traceParents` is asked for
 * (tracing on: the hand-over is a span of the job's trace), else null.
 */
export async function handOver(db: pg.Pool | pg.PoolClient, envelopes: readonly EnvelopePlan[], traceParents = false): Promise<Map<string, string | null>> {
  const jobIds = envelopes.flatMap((e) => e.jobIds);
  const envelopeIds = envelopes.flatMap((e) => e.jobIds.map(() => e.id));
  // The rows are named by id (= ANY) and "not handed over" is written as num_nulls(…) = 1, not IS NULL: the planner
  // then cannot use the partial indexes of waiting rows (whose predicate is dispatched_at IS NULL) and probes the
  // primary key for each job, instead of reading every waiting row when its statistics are stale (a burst since the
  // last ANALYZE: 6.6 ms against 1.3 ms for 64 jobs with 20,000 waiting). See sql.ts, statusIs. Each row finds its
  // envelope by its place in the list (array_position) rather than by a join with the list: the planner joined the
  // two by a nested loop that compared every row with every id (14,280 comparisons for 120 jobs, 7 ms against 1.4).
  const { rows } = await db.query<{ job_id: string; trace_parent: string | null }>({
    // Prepared once per connection (the dispatcher's marker).
    name: traceParents ? "conveyor-hand-over-traced" : "conveyor-hand-over",
    text: `UPDATE job_queue q SET dispatched_at = now(), debounce_key = NULL, envelope_id = ($2::uuid[])[array_position($1::uuid[], q.job_id)]
      WHERE q.job_id = ANY($1::uuid[]) AND num_nulls(q.dispatched_at) = 1 AND q.due_at <= now()
     RETURNING q.job_id, ${traceParents ? "(SELECT j.trace_parent FROM jobs j WHERE j.id = q.job_id)" : "NULL::text"} AS trace_parent`,
    values: [jobIds, envelopeIds],
  });
  return new Map(rows.map((r) => [r.job_id, r.trace_parent]));
}

/**
 * Puts handed-over jobs back in line (BullMQ refused them, or Redis lost them) and wakes the dispatcher, which hands
 * them over again in turn. Answers how many were handed over and are now back.
 */
export async function returnToLine(db: pg.Pool | pg.PoolClient, jobIds: readonly string[]): Promise<number> {
  if (jobIds.length === 0) return 0;
  const result = await db.query<{ n: string }>(
    `WITH reset AS (UPDATE job_queue SET dispatched_at = NULL, envelope_id = NULL WHERE job_id = ANY($1::uuid[]) AND dispatched_at IS NOT NULL RETURNING 1)
     SELECT pg_notify('${DISPATCH_CHANNEL}', ''), (SELECT count(*) FROM reset) AS n`,
    [jobIds],
  );
  return Number(result.rows[0]!.n);
}

/** Records that running jobs are carried by `envelopeId` from now on (the reconciler put them back on their queue). */
export async function setEnvelope(db: pg.Pool | pg.PoolClient, jobIds: readonly string[], envelopeId: string): Promise<void> {
  await db.query("UPDATE job_queue SET envelope_id = $2 WHERE job_id = ANY($1::uuid[])", [jobIds, envelopeId]);
}

/**
 * Of `jobs` (ids with the envelope they were seen in), those still handed over in that same envelope — pending, or
 * running with no live holder — now. The reconciler asks after finding an envelope missing from Redis: an envelope
 * completes only once its started jobs' outcomes are recorded, so a job that moved on meanwhile (finished, back in
 * line, handed over again) was not lost with it. Nor is a running job whose holder lives (holderLives, docs/reference/lifecycle.md#storage-and-leases): a
 * second delivery of it (overlapping leaders, a stalled check) was refused by the claim and completed its envelope
 * while the holder runs it; putting one back would only be refused again, every cycle, until the holder finishes.
 */
export async function stillInEnvelopes(db: pg.Pool | pg.PoolClient, jobs: readonly { id: string; envelopeId: string }[]): Promise<Set<string>> {
  if (jobs.length === 0) return new Set();
  const { rows } = await db.query<{ job_id: string }>(
    `SELECT q.job_id FROM unnest($1::uuid[], $2::uuid[]) AS s(job_id, envelope_id)
       JOIN job_queue q ON q.job_id = s.job_id AND q.envelope_id = s.envelope_id
       JOIN jobs j ON j.id = q.job_id
      WHERE q.job_id = ANY($1::uuid[]) AND num_nulls(q.dispatched_at) = 0
        AND NOT (j.status = 'processing' AND ${holderLives("j")})`,
    [jobs.map((j) => j.id), jobs.map((j) => j.envelopeId)],
  );
  return new Set(rows.map((r) => r.job_id));
}
