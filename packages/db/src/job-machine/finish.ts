// Transitions that end an attempt, recorded under its fence: succeeded, failed, cancelled (the attempt stopped for a
// cancellation), retry scheduled (back to pending until the retry is due) and released (back to pending at once, no
// retry consumed: the worker shut down). With the queued log lines, in one statement per batch.
import type pg from "pg";
import type { JobStatus, LogLevel } from "@conveyor/contracts";
import { DISPATCH_CHANNEL, EVENT_BASE, EVENTS_CHANNEL } from "../core/job-sql";
import { inTransaction } from "../core/transaction";
import { settleDependents } from "./dependencies";
import { announce, countFailures, countUsage, eventData, eventOfStatus, mergedResult, statusIs, unlessCancelRequested } from "./sql";

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
};

/**
 * Writes log lines and outcomes in one statement (one round trip, one transaction): the job rows, their place in
 * the dispatcher's queue (left when final, back in line when pending), their events, and a wake-up for the
 * dispatcher (slots are free). Returns the status each applied outcome left its job in; an id missing from the map
 * lost its fence (a newer attempt owns the job).
 */
export async function writeOutcomes(pool: pg.Pool, logs: readonly LogRow[], outcomes: readonly Outcome[]): Promise<Map<string, JobStatus>> {
  if (logs.length === 0 && outcomes.length === 0) return new Map();
  const applied = await applyOutcomes(pool, logs, outcomes, false);
  const missing = outcomes.filter((o) => !applied.has(o.id)).map((o) => o.id);
  if (missing.length === 0) return applied;
  // Outcomes left out because their job has dependents (docs/reference/lifecycle.md#dependencies): recorded again with the settling of those
  // dependents, in one transaction. (The others missing lost their fence.)
  // Past this point the statement above has committed: what follows retries on its own rather than have the caller
  // write the outcomes and log lines again.
  const { rows } = await inTransaction(
    pool,
    (tx) => tx.query<{ id: string }>("SELECT id FROM jobs WHERE id = ANY($1::uuid[]) AND status = 'processing' AND dependents > 0", [missing]),
    { retry: true },
  );
  if (rows.length === 0) return applied;
  const slow = new Set(rows.map((r) => r.id));
  const settled = await inTransaction(
    pool,
    async (tx) => {
      const done = await applyOutcomes(
        tx,
        [],
        outcomes.filter((o) => slow.has(o.id)),
        true,
      );
      await settleDependents(
        tx,
        [...done].flatMap(([id, status]) => (status === "pending" ? [] : [id])),
      );
      return done;
    },
    { retry: true },
  );
  for (const [id, status] of settled) applied.set(id, status);
  return applied;
}

/**
 * The one statement of writeOutcomes. Unless `settling`, a final outcome of a job that has dependents is left out
 * (not in the answer): its dependents are settled in the same transaction, which the caller then opens.
 */
async function applyOutcomes(
  db: pg.Pool | pg.PoolClient,
  logs: readonly LogRow[],
  outcomes: readonly Outcome[],
  settling: boolean,
): Promise<Map<string, JobStatus>> {
  const sorted = [...outcomes].sort((a, b) => (a.id < b.id ? -1 : 1));
  // Two outcomes of one job (a stale attempt's and its successor's) go in separate statements: the statement finds a
  // job's outcome by the first place of its id in the list.
  const again = sorted.filter((o, i) => i > 0 && sorted[i - 1]!.id === o.id);
  if (again.length) {
    const first = await applyOutcomes(
      db,
      logs,
      sorted.filter((o, i) => i === 0 || sorted[i - 1]!.id !== o.id),
      settling,
    );
    for (const [id, status] of await applyOutcomes(db, [], again, settling)) first.set(id, status);
    return first;
  }
  if (!settling && logs.length === 0 && sorted.every((o) => o.status === "done")) return applySuccesses(db, sorted);
  const { rows } = await db.query<{ id: string; status: JobStatus }>({
    name: "conveyor-write-outcomes",
    text: `WITH ${EVENT_BASE}, applied AS (
       -- Each job finds its outcome by its place in the list (array_position, once per row: the subquery p is kept
       -- apart by OFFSET 0), not by a join with the list: the planner joined the two as a nested loop that unnested
       -- the list again for every row (4,032 rows removed for 64 outcomes). The caller names each job once per
       -- statement (array_position finds the first).
       UPDATE jobs j
          SET (status, retries, result, error, run_at, finished_at, fence, updated_at) = (
                SELECT CASE WHEN o.status = 'pending' THEN ${unlessCancelRequested("j", "'pending'")} ELSE o.status::job_status END,
                       o.retries,
                       CASE WHEN o.status <> 'done' THEN j.result ELSE ${mergedResult("j", "o.result::jsonb")} END,
                       CASE WHEN o.status = 'done' THEN NULL ELSE COALESCE(o.error, j.error) END,
                       CASE WHEN o.status = 'pending' THEN o.run_at ELSE j.run_at END,
                       CASE WHEN o.status = 'pending' AND j.cancel_requested_at IS NULL THEN NULL ELSE now() END,
                       NULL::text,
                       now()
                  FROM (SELECT ($8::text[])[p.k] AS status, ($9::int[])[p.k] AS retries, ($10::text[])[p.k] AS result,
                               ($11::text[])[p.k] AS error, ($12::timestamptz[])[p.k] AS run_at
                          FROM (SELECT array_position($6::uuid[], j.id) AS k OFFSET 0) AS p) AS o)
        WHERE j.id = ANY($6::uuid[]) AND j.fence = ($7::text[])[array_position($6::uuid[], j.id)] AND ${statusIs("j", "processing")}
          AND ($13::boolean OR j.dependents = 0 OR (($8::text[])[array_position($6::uuid[], j.id)] = 'pending' AND j.cancel_requested_at IS NULL))
       RETURNING j.*
     ), finished AS (
       DELETE FROM job_queue q USING applied a WHERE q.job_id = a.id AND a.status <> 'pending'
     ), requeued AS (
       UPDATE job_queue q SET due_at = COALESCE(a.run_at, now()), dispatched_at = NULL, envelope_id = NULL
         FROM applied a WHERE q.job_id = a.id AND a.status = 'pending'
     ), announced AS (
       ${announce({ from: "(SELECT a.id, a.org_id, a.type, a.status, a::jobs AS job FROM applied a)", event: eventOfStatus("x.status") })}
     ), ${countFailures("applied")}, ${countUsage("(SELECT a.org_id, a.type, 'processing'::text AS old_status, a.started_at AS old_started_at, a.status::text AS new_status, a.started_at AS new_started_at FROM applied a)")}, logged AS (
       -- The lines queued so far, in order. An attempt's "succeeded" line is its job.succeeded event (jobs/attempts.ts).
       INSERT INTO job_logs (job_id, attempt, level, message, timestamp)
       SELECT t.job_id, t.attempt, t.level::log_level, t.message, t.ts
         FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::timestamptz[]) WITH ORDINALITY AS t(job_id, attempt, level, message, ts, n)
        ORDER BY t.n
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
      settling,
    ],
  });
  return new Map(rows.map((r) => [r.id, r.status]));
}

/**
 * applyOutcomes' usual case in a statement of its own: every outcome a success (done), no log line, no settling. It
 * writes what the whole statement writes for a success — the job done under its fence (its result merged as there,
 * its error cleared), its queue row deleted, the job.succeeded event, the attempt's milliseconds in the usage rows —
 * and leaves out the parts a success never uses (back in line, failure counts, log lines), which Postgres would
 * otherwise build and tear down at every run (docs/decisions/2026-12-07-lean-transitions.md). A job with
 * dependents is left out, as there: the caller settles them.
 */
async function applySuccesses(db: pg.Pool | pg.PoolClient, sorted: readonly Outcome[]): Promise<Map<string, JobStatus>> {
  const { rows } = await db.query<{ id: string; status: JobStatus }>({
    name: "conveyor-write-successes",
    text: `WITH ${EVENT_BASE}, applied AS (
       UPDATE jobs j
          SET status = 'done', retries = ($3::int[])[array_position($1::uuid[], j.id)],
              result = ${mergedResult("j", "($4::text[])[array_position($1::uuid[], j.id)]::jsonb")},
              error = NULL, finished_at = now(), fence = NULL, updated_at = now()
        WHERE j.id = ANY($1::uuid[]) AND j.fence = ($2::text[])[array_position($1::uuid[], j.id)] AND ${statusIs("j", "processing")} AND j.dependents = 0
       RETURNING j.id, j.org_id, j.type, j.status, j.started_at, ${eventData("j")} AS data
     ), finished AS (
       DELETE FROM job_queue q USING applied a WHERE q.job_id = a.id
     ), announced AS (
       ${announce({ from: "applied", event: eventOfStatus("x.status"), data: "x.data" })}
     ), ${countUsage("(SELECT a.org_id, a.type, 'processing'::text AS old_status, a.started_at AS old_started_at, a.status::text AS new_status, a.started_at AS new_started_at FROM applied a)")}, notified AS (
       SELECT pg_notify('${EVENTS_CHANNEL}', '') FROM (SELECT 1 FROM applied LIMIT 1) AS any_applied
     )
     SELECT id, status, (SELECT count(*) FROM notified) AS notified FROM applied`,
    values: [sorted.map((o) => o.id), sorted.map((o) => o.fence), sorted.map((o) => o.retries), sorted.map((o) => o.result)],
  });
  return new Map(rows.map((r) => [r.id, r.status]));
}
