// Time partitions (docs/reference/time.md#partitions-and-retention): a table partitioned by range of a time (or of a
// UUID v7 id, whose first 48 bits are its creation time) has one partition per UTC day or month, made ahead by the
// leader (makePartitions, every hour and at leader start), and a DEFAULT partition that stores any row no partition
// exists for, so an insert never fails for want of one (docs/reference/robustness.md#r58). Retention drops a partition
// once its whole range is past the cut-off (dropPartitionsBefore), and deletes in batches what sits in DEFAULT.
import pg from "pg";
import { inTransaction } from "../core/transaction";

/** A range-partitioned table: its partition key, what that key holds, and the span of one partition. */
export type PartitionedTable = {
  table: string;
  key: string;
  /** "time": a timestamptz; "uuid7": a UUID v7, partitioned by the moment in its first 48 bits. */
  keyKind: "time" | "uuid7";
  span: "day" | "month";
  /** Spans made ahead of the current one. */
  ahead: number;
};

/** The audit log: a month per partition (its retention is 400 days). */
export const AUDIT_LOG_PARTITIONS: PartitionedTable = { table: "audit_log", key: "time", keyKind: "time", span: "month", ahead: 2 };
/** The webhook deliveries: a day per partition (kept JOB_RETENTION_DAYS); their id is a sequence, so by `at`. */
export const WEBHOOK_DELIVERY_PARTITIONS: PartitionedTable = { table: "webhook_deliveries", key: "at", keyKind: "time", span: "day", ahead: 7 };

/** How long a pass waits for a table's lock before it gives way to the readers and tries again at its next round. */
export const PARTITION_LOCK_TIMEOUT_MS = 1_000;

/** The UTC start of the span holding `moment`. */
export function spanStart(spec: PartitionedTable, moment: Date): Date {
  return spec.span === "day"
    ? new Date(Date.UTC(moment.getUTCFullYear(), moment.getUTCMonth(), moment.getUTCDate()))
    : new Date(Date.UTC(moment.getUTCFullYear(), moment.getUTCMonth(), 1));
}

/** The start of the span `n` spans after the one starting at `start`. */
export function spanAfter(spec: PartitionedTable, start: Date, n = 1): Date {
  return spec.span === "day"
    ? new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + n))
    : new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + n, 1));
}

/** The partition of the span starting at `start`: `<table>_pYYYYMMDD` (a day) or `<table>_pYYYYMM` (a month). */
export function partitionName(spec: PartitionedTable, start: Date): string {
  const digits = start
    .toISOString()
    .slice(0, spec.span === "day" ? 10 : 7)
    .replace(/-/g, "");
  return `${spec.table}_p${digits}`;
}

/** The partition that stores what no span's partition holds. */
export const defaultPartition = (spec: PartitionedTable) => `${spec.table}_default`;

/** The key's value at `moment`: the moment itself, or the smallest UUID v7 of its millisecond. */
function boundAt(spec: PartitionedTable, moment: Date): string {
  if (spec.keyKind === "time") return moment.toISOString();
  const hex = moment.getTime().toString(16).padStart(12, "0") + "70008000000000000000";
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Sets the open transaction's lock_timeout ($1: e.g. "1000ms"). */
export const LOCK_TIMEOUT = "SELECT set_config('lock_timeout', $1, true)";

/**
 * Makes the partitions of the span holding `now` and of the `ahead` spans after it that are missing, each in its own
 * short transaction (conveyor_make_partition: rows of that span already in DEFAULT move into it), and answers the
 * names made. Idempotent. A span whose table lock is not had within the lock timeout throws; the next round makes it.
 */
export async function makePartitions(pool: pg.Pool, spec: PartitionedTable, options: { now?: Date; lockTimeoutMs?: number } = {}): Promise<string[]> {
  const first = spanStart(spec, options.now ?? new Date());
  const made: string[] = [];
  for (let n = 0; n <= spec.ahead; n++) {
    const start = spanAfter(spec, first, n);
    if (await makePartition(pool, spec, start, options.lockTimeoutMs)) made.push(partitionName(spec, start));
  }
  return made;
}

/** Makes the partition of the span starting at `start` if it is missing; answers whether it made it. */
export async function makePartition(pool: pg.Pool, spec: PartitionedTable, start: Date, lockTimeoutMs = PARTITION_LOCK_TIMEOUT_MS): Promise<boolean> {
  const name = partitionName(spec, start);
  // Looked up first without a transaction: the hourly round finds every partition made and takes no lock.
  const { rows: found } = await pool.query<{ found: boolean }>("SELECT to_regclass($1) IS NOT NULL AS found", [name]);
  if (found[0]!.found) return false;
  return inTransaction(pool, async (tx) => {
    await tx.query(LOCK_TIMEOUT, [`${lockTimeoutMs}ms`]);
    const { rows } = await tx.query<{ made: boolean }>("SELECT conveyor_make_partition($1, $2, $3, $4, $5) AS made", [
      spec.table,
      name,
      spec.key,
      boundAt(spec, start),
      boundAt(spec, spanAfter(spec, start)),
    ]);
    return rows[0]!.made;
  });
}

/** The span partitions of `spec.table` (not DEFAULT), each with the end of its range, oldest first. */
export async function listPartitions(db: pg.Pool | pg.PoolClient, spec: PartitionedTable): Promise<{ name: string; end: Date }[]> {
  const { rows } = await db.query<{ name: string; end: Date }>(
    `SELECT name, CASE WHEN $2 = 'time' THEN upper::timestamptz
                       ELSE to_timestamp(('x' || left(replace(upper, '-', ''), 12))::bit(48)::bigint / 1000.0) END AS "end"
       FROM (SELECT c.relname AS name, (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1] AS upper
               FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
              WHERE i.inhparent = $1::regclass) p
      WHERE upper IS NOT NULL
      ORDER BY 2`,
    [spec.table, spec.keyKind],
  );
  return rows;
}

/** lock_timeout ran out (SQLSTATE 55P03). */
export const LOCK_NOT_AVAILABLE = "55P03";
