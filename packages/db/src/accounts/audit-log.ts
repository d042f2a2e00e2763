// The audit log (docs/reference/tenants.md#audit-log): who did what, written by the transaction that made the change, so an entry exists
// exactly when the change does. Append-only: the table's trigger refuses UPDATE, TRUNCATE and every DELETE but
// retention's (deleteAuditEntriesBefore), which names its cut-off in the transaction.
import pg from "pg";
import type { AuditAction, AuditActorType } from "@conveyor/contracts";
import { newId } from "../core/ids";
import { AUDIT_LOG_PARTITIONS, defaultPartition } from "../maintenance/partitions";
import { inTransaction, type Queryable } from "../core/transaction";

/** A field's value before and after the change (null: it did not exist, or was not set). */
export type AuditChange = { before: unknown; after: unknown };

export type NewAuditEntry = {
  orgId: string;
  at: Date;
  /** The user (their e-mail is read with the write when `label` is not given), the API key (its name), or system. */
  actor: { type: AuditActorType; id: string | null; label?: string | null };
  action: AuditAction;
  target?: { type: string; id: string | null; label?: string | null } | null;
  /** Where the request came from. */
  request: AuditRequest;
  /** {field: {before, after}} — never a secret, password, token, key or payload. */
  changes?: Record<string, AuditChange> | null;
  /** Facts that are not changes (a failed login's reason, a bulk action's counts). Same rule as `changes`. */
  details?: Record<string, unknown> | null;
};

/** The request an entry came from. */
export type AuditRequest = { ip: string | null; userAgent: string | null; requestId: string | null };

/**
 * Anything that can run the insert: the transaction of the change (a connection inside `inTransaction`), or the pool
 * for an entry that records no change of its own (a failed login).
 */
export type AuditWriter = Queryable;

const INSERT = `INSERT INTO audit_log (id, org_id, time, actor_type, actor_id, actor_label, action, target_type, target_id, target_label,
                                 ip, user_agent, request_id, changes, details)
  VALUES ($1::uuid, $2::uuid, $3::timestamptz, $4::text, $5::uuid,
          COALESCE($6::text, CASE $4::text WHEN 'user' THEN (SELECT email FROM users WHERE id = $5::uuid)
                                           WHEN 'api_key' THEN (SELECT name FROM api_keys WHERE id = $5::uuid) END),
          $7::text, $8::text, $9::uuid, $10::text, $11::text, $12::text, $13::text, $14::jsonb, $15::jsonb)`;

/** The longest user agent kept; the rest is dropped (a header can be 16 KiB). */
const USER_AGENT_CHARS = 512;

/** Writes one entry with `db`, which should be the transaction that makes the change it records. */
export async function writeAuditEntry(db: AuditWriter, entry: NewAuditEntry): Promise<void> {
  const values = [
    newId(),
    entry.orgId,
    entry.at,
    entry.actor.type,
    entry.actor.id,
    entry.actor.label ?? null,
    entry.action,
    entry.target?.type ?? null,
    entry.target?.id ?? null,
    entry.target?.label ?? null,
    entry.request.ip,
    entry.request.userAgent?.slice(0, USER_AGENT_CHARS) ?? null,
    entry.request.requestId,
    entry.changes && Object.keys(entry.changes).length ? JSON.stringify(entry.changes) : null,
    entry.details && Object.keys(entry.details).length ? JSON.stringify(entry.details) : null,
  ];
  await db.query(INSERT, values);
}

export type AuditEntryView = {
  id: string;
  time: Date;
  actor: { type: AuditActorType; id: string | null; label: string | null };
  action: string;
  target: { type: string; id: string | null; label: string | null } | null;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  changes: Record<string, AuditChange> | null;
  details: Record<string, unknown> | null;
};

/** Where a page starts: after this entry, newest first. */
export type AuditCursor = { time: Date; id: string };

export type AuditQuery = {
  orgId: string;
  actorId?: string;
  /** Entries with one of these actions (an `action` prefix, expanded by the caller); an empty list matches none. */
  actions?: readonly string[];
  targetId?: string;
  /** At or after. */
  after?: Date;
  /** Strictly before. */
  before?: Date;
  limit: number;
  cursor?: AuditCursor;
};

type AuditRow = {
  id: string;
  time: Date;
  actor_type: AuditActorType;
  actor_id: string | null;
  actor_label: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  target_label: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  changes: Record<string, AuditChange> | null;
  details: Record<string, unknown> | null;
};

/** Up to `limit` entries of the organization, newest first, and whether more follow. */
export async function listAuditEntries(pool: pg.Pool, query: AuditQuery): Promise<{ items: AuditEntryView[]; more: boolean }> {
  if (query.actions && query.actions.length === 0) return { items: [], more: false };
  const values: unknown[] = [query.orgId];
  const where = ["org_id = $1"];
  const param = (value: unknown) => `$${values.push(value)}`;
  if (query.actorId) where.push(`actor_id = ${param(query.actorId)}::uuid`);
  if (query.targetId) where.push(`target_id = ${param(query.targetId)}::uuid`);
  if (query.actions) where.push(query.actions.length === 1 ? `action = ${param(query.actions[0])}` : `action = ANY(${param(query.actions)}::text[])`);
  if (query.after) where.push(`time >= ${param(query.after)}`);
  if (query.before) where.push(`time < ${param(query.before)}`);
  if (query.cursor) where.push(`(time, id) < (${param(query.cursor.time)}, ${param(query.cursor.id)}::uuid)`);
  const { rows } = await pool.query<AuditRow>(
    `SELECT id, time, actor_type, actor_id, actor_label, action, target_type, target_id, target_label, ip, user_agent, request_id, changes, details
       FROM audit_log WHERE ${where.join(" AND ")}
      ORDER BY time DESC, id DESC
      LIMIT ${param(query.limit + 1)}`,
    values,
  );
  const items = rows.slice(0, query.limit).map((row) => ({
    id: row.id,
    time: row.time,
    actor: { type: row.actor_type, id: row.actor_id, label: row.actor_label },
    action: row.action,
    target: row.target_type ? { type: row.target_type, id: row.target_id, label: row.target_label } : null,
    ip: row.ip,
    userAgent: row.user_agent,
    requestId: row.request_id,
    changes: row.changes,
    details: row.details,
  }));
  return { items, more: rows.length > query.limit };
}

const AUDIT_DEFAULT = pg.escapeIdentifier(defaultPartition(AUDIT_LOG_PARTITIONS));

/**
 * Retention: deletes at most `limit` entries (of any organization) older than `before` from the DEFAULT partition,
 * oldest first, and answers how many. The months that have a partition go whole (dropPartitionsBefore,
 * docs/reference/time.md#partitions-and-retention); DEFAULT holds only what was written while its month had none. The
 * only DELETE the table's trigger lets through: it names `before` in its own transaction, and the trigger refuses a
 * cut-off less than a day old.
 */
export async function deleteAuditEntriesBefore(pool: pg.Pool, options: { before: Date; limit: number }): Promise<number> {
  return inTransaction(pool, async (client) => {
    await client.query("SELECT set_config('conveyor.audit_delete_before', $1, true)", [options.before.toISOString()]);
    const { rowCount } = await client.query(
      `DELETE FROM ${AUDIT_DEFAULT} WHERE id IN (SELECT id FROM ${AUDIT_DEFAULT} WHERE time < $1 ORDER BY time LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [options.before, options.limit],
    );
    return rowCount ?? 0;
  });
}
