// Who belongs to which organization, and removing someone from one (with everything their membership carried).
import type { Role } from "@conveyor/contracts";
import type { Db, PrismaClient } from "./client";

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

export type RoleChange = { kind: "changed"; member: MemberView } | { kind: "owner" } | { kind: "not_member" };

/**
 * Gives `userId` the role `role` (admin or member) in `orgId`. An owner's role is never changed here: ownership is
 * neither granted nor taken away by a role change.
 */
export async function changeMemberRole(db: Db, input: { orgId: string; userId: string; role: "admin" | "member" }): Promise<RoleChange> {
  const { orgId, userId, role } = input;
  const { count } = await db.membership.updateMany({ where: { orgId, userId, role: { not: "owner" } }, data: { role } });
  const row = await db.membership.findUnique({
    where: { orgId_userId: { orgId, userId } },
    select: { userId: true, role: true, joinedAt: true, user: { select: { email: true } } },
  });
  if (!row) return { kind: "not_member" };
  if (count === 0 && row.role === "owner") return { kind: "owner" };
  return { kind: "changed", member: { userId: row.userId, email: row.user.email, role: row.role, joinedAt: row.joinedAt } };
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
 * back through a link they hold, and ends their console sessions there. Returns false when they were not a member.
 */
export async function removeMembership(prisma: PrismaClient, input: { orgId: string; userId: string; at: Date }): Promise<boolean> {
  const { orgId, userId, at } = input;
  return prisma.$transaction(async (tx) => {
    const { count } = await tx.membership.deleteMany({ where: { orgId, userId } });
    if (count === 0) return false;
    await tx.apiKey.updateMany({ where: { orgId, createdBy: userId, revokedAt: null }, data: { revokedAt: at } });
    await tx.invite.updateMany({ where: { orgId, invitedBy: userId, acceptedAt: null, supersededAt: null }, data: { supersededAt: at } });
    // Their console sessions in this organization would be refused anyway (the membership is read per request).
    await tx.session.deleteMany({ where: { orgId, userId } });
    return true;
  });
}
