// Who belongs to which organization, and removing someone from one (with everything their membership carried).
import type { Role } from "@conveyor/contracts";
import type pg from "pg";
import type { Db } from "./client";

export type UserOrg = { orgId: string; orgName: string; role: Role; joinedAt: Date };

/** Every organization `userId` belongs to, oldest membership first. */
export async function listUserOrgs(db: Db, userId: string): Promise<UserOrg[]> {
  const rows = await db.membership.findMany({
    where: { userId },
    orderBy: [{ joinedAt: "asc" }, { orgId: "asc" }],
    select: { orgId: true, role: true, joinedAt: true, org: { select: { name: true } } },
  });
  return rows.map((r) => ({ orgId: r.orgId, orgName: r.org.name, role: r.role, joinedAt: r.joinedAt }));
}

export type MemberView = { userId: string; email: string; role: Role; joinedAt: Date };

/** The members of `orgId`, in the order they joined. */
export async function listOrgMembers(db: Db, orgId: string): Promise<MemberView[]> {
  const rows = await db.membership.findMany({
    where: { orgId },
    orderBy: [{ joinedAt: "asc" }, { userId: "asc" }],
    select: { userId: true, role: true, joinedAt: true, user: { select: { email: true } } },
  });
  return rows.map((r) => ({ userId: r.userId, email: r.user.email, role: r.role, joinedAt: r.joinedAt }));
}

/** Where a page of members starts: after this member, in joining order. */
export type MemberCursor = { joinedAt: Date; userId: string };

/** Up to `limit` members of `orgId` in the order they joined, after `after`; `more` tells whether others follow. */
export async function listOrgMembersPage(
  db: Db,
  query: { orgId: string; limit: number; after?: MemberCursor },
): Promise<{ items: MemberView[]; more: boolean }> {
  const { orgId, limit, after } = query;
  const rows = await db.membership.findMany({
    where: {
      orgId,
      ...(after ? { OR: [{ joinedAt: { gt: after.joinedAt } }, { joinedAt: after.joinedAt, userId: { gt: after.userId } }] } : {}),
    },
    orderBy: [{ joinedAt: "asc" }, { userId: "asc" }],
    take: limit + 1,
    select: { userId: true, role: true, joinedAt: true, user: { select: { email: true } } },
  });
  const items = rows.slice(0, limit).map((r) => ({ userId: r.userId, email: r.user.email, role: r.role, joinedAt: r.joinedAt }));
  return { items, more: rows.length > limit };
}

export type RoleChange = { kind: "changed"; member: MemberView; before: Role } | { kind: "owner" } | { kind: "not_member" };

/**
 * Gives `userId` the role `role` (admin or member) in `orgId`, in one statement that also answers the role before.
 * An owner's role is never changed here: ownership is neither granted nor taken away by a role change.
 */
export async function changeMemberRole(db: pg.Pool | pg.PoolClient, input: { orgId: string; userId: string; role: "admin" | "member" }): Promise<RoleChange> {
  const { rows } = await db.query<{ before: Role; email: string; joined_at: Date }>(
    `WITH target AS (
       SELECT m.role FROM memberships m WHERE m.org_id = $1 AND m.user_id = $2 FOR UPDATE
     ), changed AS (
       UPDATE memberships m SET role = $3 FROM target t WHERE m.org_id = $1 AND m.user_id = $2 AND t.role <> 'owner'
     )
     SELECT t.role AS before, u.email, m.joined_at FROM target t, memberships m, users u WHERE m.org_id = $1 AND m.user_id = $2 AND u.id = $2`,
    [input.orgId, input.userId, input.role],
  );
  const row = rows[0];
  if (!row) return { kind: "not_member" };
  if (row.before === "owner") return { kind: "owner" };
  return { kind: "changed", before: row.before, member: { userId: input.userId, email: row.email, role: input.role, joinedAt: row.joined_at } };
}

export type MembershipDetails = { user: { id: string; email: string }; org: { id: string; name: string }; role: Role };

/** A membership with its user and organization, or null. */
export async function findMembershipDetails(db: Db, orgId: string, userId: string): Promise<MembershipDetails | null> {
  const row = await db.membership.findUnique({
    where: { orgId_userId: { orgId, userId } },
    select: { role: true, user: { select: { id: true, email: true } }, org: { select: { id: true, name: true } } },
  });
  return row ? { user: row.user, org: row.org, role: row.role } : null;
}

/** Whether the account with this email is a member of `orgId`. */
export async function isMemberByEmail(db: Db, orgId: string, email: string): Promise<boolean> {
  const row = await db.membership.findFirst({ where: { orgId, user: { email } }, select: { userId: true } });
  return row !== null;
}

/**
 * Removes `userId` from `orgId` (their other organizations are untouched), revokes their API keys in that
 * organization and withdraws the invites they sent that are still pending, so a removed admin cannot come
 * back through a link they hold, and ends their console sessions there — in one statement. Answers the role and
 * e-mail they had, or null when they were not a member.
 */
export async function removeMembership(
  db: pg.Pool | pg.PoolClient,
  input: { orgId: string; userId: string; at: Date },
): Promise<{ role: Role; email: string } | null> {
  const { rows } = await db.query<{ role: Role; email: string }>(
    `WITH removed AS (
       DELETE FROM memberships WHERE org_id = $1 AND user_id = $2 RETURNING role
     ), keys AS (
       UPDATE api_keys SET revoked_at = $3 WHERE org_id = $1 AND created_by = $2 AND revoked_at IS NULL AND EXISTS (SELECT 1 FROM removed)
     ), invites AS (
       UPDATE invites SET superseded_at = $3
        WHERE org_id = $1 AND invited_by = $2 AND accepted_at IS NULL AND superseded_at IS NULL AND EXISTS (SELECT 1 FROM removed)
     ), sessions AS (
       -- Their console sessions in this organization would be refused anyway (the membership is read per request).
       DELETE FROM sessions WHERE org_id = $1 AND user_id = $2 AND EXISTS (SELECT 1 FROM removed)
     )
     SELECT r.role, u.email FROM removed r, users u WHERE u.id = $2`,
    [input.orgId, input.userId, input.at],
  );
  return rows[0] ?? null;
}
