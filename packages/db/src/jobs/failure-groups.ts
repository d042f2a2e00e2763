// Failures grouped by error (issue 23): the org's failed jobs by failure group — the job's type and its last error
// normalised (conveyor_normalise_error, in the migration 20261126050000_failure_groups) — with counts, first and last
// seen, and a sample. Counted as the job machine fails jobs (failure_counts, and failure_counts_daily by the UTC day
// the jobs were created); a schedule filter, and the partial first and last day of a time filter, are read from the
// jobs themselves.
import type pg from "pg";
import type { JobFilter } from "@conveyor/contracts";
import { jobsMatching } from "./job-filter";
import { iso } from "../core/job-sql";

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
 * counts are failure_counts' (one row per group, whatever the number of failures); with a time filter, the whole UTC
 * days in range are failure_counts_daily's and only the partial days at either end are read from the failed jobs;
 * with a schedule filter, every failed job in range is read (jobs_failure_group_idx).
 */
export async function findFailureGroups(
  db: pg.Pool | pg.PoolClient,
  options: { orgId: string; filter: JobFilter; limit: number },
): Promise<{ groups: FailureGroup[]; more: boolean }> {
  const { filter } = options;
  const found = filter.scheduleId
    ? await fromJobs(db, options)
    : filter.createdAfter || filter.createdBefore
      ? await fromDays(db, options)
      : await fromCounts(db, options);
  const groups = await withRetrying(db, options, found.slice(0, options.limit));
  // Groups whose jobs are all still retrying (issue 38 #4): none has failed for good, so no count holds them, and
  // they are the ones an operator can still act on. After the failed groups, most recently seen first.
  const room = options.limit - groups.length;
  const retryingOnly = await retryingGroups(
    db,
    options,
    groups.map((g) => g.failure_group),
    Math.max(room, 0) + 1,
  );
  return { groups: [...groups, ...retryingOnly.slice(0, Math.max(room, 0))], more: found.length > options.limit || retryingOnly.length > room };
}

/**
 * The groups of the org's jobs matching the filter that wait to retry (or retry now) after an error and are in no
 * group of `known` — groups with no failed job yet: their count is 0, `retrying` how many, their sample the one that
 * failed an attempt last. At most `limit`.
 */
async function retryingGroups(
  db: pg.Pool | pg.PoolClient,
  options: { orgId: string; filter: JobFilter },
  known: string[],
  limit: number,
): Promise<FailureGroup[]> {
  if (limit <= 0) return [];
  const params: unknown[] = [];
  const where = jobsMatching("j", options.orgId, { ...options.filter, statuses: ["pending", "processing"] }, params);
  params.push(known);
  const knownParam = `$${params.length}`;
  params.push(limit);
  const { rows } = await db.query<FailureGroup>(
    `WITH grouped AS (
       SELECT j.failure_group, count(*)::int AS retrying, min(j.updated_at) AS first_seen, max(j.updated_at) AS last_seen
         FROM jobs j
        WHERE ${where} AND j.failure_group IS NOT NULL AND j.error IS NOT NULL AND NOT (j.failure_group = ANY(${knownParam}::text[]))
        GROUP BY j.failure_group
        ORDER BY last_seen DESC, j.failure_group
        LIMIT $${params.length}
     )
     SELECT g.failure_group, s.type, coalesce(conveyor_normalise_error(s.error), '') AS message, 0 AS count, g.retrying,
            ${iso("g.first_seen")} AS first_seen_at, ${iso("g.last_seen")} AS last_seen_at,
            s.id AS sample_job_id, coalesce(left(s.error, ${SAMPLE_ERROR_MAX}), '') AS sample_error
       FROM grouped g
       CROSS JOIN LATERAL (
         SELECT j.id, j.type, j.error FROM jobs j
          WHERE ${where} AND j.failure_group = g.failure_group AND j.error IS NOT NULL
          ORDER BY j.updated_at DESC, j.id DESC LIMIT 1
       ) s
      ORDER BY g.last_seen DESC, g.failure_group`,
    params,
  );
  return rows;
}

const DAY_MS = 86_400_000;
/** A day of failure_counts_daily as Postgres reads a date: YYYY-MM-DD (UTC). */
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * A time range [after, before) cut into the whole UTC days inside it, [from, to) (null: unbounded on that side;
 * from = to: none), and the parts of it outside them, each within one UTC day (at most two, less than a day each).
 */
export function byDay(after: Date | undefined, before: Date | undefined): { from: number | null; to: number | null; edges: [Date, Date][] } {
  const floor = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;
  const from = after ? Math.ceil(after.getTime() / DAY_MS) * DAY_MS : null;
  const to = before ? floor(before.getTime()) : null;
  const edges: [Date, Date][] = [];
  if (after && before && from !== null && to !== null && from >= to) {
    // No whole day inside: the range is within one day, or across one midnight.
    const midnight = floor(after.getTime()) + DAY_MS;
    if (after < before) edges.push(before.getTime() <= midnight ? [after, before] : [after, new Date(midnight)]);
    if (before.getTime() > midnight) edges.push([new Date(midnight), before]);
    return { from, to: from, edges };
  }
  if (after && from !== null && after.getTime() < from) edges.push([after, new Date(from)]);
  if (before && to !== null && to < before.getTime()) edges.push([new Date(to), before]);
  return { from, to, edges };
}

/**
 * The groups of the failed jobs created in the filter's time range (limit + 1 of them): the whole days' counts from
 * failure_counts_daily, and the failed jobs of the partial days at either end (jobs_failed_type_created_idx), merged.
 * So the cost is that of the failures created in at most two partial days, whatever the range; a group's first seen
 * can be earlier than its oldest failure left after retention (a day's row keeps it), its count never is off.
 */
async function fromDays(db: pg.Pool | pg.PoolClient, options: { orgId: string; filter: JobFilter; limit: number }): Promise<FailureGroup[]> {
  const { filter } = options;
  const range = byDay(filter.createdAfter, filter.createdBefore);
  const params: unknown[] = [
    options.orgId,
    range.from === null ? "-infinity" : dayOf(range.from),
    range.to === null ? "infinity" : dayOf(range.to),
    filter.type ?? null,
  ];
  const edges = range.edges.map(([createdAfter, createdBefore]) => {
    const where = jobsMatching("j", options.orgId, { type: filter.type, createdAfter, createdBefore, statuses: ["failed"] }, params);
    // Without a type, the types that failed that day (its rows here) lead jobs_failed_type_created_idx to the day's
    // failures of each: otherwise its scan would go through every failure of the org for the few in range.
    let types = "";
    if (!filter.type) {
      params.push(dayOf(Math.floor(createdAfter.getTime() / DAY_MS) * DAY_MS));
      types = `AND j.type = ANY(ARRAY(SELECT DISTINCT t.type FROM failure_counts_daily t WHERE t.org_id = $1 AND t.day = $${params.length}::date AND t.failed > 0))`;
    }
    return `UNION ALL
       SELECT j.failure_group, min(j.type), count(*)::int, min(j.finished_at), max(j.finished_at), (array_agg(j.id ORDER BY j.finished_at DESC, j.id DESC))[1]
         FROM jobs j WHERE ${where} AND j.failure_group IS NOT NULL ${types}
        GROUP BY j.failure_group`;
  });
  params.push(options.limit + 1);
  const { rows } = await db.query<FailureGroup>(
    `WITH parts (failure_group, type, count, first_seen, last_seen, sample_job_id) AS (
       SELECT d.failure_group, d.type, d.failed, d.first_seen, d.last_seen, d.sample_job_id
         FROM failure_counts_daily d
        WHERE d.org_id = $1 AND d.day >= $2::date AND d.day < $3::date AND d.failed > 0 AND ($4::text IS NULL OR d.type = $4)
       ${edges.join("\n       ")}
     ), grouped AS (
       SELECT p.failure_group, min(p.type) AS type, sum(p.count)::int AS count, min(p.first_seen) AS first_seen, max(p.last_seen) AS last_seen,
              (array_agg(p.sample_job_id ORDER BY p.last_seen DESC, p.sample_job_id DESC))[1] AS sample_job_id
         FROM parts p
        GROUP BY p.failure_group
        ORDER BY last_seen DESC, p.failure_group
        LIMIT $${params.length}
     )
     SELECT g.failure_group, g.type, coalesce(conveyor_normalise_error(s.error), '') AS message, g.count, 0 AS retrying,
            ${iso("g.first_seen")} AS first_seen_at, ${iso("g.last_seen")} AS last_seen_at,
            g.sample_job_id, coalesce(left(s.error, ${SAMPLE_ERROR_MAX}), '') AS sample_error
       FROM grouped g LEFT JOIN jobs s ON s.id = g.sample_job_id
      ORDER BY g.last_seen DESC, g.failure_group`,
    params,
  );
  return rows;
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
