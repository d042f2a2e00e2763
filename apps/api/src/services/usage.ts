// GET /usage (docs/reference/tenants.md#usage-quotas-and-backpressure): the caller's organization's usage by UTC day or by job type, as JSON or CSV.
import { QUOTA_NAMES, readQuotaUse, readUsage, type QuotaName, type UsageRow } from "@conveyor/db";
import { validationFailed } from "./infrastructure/errors";
import type { Caller, ServiceDeps } from "./infrastructure/deps";

/** The longest range one request may ask for, in days (both ends included). */
export const USAGE_MAX_DAYS = 400;
/** Without `from`, the range is the last 30 days to `to`. */
const DEFAULT_DAYS = 30;
const DAY_MS = 86_400_000;

export type UsageQuery = { from?: string; to?: string; group_by: "day" | "type" };

/** A YYYY-MM-DD date that exists, as its UTC midnight, or null. */
function parseDay(value: string): Date | null {
  const at = new Date(`${value}T00:00:00.000Z`);
  return Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== value ? null : at;
}

const isoDay = (at: Date) => at.toISOString().slice(0, 10);

/** The range asked for, checked: real dates, `from` ≤ `to`, at most USAGE_MAX_DAYS days. */
export function usageRange(query: UsageQuery, today: Date): { from: string; to: string } {
  const to = query.to === undefined ? new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate())) : parseDay(query.to);
  if (!to) throw validationFailed([{ path: "query.to", message: "is not a date (YYYY-MM-DD)" }]);
  const from = query.from === undefined ? new Date(to.getTime() - (DEFAULT_DAYS - 1) * DAY_MS) : parseDay(query.from);
  if (!from) throw validationFailed([{ path: "query.from", message: "is not a date (YYYY-MM-DD)" }]);
  if (from > to) throw validationFailed([{ path: "query.from", message: "must not be after to" }]);
  const days = (to.getTime() - from.getTime()) / DAY_MS + 1;
  if (days > USAGE_MAX_DAYS)
    throw validationFailed([{ path: "query.from", message: `must be at most ${USAGE_MAX_DAYS} days before to (both included); this range has ${days}` }]);
  return { from: isoDay(from), to: isoDay(to) };
}

export async function getUsage(options: { caller: Caller; query: UsageQuery }, deps: Pick<ServiceDeps, "db" | "clock">): Promise<UsageRow[]> {
  const range = usageRange(options.query, deps.clock.now());
  return readUsage(deps.db.pool, { orgId: options.caller.orgId, ...range, groupBy: options.query.group_by });
}

export const USAGE_FIELDS = ["jobs_created", "attempts_started", "attempt_seconds", "webhook_deliveries", "payload_bytes"] as const;

/** The rows as CSV (RFC 4180): a header line, then one line per row. Type names are quoted when they need it. */
export function usageCsv(rows: UsageRow[], groupBy: "day" | "type"): string {
  const quote = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
  const lines = [[groupBy, ...USAGE_FIELDS].join(",")];
  for (const row of rows) {
    const key = "day" in row ? row.day : row.type;
    lines.push([quote(key), ...USAGE_FIELDS.map((field) => String(row[field]))].join(","));
  }
  return `${lines.join("\r\n")}\r\n`;
}

export type QuotaView = { name: QuotaName; limit: number | null; used: number; resets_at: string | null };

/**
 * The quotas in force for the caller's organization and what is used of each (from the counters the usage triggers
 * keep), with when a period quota starts over; `limit` null is unlimited (and `used` then 0: not counted).
 */
export async function getQuotas(options: { caller: Caller }, deps: Pick<ServiceDeps, "db" | "clock" | "admission">): Promise<{ quotas: QuotaView[] }> {
  const at = deps.clock.now();
  const limits = await deps.admission.limitsFor(options.caller.orgId);
  const use = await readQuotaUse(deps.db.pool, options.caller.orgId, limits, at);
  const nextDay = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1)).toISOString();
  const nextMonth = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)).toISOString();
  return {
    quotas: QUOTA_NAMES.map((name) => ({
      name,
      limit: limits[name],
      used: use[name],
      resets_at: name === "jobs_per_day" ? nextDay : name === "jobs_per_month" ? nextMonth : null,
    })),
  };
}
