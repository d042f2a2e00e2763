// Who belongs to which organization, and removing someone from one (with everything their membership carried).
import type { Role } from "@conveyor/contracts";
import type { Queryable } from "../core/transaction";

export type UserOrg = { orgId: string; orgName: string; role: Role; joinedAt: Date };

/** Every organization `userId` belongs to, oldest membership first. */
export async function listUserOrgs(db: Queryable, userId: string): Promise<UserOrg[]> {
  const { rows } = await db.query<UserOrg>(
    `SELECT m.org_id AS "orgId", o.name AS "orgName", m.role, m.joined_at AS "joinedAt"
       FROM memberships m JOIN organizations o ON o.id = m.org_id
      WHERE m.user_id = $1::uuid ORDER BY m.joined_at, m.org_id`,
    [userId],
  );
  return rows;
}

export type MemberView = { userId: string; email: string; role: Role; joinedAt: Date };

const MEMBER = `SELECT m.user_id AS "userId", u.email, m.role, m.joined_at AS "joinedAt" FROM memberships m JOIN users u ON u.id = m.user_id`;

/** The members of `orgId`, in the order they joined. */
export async function listOrgMembers(db: Queryable, orgId: string): Promise<MemberView[]> {
  const { rows } = await db.query<MemberView>(`${MEMBER} WHERE m.org_id = $1::uuid ORDER BY m.joined_at, m.user_id`, [orgId]);
  return rows;
}

/** Where a page of members starts: after this member, in joining order. */
export type MemberCursor = { joinedAt: Date; userId: string };

/** Up to `limit` members of `orgId` in the order they joined, after `after`; `more` tells whether others follow. */
export async function listOrgMembersPage(
  db: Queryable,
  query: { orgId: string; limit: number; after?: MemberCursor },
): Promise<{ items: MemberView[]; more: boolean }> {
  const { orgId, limit, after } = query;
  const { rows } = await db.query<MemberView>(
    `${MEMBER} WHERE m.org_id = $1::uuid AND ($2::timestamptz IS NULL OR (m.joined_at, m.user_id) > ($2::timestamptz, $3::uuid))
      ORDER BY m.joined_at, m.user_id LIMIT $4`,
    [orgId, after?.joinedAt ?? null, after?.userId ?? null, limit + 1],
  );
  return { items: rows.slice(0, limit), more: rows.length > limit };
}

export type RoleChange = { kind: "changed"; member: MemberView; before: Role } | { kind: "owner" } | { kind: "not_member" };

/**
 * Gives `userId` the role `role` (admin or member) in `orgId`, in one statement that also answers the role before.
 * An owner's role is never changed here: ownership is neither granted nor taken away by a role change.
 */
export async function changeMemberRole(db: Queryable, input: { orgId: string; userId: string; role: "admin" | "member" }): Promise<RoleChange> {
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
export async function findMembershipDetails(db: Queryable, orgId: string, userId: string): Promise<MembershipDetails | null> {
  const { rows } = await db.query<MembershipDetails>(
    `SELECT json_build_object('id', u.id, 'email', u.email) AS user, json_build_object('id', o.id, 'name', o.name) AS org, m.role
       FROM memberships m JOIN users u ON u.id = m.user_id JOIN organizations o ON o.id = m.org_id
      WHERE m.org_id = $1::uuid AND m.user_id = $2::uuid`,
    [orgId, userId],
  );
  return rows[0] ?? null;
}

/** Whether the account with this email is a member of `orgId`. */
export async function isMemberByEmail(db: Queryable, orgId: string, email: string): Promise<boolean> {
  const { rowCount } = await db.query("SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = $1::uuid AND u.email = $2", [
    orgId,
    email,
  ]);
  return (rowCount ?? 0) > 0;
}

/**
 * Removes `userId` from `orgId` (their other organizations are untouched), revokes their API keys in that
 * organization and withdraws the invites they sent that are still pending, so a removed admin cannot come
 * back through a link they hold, and ends their console sessions there — in one statement. Answers the role and
 * e-mail they had, or null when they were not a member.
 */
export async function removeMembership(db: Queryable, input: { orgId: string; userId: string; at: Date }): Promise<{ role: Role; email: string } | null> {
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
