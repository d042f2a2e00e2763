// Writing the audit log from a service (docs/reference/tenants.md#audit-log): who (the caller: a user, or an API key), from where (the
// request), when (the app's clock), in the transaction of the change.
import { writeAuditEntry, type AuditWriter, type NewAuditEntry } from "@conveyor/db";
import type { Clock } from "../../context";
import type { Caller } from "./deps";

/** What an entry says beyond who, when and from where. */
export type AuditRecord = Pick<NewAuditEntry, "action" | "target" | "changes" | "details">;

/** The actor a caller is: the API key it used, or its user. */
export function callerActor(caller: Caller): NewAuditEntry["actor"] {
  return caller.apiKeyId ? { type: "api_key", id: caller.apiKeyId } : { type: "user", id: caller.userId };
}

/** Writes `record` as done by `caller`, now, with `db` — the transaction of the change it records. */
export function audit(db: AuditWriter, caller: Caller, clock: Clock, record: AuditRecord): Promise<void> {
  return writeAuditEntry(db, { ...record, orgId: caller.orgId, at: clock.now(), actor: callerActor(caller), request: caller.request });
}

/**
 * `{field: {before, after}}` for the fields whose value differs between `before` and `after` (compared as JSON; a
 * field missing on one side is null there: `{}` before is a creation, `{}` after a deletion).
 */
export function changedFields(before: Record<string, unknown>, after: Record<string, unknown>): NonNullable<NewAuditEntry["changes"]> {
  const changes: NonNullable<NewAuditEntry["changes"]> = {};
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const [was, is] = [before[field] ?? null, after[field] ?? null];
    if (JSON.stringify(was) !== JSON.stringify(is)) changes[field] = { before: was, after: is };
  }
  return changes;
}
