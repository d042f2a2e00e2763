// The deployment's backlog per job type, for autoscaling and alerts (SPEC §17): what GET /queues shows one
// organization (flow-control.ts `listQueues`), summed over every organization, read from the dispatcher's queue in
// Postgres. The leader serves it as Prometheus gauges; nothing here is per organization.
import type pg from "pg";

export type TypeBacklog = {
  type: string;
  /** Due now and held by nothing but the lack of a worker: what more workers would start. */
  due: number;
  /** Due later: run_at, a retry's wait, a debounce. */
  delayed: number;
  /** Handed to the workers: running, or about to start on a worker slot. */
  running: number;
  /** Due but held by a queue pause, a rate limit (the type's, the organization's), a concurrency key or an org cap. */
  waiting_on_limits: number;
  /** Seconds since the oldest of the `due` jobs fell due (0 when none is due): the scheduling delay. */
  oldest_due_seconds: number;
};

/**
 * Counts every live job by type in one statement. Due jobs are judged in groups (type, organization, concurrency key,
 * rate limit) with the rules of `conveyor_waiting_for`, so a backlog of a million costs one scan of the waiting index
 * and a few lookups per group, not a function call per job. Types in `knownTypes`, in job_types and in type_state are
 * reported even with nothing queued (a gauge at 0, which an autoscaler reads as "scale to the minimum").
 * `timeoutMs` bounds the statement (a scrape must not hang on a busy database).
 */
export async function readBacklog(pool: pg.Pool, knownTypes: readonly string[], timeoutMs = 2_000): Promise<TypeBacklog[]> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("BEGIN READ ONLY");
    await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
    const { rows } = await client.query<TypeBacklog>(
      `WITH spent AS (SELECT org_id, name FROM rate_limits WHERE conveyor_window_used(starts, period_ms) >= "limit"),
       keys AS (SELECT org_id, concurrency_key, count(*)::int AS n FROM job_queue
                 WHERE dispatched_at IS NOT NULL AND concurrency_key IS NOT NULL GROUP BY org_id, concurrency_key),
       in_flight AS (SELECT type, org_id, count(*)::int AS n FROM job_queue WHERE dispatched_at IS NOT NULL GROUP BY type, org_id),
       delayed AS (SELECT type, count(*)::int AS n FROM job_queue WHERE dispatched_at IS NULL AND due_at > now() GROUP BY type),
       groups AS (SELECT type, org_id, concurrency_key, max(concurrency_limit) AS key_limit, rate_limit, count(*)::int AS n, min(due_at) AS oldest
                    FROM job_queue WHERE dispatched_at IS NULL AND due_at <= now()
                   GROUP BY type, org_id, concurrency_key, rate_limit),
       judged AS (
         SELECT g.type, g.n, g.oldest,
                coalesce(s.paused, false)
                OR coalesce(ts.paused_until > now(), false)
                OR coalesce(ts.rate_limit IS NOT NULL AND conveyor_window_used(ts.starts, ts.rate_period_ms) >= ts.rate_limit, false)
                OR EXISTS (SELECT 1 FROM spent p WHERE p.org_id = g.org_id AND p.name IN (g.rate_limit, s.rate_limit))
                OR (g.concurrency_key IS NOT NULL AND coalesce(k.n, 0) >= coalesce(g.key_limit, 1))
                OR coalesce(coalesce(f.n, 0) >= coalesce(s.concurrency_limit, nullif(ts.org_concurrency_limit, 0)), false) AS limited
           FROM groups g
           LEFT JOIN queue_settings s ON s.org_id = g.org_id AND s.type = g.type
           LEFT JOIN type_state ts ON ts.type = g.type
           LEFT JOIN keys k ON k.org_id = g.org_id AND k.concurrency_key = g.concurrency_key
           LEFT JOIN in_flight f ON f.type = g.type AND f.org_id = g.org_id),
       by_type AS (
         SELECT type, sum(n) FILTER (WHERE NOT limited)::int AS due, sum(n) FILTER (WHERE limited)::int AS held,
                min(oldest) FILTER (WHERE NOT limited) AS oldest
           FROM judged GROUP BY type),
       running AS (SELECT type, sum(n)::int AS n FROM in_flight GROUP BY type),
       types AS (
         SELECT unnest($1::text[]) AS type UNION SELECT name FROM job_types UNION SELECT type FROM type_state
         UNION SELECT type FROM by_type UNION SELECT type FROM running UNION SELECT type FROM delayed)
       SELECT t.type, coalesce(b.due, 0) AS due, coalesce(d.n, 0) AS delayed, coalesce(r.n, 0) AS running,
              coalesce(b.held, 0) AS waiting_on_limits,
              coalesce(greatest(extract(epoch FROM now() - b.oldest), 0), 0)::float8 AS oldest_due_seconds
         FROM types t
         LEFT JOIN by_type b ON b.type = t.type
         LEFT JOIN delayed d ON d.type = t.type
         LEFT JOIN running r ON r.type = t.type
        ORDER BY t.type`,
      [knownTypes],
    );
    await client.query("COMMIT");
    return rows;
  } catch (error) {
    await client.query("ROLLBACK").catch((e: Error) => (broken = e));
    throw error;
  } finally {
    // A connection that could not even roll back is dropped from the pool rather than handed to the next user.
    client.release(broken);
  }
}
