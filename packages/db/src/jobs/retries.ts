// The Retries view (issue 38, Sidekiq's Retries tab): the org's jobs that failed an attempt and wait to try again —
// pending, with an error and a queue row due later — soonest next attempt first, each with its last error.
import type pg from "pg";
import { DUE_LATER, iso, TENANT_JOB } from "../core/job-sql";
import { LIST_ERROR_MAX } from "./job-filter";

export type RetryingJob = Record<string, unknown> & { id: string; error: string | null; next_attempt_at: string };

/** At most `limit` of them, and whether more wait. */
export async function findRetrying(
  db: pg.Pool | pg.PoolClient,
  options: { orgId: string; limit: number },
): Promise<{ items: RetryingJob[]; hasMore: boolean }> {
  const { rows } = await db.query<{ item: RetryingJob }>(
    `SELECT conveyor_job_item(j)::jsonb || jsonb_build_object('error', left(j.error, ${LIST_ERROR_MAX}), 'next_attempt_at', ${iso("q.due_at")}) AS item
       FROM job_queue q JOIN jobs j ON j.id = q.job_id
      WHERE q.org_id = $1 AND ${DUE_LATER("q", "now()")} AND j.status = 'pending' AND j.retries > 0 AND j.error IS NOT NULL AND ${TENANT_JOB("j")}
      ORDER BY q.due_at, q.job_id
      LIMIT $2`,
    [options.orgId, options.limit + 1],
  );
  return { items: rows.slice(0, options.limit).map((r) => r.item), hasMore: rows.length > options.limit };
}
