// Failures grouped by error (issue 23): the org's failed jobs by failure group — the job's type and its last error
// normalised (conveyor_normalise_error, in the migration 20261126050000_failure_groups) — with counts, first and last
// seen, and a sample. Read from jobs_failure_group_idx alone, grouped in its order.
import type pg from "pg";
import type { JobFilter } from "@conveyor/contracts";
import { jobsMatching } from "./job-filter";
import { iso } from "./job-sql";

export type FailureGroup = {
  failure_group: string;
  type: string;
  /** The normalised message (numbers, ids, quoted values and e-mail addresses as placeholders). */
  message: string;
  count: number;
  /** Jobs of the group not finished yet: waiting to retry after such an error, or retrying now (what a bulk cancel takes). */
  retrying: number;
  first_seen_at: string;
  last_seen_at: string;
  /** The group's most recent failure, with its error as it is. */
  sample_job_id: string;
  sample_error: string;
};

/** The longest sample error a group carries (errors are at most 8,000 characters). */
const SAMPLE_ERROR_MAX = 1000;

/**
 * The org's failed jobs matching `filter` (its status ignored: always failed), grouped by failure group, most
 * recently seen first, at most `limit` groups; `more` when others remain.
 */
export async function findFailureGroups(
  db: pg.Pool | pg.PoolClient,
  options: { orgId: string; filter: JobFilter; limit: number },
): Promise<{ groups: FailureGroup[]; more: boolean }> {
  const params: unknown[] = [];
  const where = jobsMatching("j", options.orgId, { ...options.filter, statuses: ["failed"] }, params);
  params.push(options.limit + 1);
  const limit = `$${params.length}`;
  const { rows } = await db.query<FailureGroup>(
    `WITH grouped AS (
       SELECT j.failure_group, count(*)::int AS count, min(j.finished_at) AS first_seen, max(j.finished_at) AS last_seen
         FROM jobs j
        WHERE ${where} AND j.failure_group IS NOT NULL
        GROUP BY j.failure_group
        ORDER BY last_seen DESC NULLS LAST, j.failure_group
        LIMIT ${limit}
     )
     SELECT g.failure_group, s.type, conveyor_normalise_error(s.error) AS message, g.count, 0 AS retrying,
            ${iso("g.first_seen")} AS first_seen_at, ${iso("g.last_seen")} AS last_seen_at,
            s.id AS sample_job_id, left(s.error, ${SAMPLE_ERROR_MAX}) AS sample_error
       FROM grouped g
       CROSS JOIN LATERAL (
         SELECT j.id, j.type, j.error FROM jobs j
          WHERE ${where} AND j.failure_group IS NOT NULL AND j.failure_group = g.failure_group AND j.finished_at IS NOT DISTINCT FROM g.last_seen
          LIMIT 1
       ) s
      ORDER BY g.last_seen DESC NULLS LAST, g.failure_group`,
    params,
  );
  const groups = rows.slice(0, options.limit);
  if (groups.length === 0) return { groups, more: false };
  const liveParams: unknown[] = [];
  const live = jobsMatching("j", options.orgId, { ...options.filter, statuses: ["pending", "processing"] }, liveParams);
  liveParams.push(groups.map((g) => g.failure_group));
  const { rows: retrying } = await db.query<{ failure_group: string; n: number }>(
    `SELECT j.failure_group, count(*)::int AS n FROM jobs j
      WHERE ${live} AND j.failure_group IS NOT NULL AND j.failure_group = ANY($${liveParams.length}::text[])
      GROUP BY j.failure_group`,
    liveParams,
  );
  const byGroup = new Map(retrying.map((r) => [r.failure_group, r.n]));
  return { groups: groups.map((g) => ({ ...g, retrying: byGroup.get(g.failure_group) ?? 0 })), more: rows.length > options.limit };
}
