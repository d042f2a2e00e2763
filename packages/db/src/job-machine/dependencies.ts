// Transitions "waiting on dependencies", "released" and "cancelled for a dependency" (docs/reference/lifecycle.md#dependencies). A job created with
// `depends_on` counts its dependencies that are not final in `dependencies_pending` and has no row in the
// dispatcher's queue while any are left, so the dispatcher never reads it (conveyor_waiting_for answers
// "dependencies"). The transition that makes a job final settles the jobs waiting for it in the same transaction:
//   - each waiting dependent's count goes down; one that reaches zero gets its queue row (due at its run_at or now),
//   - a failed or cancelled dependency cancels its waiting dependents (error dependency_failed, a job.cancelled
//     event and a log line each), and theirs, down the whole chain, unless a dependent was created with
//     `on_dependency_failure: "run"` (then the failure counts as final like a success).
// Settling reads edges in a statement of its own, after the final transition's statement: a dependent created
// while that transition waited for the job's row lock is committed by then, so no edge is missed (a single
// statement's snapshot would predate it). A job that never had dependents (`dependents = 0`, read from its locked
// row) needs no second statement: the finishing transitions take their one-statement path for those.
import type pg from "pg";
import { DEPENDENCY_FAILED_CODE } from "@conveyor/contracts";
import { DISPATCH_CHANNEL, EVENT_BASE, EVENTS_CHANNEL, TENANT_JOB } from "../core/job-sql";
import { announce, countUsage, eventOf } from "./sql";

export type Settled = { cancelled: string[]; released: string[] };

/**
 * Settles the jobs waiting for `finished` (ids of jobs that just became final; others are ignored): releases those
 * whose last dependency this was, cancels (recursively) those a failure dooms. With `onlyFor`, only the edges from
 * `finished` into those jobs are settled (a job created depending on one that had already failed). Run it in the
 * transaction of the change that made them final.
 */
export async function settleDependents(client: pg.PoolClient, finished: readonly string[], onlyFor: readonly string[] | null = null): Promise<Settled> {
  if (finished.length === 0) return { cancelled: [], released: [] };
  const waiting = (alias: string) => `${alias}.status = 'pending' AND ${alias}.dependencies_pending > 0 AND NOT ${alias}.run_on_dependency_failure`;
  const { rows } = await client.query<{ cancelled: string[] | null; released: string[] | null }>(
    `WITH RECURSIVE ${EVENT_BASE}, roots AS (
       SELECT j.id, j.status::text AS status FROM jobs j WHERE j.id = ANY($1::uuid[]) AND j.status IN ('done', 'failed', 'cancelled')
       UNION ALL
       -- Waitpoints that ended (docs/reference/lifecycle.md#waitpoints-and-durable-steps): completed is a dependency done; expired or cancelled, one failed.
       SELECT w.id, CASE w.status WHEN 'completed' THEN 'done' WHEN 'expired' THEN 'expired' ELSE 'waitpoint_cancelled' END
         FROM waitpoints w WHERE w.id = ANY($1::uuid[]) AND w.status <> 'waiting'
     ), first_edges AS (
       SELECT d.job_id, d.depends_on_id, r.status FROM job_dependencies d JOIN roots r ON r.id = d.depends_on_id
        WHERE $2::uuid[] IS NULL OR d.job_id = ANY($2::uuid[])
     ), doomed(id, cause, cause_status) AS (
       -- Waiting jobs a failure dooms: dependents of a failed or cancelled root, then theirs, and so on.
       SELECT e.job_id, e.depends_on_id, e.status FROM first_edges e JOIN jobs j ON j.id = e.job_id
        WHERE e.status <> 'done' AND ${waiting("j")}
          -- A job suspended on the waitpoint (ctx.waitFor) is released to hear of its end, never doomed by it.
          AND NOT EXISTS (SELECT 1 FROM job_steps s WHERE s.job_id = e.job_id AND s.waitpoint_id = e.depends_on_id)
       UNION
       SELECT d.job_id, d.depends_on_id, 'cancelled' FROM doomed x JOIN job_dependencies d ON d.depends_on_id = x.id JOIN jobs j ON j.id = d.job_id
        WHERE ${waiting("j")}
     ), touched AS (
       SELECT id FROM doomed
       UNION SELECT job_id FROM first_edges
       UNION SELECT d.job_id FROM job_dependencies d WHERE d.depends_on_id IN (SELECT id FROM doomed)
     ), locked AS (
       -- In id order, as every multi-row writer of jobs locks: concurrent settles never deadlock.
       SELECT j.id, j.status FROM jobs j WHERE j.id IN (SELECT id FROM touched) ORDER BY j.id FOR NO KEY UPDATE
     ), cancelled AS (
       UPDATE jobs j SET status = 'cancelled', finished_at = now(), updated_at = now(), fence = NULL,
              error = '${DEPENDENCY_FAILED_CODE}: ' || CASE WHEN c.cause_status IN ('expired', 'waitpoint_cancelled') THEN 'waitpoint ' ELSE 'job ' END ||
                      c.cause || ', which this job depends on, ' ||
                      CASE c.cause_status WHEN 'failed' THEN 'failed' WHEN 'expired' THEN 'expired' ELSE 'was cancelled' END || '.'
         FROM (SELECT DISTINCT ON (id) id, cause, cause_status FROM doomed ORDER BY id, cause) c, locked l
        WHERE j.id = c.id AND l.id = c.id AND l.status = 'pending'
       RETURNING j.id, j.org_id, j.type, j.retries, j AS job
     ), counted AS (
       -- Each edge from a job that became final counts once: from the roots, and from the jobs cancelled here.
       SELECT e.job_id, count(*)::int AS n FROM (
         SELECT job_id FROM first_edges
         UNION ALL
         SELECT d.job_id FROM job_dependencies d JOIN cancelled c ON c.id = d.depends_on_id
       ) e
        WHERE e.job_id NOT IN (SELECT id FROM doomed)
        GROUP BY e.job_id
     ), decremented AS (
       UPDATE jobs j SET dependencies_pending = greatest(0, j.dependencies_pending - c.n), updated_at = now(),
              -- A job suspended on a waitpoint that ended (ctx.waitFor) is due again from now: its wait is not queue time.
              run_at = CASE WHEN EXISTS (SELECT 1 FROM job_steps s JOIN roots r ON r.id = s.waitpoint_id WHERE s.job_id = j.id AND s.status = 'waiting')
                            THEN greatest(j.run_at, now()) ELSE j.run_at END
         FROM counted c, locked l
        WHERE j.id = c.job_id AND l.id = c.job_id AND l.status = 'pending' AND j.dependencies_pending > 0
       RETURNING j.*
     ), queued AS (
       INSERT INTO job_queue (job_id, type, org_id, priority, due_at, concurrency_key, concurrency_limit, rate_limit)
       SELECT id, type, org_id, priority, COALESCE(run_at, now()), concurrency_key, concurrency_limit, rate_limit
         FROM decremented WHERE dependencies_pending = 0
       ON CONFLICT (job_id) DO NOTHING
       RETURNING job_id
     ), ${countUsage("(SELECT c.org_id, c.type, 'pending'::text AS old_status, NULL::timestamptz AS old_started_at, 'cancelled'::text AS new_status, NULL::timestamptz AS new_started_at FROM cancelled c)")}, announced AS (
       ${announce({ from: "(SELECT c.id, c.org_id, c.type, c.job FROM cancelled c)", event: eventOf("cancelled") })}
     ), logged AS (
       INSERT INTO job_logs (job_id, attempt, level, message, timestamp)
       SELECT c.id, c.retries + 1, 'warn'::log_level, 'Cancelled before it started: ' || (c.job).error, clock_timestamp()
         FROM cancelled c WHERE ${TENANT_JOB("c")}
     ), notified AS (
       SELECT pg_notify('${EVENTS_CHANNEL}', '') FROM (SELECT 1 FROM cancelled LIMIT 1) AS any_cancelled
       UNION ALL
       SELECT pg_notify('${DISPATCH_CHANNEL}', '') FROM (SELECT 1 FROM queued LIMIT 1) AS any_released
     )
     SELECT (SELECT array_agg(id::text) FROM cancelled) AS cancelled, (SELECT array_agg(job_id::text) FROM queued) AS released,
            (SELECT count(*) FROM notified) AS notified`,
    [finished, onlyFor],
  );
  return { cancelled: rows[0]?.cancelled ?? [], released: rows[0]?.released ?? [] };
}

/** A dependency named at creation that is neither a job nor a waitpoint of the dependent's organization. */
export class UnknownDependencyError extends Error {
  constructor(readonly missing: { jobId: string; dependsOn: string }[]) {
    super(`${missing.length} dependencies name no job of the organization`);
  }
}

export type DependencyEdge = { jobId: string; orgId: string; dependsOn: string };

/**
 * At creation: locks the dependencies outside `created` (jobs of the call) in id order and counts the new dependents
 * on them, so that a dependency's final transition either happened before (its status is final here) or waits for
 * this transaction and then sees the new edges. Answers each outside dependency's status; throws
 * UnknownDependencyError for one that is not a job of the dependent's organization.
 */
export async function lockDependencies(client: pg.PoolClient, edges: readonly DependencyEdge[], created: ReadonlySet<string>): Promise<Map<string, string>> {
  const outside = edges.filter((e) => !created.has(e.dependsOn));
  if (outside.length === 0) return new Map();
  const counts = new Map<string, { orgId: string; n: number }>();
  for (const e of outside) {
    const key = `${e.orgId} ${e.dependsOn}`;
    counts.set(key, { orgId: e.orgId, n: (counts.get(key)?.n ?? 0) + 1 });
  }
  const keys = [...counts.keys()];
  const { rows } = await client.query<{ id: string; org_id: string; status: string }>(
    `WITH wanted AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int[]) AS w(org_id, id, n)
     ), locked AS (
       SELECT j.id FROM jobs j JOIN wanted w ON w.id = j.id AND w.org_id = j.org_id
        WHERE ${TENANT_JOB("j")} ORDER BY j.id FOR NO KEY UPDATE
     )
     UPDATE jobs j SET dependents = j.dependents + w.n FROM wanted w, locked l
      WHERE j.id = w.id AND l.id = w.id
     RETURNING j.id, j.org_id, j.status`,
    [keys.map((k) => counts.get(k)!.orgId), keys.map((k) => k.slice(k.indexOf(" ") + 1)), keys.map((k) => counts.get(k)!.n)],
  );
  const status = new Map(rows.map((r) => [`${r.org_id} ${r.id}`, r.status]));
  // The rest may be waitpoints (docs/reference/lifecycle.md#waitpoints-and-durable-steps), locked against their end until this transaction commits (as a job is):
  // waiting counts as pending, completed as done, expired or cancelled as a failed dependency.
  const notJobs = keys.filter((k) => !status.has(k));
  if (notJobs.length) {
    const points = await client.query<{ id: string; org_id: string; status: string }>(
      `SELECT w.id, w.org_id, CASE w.status WHEN 'waiting' THEN 'pending' WHEN 'completed' THEN 'done' ELSE 'cancelled' END AS status
         FROM waitpoints w JOIN unnest($1::uuid[], $2::uuid[]) AS k(org_id, id) ON k.id = w.id AND k.org_id = w.org_id
        ORDER BY w.id FOR SHARE OF w`,
      [notJobs.map((k) => counts.get(k)!.orgId), notJobs.map((k) => k.slice(k.indexOf(" ") + 1))],
    );
    rows.push(...points.rows);
    for (const r of points.rows) status.set(`${r.org_id} ${r.id}`, r.status);
  }
  const missing = outside.filter((e) => !status.has(`${e.orgId} ${e.dependsOn}`));
  if (missing.length) throw new UnknownDependencyError(missing.map((e) => ({ jobId: e.jobId, dependsOn: e.dependsOn })));
  return new Map(rows.map((r) => [r.id, r.status]));
}

/** Writes the edges of new jobs (after the jobs). */
export async function insertDependencyEdges(client: pg.PoolClient, edges: readonly DependencyEdge[]): Promise<void> {
  if (edges.length === 0) return;
  await client.query(
    `INSERT INTO job_dependencies (job_id, depends_on_id, org_id)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) ON CONFLICT DO NOTHING`,
    [edges.map((e) => e.jobId), edges.map((e) => e.dependsOn), edges.map((e) => e.orgId)],
  );
}
