// Usage (SPEC §22): what each organization used per UTC day and job type. Triggers write it in the statements that do
// the work (migration 20261128061720_usage_quotas), into striped rows; every read here sums the stripes, so it is exact.
import type pg from "pg";

export type UsageTotals = {
  jobs_created: number;
  attempts_started: number;
  /** Seconds, to the millisecond. */
  attempt_seconds: number;
  webhook_deliveries: number;
  payload_bytes: number;
};
export type UsageRow = ({ day: string } | { type: string }) & UsageTotals;
export type UsageQuery = { orgId: string; from: string; to: string; groupBy: "day" | "type" };

const SUMS = `coalesce(sum(jobs_created), 0)::float8 AS jobs_created, coalesce(sum(attempts_started), 0)::float8 AS attempts_started,
  (coalesce(sum(attempt_ms), 0) / 1000.0)::float8 AS attempt_seconds, coalesce(sum(webhook_deliveries), 0)::float8 AS webhook_deliveries,
  coalesce(sum(payload_bytes), 0)::float8 AS payload_bytes`;

/**
 * The organization's usage from `from` to `to` (dates, both included): by day (every day of the range, zeros where
 * nothing was used, oldest first) or by type (the types used in the range, by name).
 */
export async function readUsage(db: pg.Pool | pg.PoolClient, query: UsageQuery): Promise<UsageRow[]> {
  if (query.groupBy === "day") {
    const { rows } = await db.query<UsageRow>({
      name: "conveyor-usage-by-day",
      text: `SELECT to_char(d.day, 'YYYY-MM-DD') AS day, ${SUMS.replaceAll("sum(", "sum(u.")}
               FROM generate_series($2::date, $3::date, interval '1 day') AS d(day)
               LEFT JOIN usage_counts u ON u.org_id = $1 AND u.day = d.day::date
              GROUP BY d.day ORDER BY d.day`,
      values: [query.orgId, query.from, query.to],
    });
    return rows;
  }
  const { rows } = await db.query<UsageRow>({
    name: "conveyor-usage-by-type",
    text: `SELECT type, ${SUMS} FROM usage_counts WHERE org_id = $1 AND day BETWEEN $2::date AND $3::date GROUP BY type ORDER BY type`,
    values: [query.orgId, query.from, query.to],
  });
  return rows;
}

export type TypeUsageTotals = UsageTotals & { type: string };

/** Every organization's usage summed by job type, ever: the deployment's counters (no organization in them). */
export async function readUsageTotalsByType(db: pg.Pool): Promise<TypeUsageTotals[]> {
  const { rows } = await db.query<TypeUsageTotals>(`SELECT type, ${SUMS} FROM usage_counts GROUP BY type ORDER BY type`);
  return rows;
}
