// GET /audit-log (docs/reference/tenants.md#audit-log): the organization's audit entries, newest first, filtered, in keyset pages. Owners and
// admins only (the route says so); every query names the caller's organization.
import { auditActionsMatching } from "@conveyor/contracts";
import { isUuid, listAuditEntries, type AuditEntryView } from "@conveyor/db";
import { validationFailed } from "./infrastructure/errors";
import type { Caller, ServiceDeps } from "./infrastructure/deps";

export type AuditLogQuery = {
  actor_id?: string;
  action?: string;
  target_id?: string;
  /** ISO 8601, already normalised by the route: entries at or after it. */
  after?: string;
  /** ISO 8601: entries before it. */
  before?: string;
  limit?: number;
  cursor?: string;
};

/** Entries a page holds unless `limit` says otherwise. */
export const AUDIT_PAGE_DEFAULT = 50;

type Party = { type: string; id: string | null; email?: string; name?: string };

export type AuditEntryJson = {
  id: string;
  time: string;
  actor: Party;
  action: string;
  target: Party | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  changes: Record<string, { before: unknown; after: unknown }> | null;
  details: Record<string, unknown> | null;
};

/** People and invites are named by e-mail; keys, schedules, endpoints and organizations by name. */
const EMAIL_NAMED = new Set(["user", "invite"]);

function party(type: string, id: string | null, label: string | null): Party {
  if (label === null) return { type, id };
  return EMAIL_NAMED.has(type) ? { type, id, email: label } : { type, id, name: label };
}

const toJson = (entry: AuditEntryView): AuditEntryJson => ({
  id: entry.id,
  time: entry.time.toISOString(),
  actor: party(entry.actor.type, entry.actor.id, entry.actor.label),
  action: entry.action,
  target: entry.target ? party(entry.target.type, entry.target.id, entry.target.label) : null,
  ip: entry.ip,
  user_agent: entry.userAgent,
  request_id: entry.requestId,
  changes: entry.changes,
  details: entry.details,
});

/** Cursors are opaque to clients: the last entry's time and id, base64url-encoded. */
const encodeCursor = (entry: AuditEntryView) => Buffer.from(`${entry.time.toISOString()}|${entry.id}`, "utf8").toString("base64url");

function decodeCursor(cursor: string): { time: Date; id: string } {
  const [at = "", id = "", ...rest] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const time = new Date(at);
  if (rest.length || !isUuid(id) || Number.isNaN(time.getTime()))
    throw validationFailed([{ path: "query.cursor", message: "is not a cursor this API issued" }]);
  return { time, id: id.toLowerCase() };
}

/** One page of the caller's organization's entries, and the query of the next page while more remain. */
export async function listAuditLog(
  input: { caller: Caller; query: AuditLogQuery },
  { reads }: Pick<ServiceDeps, "reads">,
): Promise<{ items: AuditEntryJson[]; next: URLSearchParams | null }> {
  const { caller, query } = input;
  const limit = query.limit ?? AUDIT_PAGE_DEFAULT;
  const page = await listAuditEntries(await reads.poolFor(caller), {
    orgId: caller.orgId,
    actorId: query.actor_id?.toLowerCase(),
    targetId: query.target_id?.toLowerCase(),
    // A prefix (`member.`) or a whole name; one that names no action matches nothing.
    actions: query.action === undefined ? undefined : auditActionsMatching(query.action),
    after: query.after === undefined ? undefined : new Date(query.after),
    before: query.before === undefined ? undefined : new Date(query.before),
    limit,
    cursor: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
  });
  const last = page.items[page.items.length - 1];
  let next: URLSearchParams | null = null;
  if (page.more && last) {
    const { cursor: _previous, limit: _limit, ...filters } = query;
    next = new URLSearchParams({ ...(filters as Record<string, string>), limit: String(limit), cursor: encodeCursor(last) });
  }
  return { items: page.items.map(toJson), next };
}
