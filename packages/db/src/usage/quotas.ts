// Quotas (docs/reference/tenants.md#usage-quotas-and-backpressure): what an organization may create, from the operator's QUOTA_* defaults and its own row in
// org_quotas (npm run org:quota). A creation under a quota runs in a transaction of its own: the jobs are inserted
// (their usage is counted by the insert's triggers), then `conveyor_enforce_quotas` (migration
// 20261128093000_quota_counters) takes the organization's quota lock and reads what is used — its own rows and
// everything committed before it by other transactions — and raises to roll the whole creation back. The lock is held
// to the commit, so of concurrent creations each sees all those that went before it: exact whatever the number of API
// processes. The API's grouped inserts send the check in one message with their COMMIT (`quotaCheckSql`), so the lock
// is held for one round trip. Far from the limits the API pays from quota blocks instead (renewQuotaBlock, migration
// 20261128130000_quota_blocks), which every check counts as used. Without a quota nothing here runs.
import type pg from "pg";
import { isUuid } from "../core/ids";

export const QUOTA_NAMES = ["jobs_per_day", "jobs_per_month", "pending_max", "payload_bytes_max"] as const;
export type QuotaName = (typeof QUOTA_NAMES)[number];
/** A limit per quota; null: unlimited. */
export type QuotaLimits = Record<QuotaName, number | null>;
/** An organization's own settings: null uses the default, 0 is unlimited whatever the default. */
export type QuotaOverrides = Record<QuotaName, number | null>;

export const NO_QUOTAS: QuotaLimits = { jobs_per_day: null, jobs_per_month: null, pending_max: null, payload_bytes_max: null };

export const hasQuota = (limits: QuotaLimits) => QUOTA_NAMES.some((name) => limits[name] !== null);

/** The limits in force: the organization's own where set (0: unlimited), else the default. */
export function limitsInForce(defaults: QuotaLimits, overrides: QuotaOverrides | null): QuotaLimits {
  const limits = { ...NO_QUOTAS };
  for (const name of QUOTA_NAMES) {
    const own = overrides?.[name] ?? null;
    limits[name] = own === null ? defaults[name] : own === 0 ? null : own;
  }
  return limits;
}

const COLUMNS = `org_id, jobs_per_day::float8 AS jobs_per_day, jobs_per_month::float8 AS jobs_per_month,
  pending_max::float8 AS pending_max, payload_bytes_max::float8 AS payload_bytes_max`;

/** The organizations' own quota settings (absent: none of their own). */
export async function findQuotaOverrides(db: pg.Pool | pg.PoolClient, orgIds: readonly string[]): Promise<Map<string, QuotaOverrides>> {
  if (orgIds.length === 0) return new Map();
  const { rows } = await db.query<QuotaOverrides & { org_id: string }>(`SELECT ${COLUMNS} FROM org_quotas WHERE org_id = ANY($1::uuid[])`, [orgIds]);
  return new Map(rows.map(({ org_id, ...own }) => [org_id, own]));
}

/** Sets (a number, 0 = unlimited) or clears (null: back to the default) some of an organization's quotas. */
export async function putQuotaOverrides(db: pg.Pool | pg.PoolClient, orgId: string, changes: Partial<QuotaOverrides>): Promise<QuotaOverrides> {
  const names = QUOTA_NAMES.filter((name) => name in changes);
  const { rows } = await db.query<QuotaOverrides & { org_id: string }>(
    `INSERT INTO org_quotas AS q (org_id, ${names.join(", ")}, updated_at) VALUES ($1, ${names.map((_, i) => `$${i + 2}`).join(", ")}${names.length ? ", " : ""}now())
     ON CONFLICT (org_id) DO UPDATE SET ${[...names.map((name) => `${name} = EXCLUDED.${name}`), "updated_at = now()"].join(", ")}
     RETURNING ${COLUMNS}`,
    [orgId, ...names.map((name) => changes[name])],
  );
  const { org_id: _, ...own } = rows[0]!;
  return own;
}

/** What an organization has used of each quota at `at` (the jobs' creation time: its UTC day and month). */
export type QuotaUse = Record<QuotaName, number>;

/** What is used of the quotas in force (those not in force read 0 and cost nothing), from the counters. */
export async function readQuotaUse(db: pg.Pool | pg.PoolClient, orgId: string, limits: QuotaLimits, at: Date): Promise<QuotaUse> {
  const { rows } = await db.query<QuotaUse>({
    name: "conveyor-quota-use",
    text: `SELECT
       CASE WHEN $3 THEN (SELECT coalesce(sum(jobs_created), 0) FROM usage_counts WHERE org_id = $1 AND day = ($2::timestamptz AT TIME ZONE 'UTC')::date) ELSE 0 END::float8 AS jobs_per_day,
       CASE WHEN $4 THEN (SELECT coalesce(sum(jobs_created), 0) FROM usage_counts WHERE org_id = $1
                           AND day >= date_trunc('month', $2::timestamptz AT TIME ZONE 'UTC')::date AND day <= ($2::timestamptz AT TIME ZONE 'UTC')::date) ELSE 0 END::float8 AS jobs_per_month,
       CASE WHEN $5 THEN (SELECT coalesce(sum(pending_jobs), 0) FROM stored_payload_bytes WHERE org_id = $1) ELSE 0 END::float8 AS pending_max,
       CASE WHEN $6 THEN (SELECT coalesce(sum(bytes), 0) FROM stored_payload_bytes WHERE org_id = $1) ELSE 0 END::float8 AS payload_bytes_max`,
    values: [orgId, at, limits.jobs_per_day !== null, limits.jobs_per_month !== null, limits.pending_max !== null, limits.payload_bytes_max !== null],
  });
  return rows[0]!;
}

/** The first quota `use` goes past (`strict`: reaching the limit counts too, for a check before adding), or null. */
export function quotaPassed(limits: QuotaLimits, use: QuotaUse, strict = false): QuotaName | null {
  for (const name of QUOTA_NAMES) {
    const limit = limits[name];
    if (limit !== null && (strict ? use[name] >= limit : use[name] > limit)) return name;
  }
  return null;
}

/** A creation that would take an organization past a quota; nothing of it was stored. */
export class QuotaExceededError extends Error {
  override name = "QuotaExceededError";
  constructor(
    readonly quota: QuotaName,
    readonly limit: number,
    /** What was used before the refused creation (at most the limit). */
    readonly used: number,
    readonly at: Date,
  ) {
    super(`quota ${quota} exceeded`);
  }
}

/** The SQLSTATE conveyor_enforce_quotas raises with the quota's name as message and what is used as detail. */
const QUOTA_PASSED = "CQ036";

const limitSql = (limit: number | null) => {
  if (limit === null) return "NULL";
  if (!Number.isSafeInteger(limit)) throw new Error(`a quota limit must be an integer: ${limit}`);
  return String(limit);
};

/**
 * The quota check as SQL text with its values written in (all generated here: a UUID, an ISO time, integers), to be
 * sent in one message with the transaction's COMMIT: it answers the milliseconds it waited for the quota lock.
 */
export function quotaCheckSql(orgId: string, limits: QuotaLimits, at: Date): string {
  if (!isUuid(orgId)) throw new Error("an organization id must be a UUID");
  const values = [`'${orgId}'::uuid`, `'${at.toISOString()}'::timestamptz`, ...QUOTA_NAMES.map((name) => limitSql(limits[name]))];
  return `SELECT conveyor_enforce_quotas(${values.join(", ")}) AS waited_ms`;
}

/** The QuotaExceededError a failed check stands for, or null for any other error. */
export function quotaRefusal(error: unknown, limits: QuotaLimits, at: Date): QuotaExceededError | null {
  const { code, message, detail } = (error ?? {}) as { code?: unknown; message?: unknown; detail?: unknown };
  if (code !== QUOTA_PASSED || !QUOTA_NAMES.includes(message as QuotaName)) return null;
  const quota = message as QuotaName;
  const limit = limits[quota] ?? 0;
  return new QuotaExceededError(quota, limit, Math.min(limit, Number(detail)), at);
}

/**
 * Called in a creation's transaction after its inserts: takes the quota lock, then throws QuotaExceededError when the
 * organization is past a limit with them. One statement; the lock is held to the commit.
 */
export async function enforceQuotas(tx: pg.PoolClient, orgId: string, limits: QuotaLimits, at: Date): Promise<void> {
  try {
    await tx.query({
      name: "conveyor-enforce-quotas",
      text: "SELECT conveyor_enforce_quotas($1, $2, $3, $4, $5, $6)",
      values: [orgId, at, ...QUOTA_NAMES.map((name) => limits[name])],
    });
  } catch (error) {
    throw quotaRefusal(error, limits, at) ?? error;
  }
}

/** What a quota block (migration 20261128130000_quota_blocks) allows its holder to add without the quota lock. */
export type QuotaBlockAllowance = { jobs: number; pendingJobs: number; bytes: number };

/** Block sizes: a 32nd of the room left, at most the cap; none (the exact check) when the room gives less than the minimum. */
export type QuotaBlockSizes = { minJobs: number; capJobs: number; minBytes: number; capBytes: number };

export const QUOTA_BLOCK_SIZES: QuotaBlockSizes = { minJobs: 64, capJobs: 4096, minBytes: 64 * 1024, capBytes: 64 * 1024 * 1024 };

/**
 * Renews `holder`'s block of `orgId` for the UTC day of `at` under the organization's quota lock, keeping `keep` (what
 * it left unspent of its block of that same day; every insert that spent from it must have settled) and adding a new
 * grant; answers the block now held, or null when the room left is too small and the block was given back (create
 * through the exact check then).
 */
export async function renewQuotaBlock(
  db: pg.Pool | pg.PoolClient,
  orgId: string,
  holder: string,
  limits: QuotaLimits,
  at: Date,
  keep: QuotaBlockAllowance,
  sizes: QuotaBlockSizes = QUOTA_BLOCK_SIZES,
): Promise<QuotaBlockAllowance | null> {
  const { rows } = await db.query<QuotaBlockAllowance>({
    name: "conveyor-quota-block",
    text: `SELECT jobs::float8 AS "jobs", pending_jobs::float8 AS "pendingJobs", bytes::float8 AS "bytes"
             FROM conveyor_quota_block($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    values: [
      orgId,
      holder,
      at,
      ...QUOTA_NAMES.map((name) => limits[name]),
      keep.jobs,
      keep.pendingJobs,
      keep.bytes,
      sizes.minJobs,
      sizes.capJobs,
      sizes.minBytes,
      sizes.capBytes,
    ],
  });
  const block = rows[0]!;
  return block.jobs + block.pendingJobs + block.bytes > 0 ? block : null;
}

/** Gives back every block `holder` holds (a process stopping cleanly, its inserts settled). */
export async function releaseQuotaBlocks(db: pg.Pool | pg.PoolClient, holder: string): Promise<void> {
  await db.query("DELETE FROM quota_blocks WHERE holder = $1", [holder]);
}

/** A JSON number: sign, whole digits, fraction digits, exponent. */
const NUMBER = /(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?/y;

/**
 * The bytes Postgres counts for a payload (`octet_length(payload::text)` of the jsonb the JSON text becomes: ", " and
 * ": " between items, strings with JSON's escapes and raw UTF-8, numbers as `numeric` prints them), computed from the
 * JSON text without a round trip. A key repeated in one object (jsonb keeps the last) is counted each time: never less
 * than Postgres counts. For valid JSON only (a job's payloadJson is): text that is not may be counted or throw.
 */
export function jsonbTextBytes(json: string): number {
  // The usual text, JSON.stringify's (no space, no escape, no exponent, no negative zero): Postgres adds a space after
  // each ',' and ':' between items and changes nothing else. One pass over the characters; anything else is parsed.
  let separators = 0;
  for (let i = 0, inString = false; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 34) inString = !inString;
    else if (c === 92) return parsedJsonbTextBytes(json);
    else if (!inString) {
      if (c === 44 || c === 58) separators++;
      else if (c === 101 || c === 69 || c <= 32 || (c === 45 && json.charCodeAt(i + 1) === 48)) return parsedJsonbTextBytes(json);
    }
  }
  return Buffer.byteLength(json) + separators;
}

function parsedJsonbTextBytes(json: string): number {
  let i = 0;
  const space = () => {
    for (let c = json.charCodeAt(i); c === 32 || c === 10 || c === 13 || c === 9; c = json.charCodeAt(++i));
  };
  const fail = (): never => {
    throw new SyntaxError(`not JSON at ${i}`);
  };
  const string = (): number => {
    const start = i;
    let end = json.indexOf('"', i + 1);
    const backslash = json.indexOf("\\", i + 1);
    if (backslash !== -1 && (end === -1 || backslash < end)) {
      for (end = backslash; end < json.length && json.charCodeAt(end) !== 34; end += json.charCodeAt(end) === 92 ? 2 : 1);
      if (end >= json.length) fail();
      i = end + 1;
      return Buffer.byteLength(JSON.stringify(JSON.parse(json.slice(start, i)) as string));
    }
    if (end === -1) fail();
    i = end + 1;
    // Without an escape the text is what Postgres writes back (JSON allows no raw control character in a string).
    return Buffer.byteLength(json.slice(start, i));
  };
  const number = (): number => {
    NUMBER.lastIndex = i;
    const match = NUMBER.exec(json);
    if (!match) return fail();
    i += match[0].length;
    const [, sign, whole, fraction = "", exponent = "0"] = match;
    const digits = whole! + fraction;
    const point = whole!.length + Number(exponent);
    const scale = Math.max(0, fraction.length - Number(exponent));
    const integer = (point <= 0 ? "" : point >= digits.length ? digits + "0".repeat(point - digits.length) : digits.slice(0, point)).replace(/^0+/, "");
    const zero = !/[1-9]/.test(digits);
    return (zero ? 0 : sign!.length) + Math.max(1, integer.length) + (scale > 0 ? 1 + scale : 0);
  };
  const value = (): number => {
    space();
    const c = json[i];
    if (c === '"') return string();
    if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      i++;
      space();
      if (json[i] === close) {
        i++;
        return 2;
      }
      let bytes = 2;
      for (let first = true; ; first = false) {
        if (!first) bytes += 2;
        if (c === "{") {
          space();
          if (json[i] !== '"') fail();
          bytes += string() + 2;
          space();
          if (json[i++] !== ":") fail();
        }
        bytes += value();
        space();
        if (json[i] === close) {
          i++;
          return bytes;
        }
        if (json[i++] !== ",") fail();
      }
    }
    for (const word of ["true", "false", "null"]) {
      if (json.startsWith(word, i)) {
        i += word.length;
        return word.length;
      }
    }
    return number();
  };
  const bytes = value();
  space();
  if (i !== json.length) fail();
  return bytes;
}
