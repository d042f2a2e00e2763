// Usage (docs/reference/tenants.md#usage-quotas-and-backpressure): what each organization used per UTC day and job type. Triggers write it in the statements that do
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

// Summed as float8, which the answer is anyway: exact for integers below 2^53 (9·10^15 jobs, bytes or attempt
// milliseconds), and a third of the cost of bigint's numeric sums over a 400-day range (EXPLAIN ANALYZE, issue 36).
const SUMS = `coalesce(sum(jobs_created::float8), 0) AS jobs_created, coalesce(sum(attempts_started::float8), 0) AS attempts_started,
  coalesce(sum(attempt_ms::float8), 0) / 1000 AS attempt_seconds, coalesce(sum(webhook_deliveries::float8), 0) AS webhook_deliveries,
  coalesce(sum(payload_bytes::float8), 0) AS payload_bytes`;

/**
 * The organization's usage from `from` to `to` (dates, both included): by day (every day of the range, zeros where
 * nothing was used, oldest first) or by type (the types used in the range, by name).
 */
export async function readUsage(db: pg.Pool | pg.PoolClient, query: UsageQuery): Promise<UsageRow[]> {
  if (query.groupBy === "day") {
    // Summed by Postgres, the days without usage filled in here (a join with generate_series costs more than the sums).
    const { rows } = await db.query<UsageRow & { day: string }>({
      name: "conveyor-usage-by-day",
      text: `SELECT to_char(day, 'YYYY-MM-DD') AS day, ${SUMS} FROM usage_counts WHERE org_id = $1 AND day BETWEEN $2::date AND $3::date GROUP BY day`,
      values: [query.orgId, query.from, query.to],
    });
    const byDay = new Map(rows.map((row) => [row.day, row]));
    const days: UsageRow[] = [];
    for (let at = Date.parse(`${query.from}T00:00:00Z`), end = Date.parse(`${query.to}T00:00:00Z`); at <= end; at += 86_400_000) {
      const day = new Date(at).toISOString().slice(0, 10);
      days.push(byDay.get(day) ?? { day, jobs_created: 0, attempts_started: 0, attempt_seconds: 0, webhook_deliveries: 0, payload_bytes: 0 });
    }
    return days;
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

/**
 * Folds the stripes of days before `before` into one row each (stripe 0), in one statement: the same sums in fewer
 * rows, so a long range reads one row per day and type. Days before yesterday take no more writes (jobs are counted
 * on their creation day, attempts and deliveries on today); a late one would only leave a stripe the next fold takes.
 * Answers the rows folded away.
 */
export async function foldUsage(db: pg.Pool | pg.PoolClient, before: string, limit = 50_000): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `WITH picked AS (
       SELECT org_id, day, type, stripe FROM usage_counts WHERE day < $1::date AND stripe <> 0 ORDER BY org_id, day, type, stripe LIMIT $2 FOR UPDATE
     ), gone AS (
       DELETE FROM usage_counts u USING picked p
        WHERE u.org_id = p.org_id AND u.day = p.day AND u.type = p.type AND u.stripe = p.stripe
       RETURNING u.*
     ), folded AS (
       INSERT INTO usage_counts AS u (org_id, day, type, stripe, jobs_created, attempts_started, attempt_ms, webhook_deliveries, payload_bytes)
       SELECT org_id, day, type, 0, sum(jobs_created), sum(attempts_started), sum(attempt_ms), sum(webhook_deliveries), sum(payload_bytes)
         FROM gone GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
       ON CONFLICT (org_id, day, type, stripe) DO UPDATE
          SET jobs_created = u.jobs_created + EXCLUDED.jobs_created, attempts_started = u.attempts_started + EXCLUDED.attempts_started,
              attempt_ms = u.attempt_ms + EXCLUDED.attempt_ms, webhook_deliveries = u.webhook_deliveries + EXCLUDED.webhook_deliveries,
              payload_bytes = u.payload_bytes + EXCLUDED.payload_bytes
     )
     SELECT count(*)::int AS n FROM gone`,
    [before, limit],
  );
  return rows[0]!.n;
}
