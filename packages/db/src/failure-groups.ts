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
 * recently seen first, at most `limit` groups; `more` when others remain. Without a time or schedule filter the
 * counts are failure_counts' (one row per group, whatever the number of failures); with one, the failed jobs in
 * range are read from jobs_failure_group_idx.
 */
export async function findFailureGroups(
  db: pg.Pool | pg.PoolClient,
  options: { orgId: string; filter: JobFilter; limit: number },
): Promise<{ groups: FailureGroup[]; more: boolean }> {
  const { filter } = options;
  const found = filter.createdAfter || filter.createdBefore || filter.scheduleId ? await fromJobs(db, options) : await fromCounts(db, options);
  const groups = found.slice(0, options.limit);
  return { groups: await withRetrying(db, options, groups), more: found.length > options.limit };
}

/** The groups as failure_counts holds them, and the sample job's error (limit + 1 of them). */
async function fromCounts(db: pg.Pool | pg.PoolClient, options: { orgId: string; filter: JobFilter; limit: number }): Promise<FailureGroup[]> {
  const { rows } = await db.query<FailureGroup>(
    `SELECT c.failure_group, c.type, coalesce(conveyor_normalise_error(s.error), '') AS message, c.failed AS count, 0 AS retrying,
            ${iso("c.first_seen")} AS first_seen_at, ${iso("c.last_seen")} AS last_seen_at,
            c.sample_job_id, coalesce(left(s.error, ${SAMPLE_ERROR_MAX}), '') AS sample_error
       FROM failure_counts c LEFT JOIN jobs s ON s.id = c.sample_job_id
      WHERE c.org_id = $1 AND c.failed > 0 AND ($2::text IS NULL OR c.type = $2)
      ORDER BY c.last_seen DESC, c.failure_group
      LIMIT $3`,
    [options.orgId, options.filter.type ?? null, options.limit + 1],
  );
  return rows;
}

/** The groups of the failed jobs matching the filter, read from the jobs themselves (limit + 1 of them). */
async function fromJobs(db: pg.Pool | pg.PoolClient, options: { orgId: string; filter: JobFilter; limit: number }): Promise<FailureGroup[]> {
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
  return rows;
}

/** Each group with how many of its jobs (matching the filter) are not finished yet. */
async function withRetrying(db: pg.Pool | pg.PoolClient, options: { orgId: string; filter: JobFilter }, groups: FailureGroup[]): Promise<FailureGroup[]> {
  if (groups.length === 0) return groups;
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
  return groups.map((g) => ({ ...g, retrying: byGroup.get(g.failure_group) ?? 0 }));
}
