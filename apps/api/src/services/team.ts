// The members and pending invites of an organization (docs/reference/tenants.md#team-and-roles, docs/reference/tenants.md#team-api-for-the-console). Who may call what is decided by the routes'
// role checks; every query names the caller's organization, so another organization's ids are 404s.
import {
  changeMemberRole as changeStoredRole,
  inTransaction,
  isUuid,
  listOrgMembers,
  listOrgMembersPage,
  listPendingInvites,
  removeMembership,
  withdrawInvite,
  type MemberCursor,
  type MemberView,
} from "@conveyor/db";
import type { Role } from "@conveyor/contracts";
import { AppError, notFound, validationFailed } from "./infrastructure/errors";
import { audit } from "./infrastructure/audit";
import type { Caller, ServiceDeps } from "./infrastructure/deps";

export type MemberJson = { id: string; email: string; role: Role; joined_at: string };

const memberJson = (m: MemberView): MemberJson => ({ id: m.userId, email: m.email, role: m.role, joined_at: m.joinedAt.toISOString() });

export type MemberListQuery = { limit?: number; cursor?: string };

/** Cursors are opaque to clients: the last member's joining time and id, base64url-encoded. */
const encodeCursor = (m: MemberView) => Buffer.from(`${m.joinedAt.toISOString()}|${m.userId}`, "utf8").toString("base64url");

function decodeCursor(cursor: string): MemberCursor {
  const [at, userId] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const joinedAt = new Date(at ?? "");
  if (!userId || !isUuid(userId) || Number.isNaN(joinedAt.getTime())) {
    throw validationFailed([{ path: "query.cursor", message: "is not a cursor this API issued" }]);
  }
  return { joinedAt, userId: userId.toLowerCase() };
}

/**
 * The organization's members in the order they joined: all of them, or with `limit` one page and the query of the
 * next one while more remain.
 */
export async function listMembers(
  input: { caller: Caller; query?: MemberListQuery },
  { db }: Pick<ServiceDeps, "db">,
): Promise<{ items: MemberJson[]; next: URLSearchParams | null }> {
  const { caller, query = {} } = input;
  if (query.limit === undefined) {
    if (query.cursor !== undefined) throw validationFailed([{ path: "query.cursor", message: "needs limit" }]);
    return { items: (await listOrgMembers(db.pool, caller.orgId)).map(memberJson), next: null };
  }
  const page = await listOrgMembersPage(db.pool, {
    orgId: caller.orgId,
    limit: query.limit,
    after: query.cursor ? decodeCursor(query.cursor) : undefined,
  });
  const last = page.items[page.items.length - 1];
  const next = page.more && last ? new URLSearchParams({ limit: String(query.limit), cursor: encodeCursor(last) }) : null;
  return { items: page.items.map(memberJson), next };
}

/**
 * Makes a member an admin or a member (owners only, by the route). The owner's own role is 409
 * `cannot_change_own_role`; another owner's role is not changed here (400): ownership is neither granted nor taken by
 * a role change. 404 for anyone who is not a member.
 */
export async function changeMemberRole(
  input: { caller: Caller; userId: string; role: "admin" | "member" },
  { db, clock }: Pick<ServiceDeps, "db" | "clock">,
): Promise<MemberJson> {
  const { caller, role } = input;
  if (!isUuid(input.userId)) throw notFound("Member");
  const userId = input.userId.toLowerCase();
  if (userId === caller.userId) throw new AppError("cannot_change_own_role", "You cannot change your own role in the organization you own.");
  const change = await inTransaction(db.pool, async (tx) => {
    const change = await changeStoredRole(tx, { orgId: caller.orgId, userId, role });
    // A role set to what it was changes nothing, and is not recorded.
    if (change.kind === "changed" && change.before !== role) {
      await audit(tx, caller, clock, {
        action: "member.role_change",
        target: { type: "user", id: userId, label: change.member.email },
        changes: { role: { before: change.before, after: role } },
      });
    }
    return change;
  });
  switch (change.kind) {
    case "not_member":
      throw notFound("Member");
    case "owner":
      throw validationFailed([{ path: "user_id", message: "is an owner: ownership is not changed by a role change" }], "An owner's role cannot be changed.");
    case "changed":
      return memberJson(change.member);
  }
}

/**
 * Removes `userId` from the caller's organization, revoking their API keys there and their pending invites and ending
 * their console sessions there. 409 for the caller themselves; 404 for anyone who is not a member (including
 * malformed ids).
 */
export async function removeMember(input: { caller: Caller; userId: string }, { db, clock }: Pick<ServiceDeps, "db" | "clock">): Promise<void> {
  const { caller } = input;
  if (!isUuid(input.userId)) throw notFound("Member");
  const userId = input.userId.toLowerCase();
  if (userId === caller.userId) {
    throw new AppError("cannot_remove_self", "You cannot remove yourself from the organization you own.");
  }
  const removed = await inTransaction(db.pool, async (tx) => {
    const removed = await removeMembership(tx, { orgId: caller.orgId, userId, at: clock.now() });
    if (removed) {
      await audit(tx, caller, clock, {
        action: "member.remove",
        target: { type: "user", id: userId, label: removed.email },
        changes: { role: { before: removed.role, after: null } },
      });
    }
    return removed;
  });
  if (!removed) throw notFound("Member");
}

export type PendingInviteJson = { id: string; email: string; role: Role; expires_at: string; invited_by: string; created_at: string };

/** Invites of the caller's organization that can still be accepted, newest first; never their links. */
export async function listInvites(input: { caller: Caller }, { db, clock }: Pick<ServiceDeps, "db" | "clock">): Promise<PendingInviteJson[]> {
  const invites = await listPendingInvites(db.pool, { orgId: input.caller.orgId, now: clock.now() });
  return invites.map((i) => ({
    id: i.id,
    email: i.email,
    role: i.role,
    expires_at: i.expiresAt.toISOString(),
    invited_by: i.invitedBy,
    created_at: i.createdAt.toISOString(),
  }));
}

/** Withdraws a pending invite: its link then answers 410 invite_expired. 404 for anything else. */
export async function revokeInvite(input: { caller: Caller; id: string }, { db, clock }: Pick<ServiceDeps, "db" | "clock">): Promise<void> {
  const { caller } = input;
  if (!isUuid(input.id)) throw notFound("Invite");
  const id = input.id.toLowerCase();
  const withdrawn = await inTransaction(db.pool, async (tx) => {
    const withdrawn = await withdrawInvite(tx, { orgId: caller.orgId, id, at: clock.now() });
    if (withdrawn) {
      await audit(tx, caller, clock, {
        action: "invite.revoke",
        target: { type: "invite", id, label: withdrawn.email },
        changes: { status: { before: "pending", after: "revoked" } },
        details: { role: withdrawn.role },
      });
    }
    return withdrawn;
  });
  if (!withdrawn) throw notFound("Invite");
}
