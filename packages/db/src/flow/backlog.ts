// The deployment's backlog per job type, for autoscaling and alerts (docs/reference/high-availability.md#scale-out-and-observability): what GET /queues shows one
// organization (flow-control.ts `listQueues`), summed over every organization, read from the dispatcher's queue in
// Postgres. The leader serves it as Prometheus gauges; nothing here is per organization.
import type pg from "pg";
import { DUE_LATER, WAITING_ANY_TYPE } from "../core/job-sql";
import { inTransaction } from "../core/transaction";

export type TypeBacklog = {
  type: string;
  /**
   * Due now and held by nothing but the lack of a worker slot: waiting in Postgres, or handed over in an envelope and
   * not started yet. What more workers would start.
   */
  due: number;
  /** Due later: run_at, a retry's wait, a debounce. */
  delayed: number;
  /** Running on a worker (started, not finished). */
  running: number;
  /** Due but held by a queue pause, a rate limit (the type's, the organization's), a concurrency key or an org cap. */
  waiting_on_limits: number;
  /** Seconds since the oldest of the `due` jobs fell due (0 when none is due): the scheduling delay. */
  oldest_due_seconds: number;
};

/**
 * Counts every live job by type in one statement. Due jobs waiting in Postgres are judged in groups (type,
 * organization, concurrency key, rate limit) by `conveyor_hold`, the one definition of "held back" that `waiting_for`
 * and GET /queues also use, so a backlog of a million costs one scan of the waiting index and a few lookups per group,
 * not a function call per job. Types in `knownTypes`, in job_types and in type_state are reported even with nothing
 * queued (a gauge at 0, which an autoscaler reads as "scale to the minimum"). `timeoutMs` bounds the statement (a
 * scrape must not hang on a busy database).
 */
export async function readBacklog(pool: pg.Pool, knownTypes: readonly string[], timeoutMs = 2_000): Promise<TypeBacklog[]> {
  return inTransaction(
    pool,
    async (client) => {
      await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
      const { rows } = await client.query<TypeBacklog>(
        `WITH delayed AS (SELECT q.type, count(*)::int AS n FROM job_queue q WHERE ${DUE_LATER("q", "now()")} GROUP BY q.type),
       groups AS (SELECT type, org_id, concurrency_key, max(concurrency_limit) AS key_limit, rate_limit, count(*)::int AS n, min(due_at) AS oldest
                    FROM job_queue q WHERE ${WAITING_ANY_TYPE("q")} AND q.due_at <= now()
                   GROUP BY type, org_id, concurrency_key, rate_limit),
       judged AS (
         SELECT type, n, oldest,
                coalesce(conveyor_hold(type, org_id, concurrency_key, key_limit, rate_limit), 'no_worker') <> 'no_worker' AS limited
           FROM groups),
       by_type AS (
         SELECT type, sum(n) FILTER (WHERE NOT limited)::int AS due, sum(n) FILTER (WHERE limited)::int AS held,
                min(oldest) FILTER (WHERE NOT limited) AS oldest
           FROM judged GROUP BY type),
       handed AS (
         SELECT q.type, count(*) FILTER (WHERE j.status = 'processing')::int AS running,
                count(*) FILTER (WHERE j.status = 'pending')::int AS waiting, min(q.due_at) FILTER (WHERE j.status = 'pending') AS oldest
           FROM job_queue q JOIN jobs j ON j.id = q.job_id
          WHERE q.dispatched_at IS NOT NULL GROUP BY q.type),
       types AS (
         SELECT unnest($1::text[]) AS type UNION SELECT name FROM job_types UNION SELECT type FROM type_state
         UNION SELECT type FROM by_type UNION SELECT type FROM handed UNION SELECT type FROM delayed)
       SELECT t.type, coalesce(b.due, 0) + coalesce(h.waiting, 0) AS due, coalesce(d.n, 0) AS delayed, coalesce(h.running, 0) AS running,
              coalesce(b.held, 0) AS waiting_on_limits,
              coalesce(greatest(extract(epoch FROM now() - least(b.oldest, h.oldest)), 0), 0)::float8 AS oldest_due_seconds
         FROM types t
         LEFT JOIN by_type b ON b.type = t.type
         LEFT JOIN delayed d ON d.type = t.type
         LEFT JOIN handed h ON h.type = t.type
        ORDER BY t.type`,
        [knownTypes],
      );
      return rows;
    },
    { mode: "READ ONLY" },
  );
}
