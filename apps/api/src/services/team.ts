// The members of an organization (SPEC §4). Who may call what is decided by the routes' role checks.
import { isUuid, listOrgMembers, removeMembership } from "@conveyor/db";
import type { Role } from "@conveyor/contracts";
import { AppError, notFound } from "../http/errors";
import type { Caller, ServiceDeps } from "./deps";

export type MemberJson = { id: string; email: string; role: Role; joined_at: string };

export async function listMembers(input: { caller: Caller }, { db }: Pick<ServiceDeps, "db">): Promise<MemberJson[]> {
  const members = await listOrgMembers(db.prisma, input.caller.orgId);
  return members.map((m) => ({ id: m.userId, email: m.email, role: m.role, joined_at: m.joinedAt.toISOString() }));
}

/**
 * Removes `userId` from the caller's organization, revoking their API keys there and their pending invites.
 * 409 for the caller themselves; 404 for anyone who is not a member (including malformed ids).
 */
export async function removeMember(input: { caller: Caller; userId: string }, { db, clock }: Pick<ServiceDeps, "db" | "clock">): Promise<void> {
  const { caller, userId } = input;
  if (!isUuid(userId)) throw notFound("Member");
  if (userId.toLowerCase() === caller.userId) {
    throw new AppError("cannot_remove_self", "You cannot remove yourself from the organization you own.");
  }
  const removed = await removeMembership(db.prisma, { orgId: caller.orgId, userId: userId.toLowerCase(), at: clock.now() });
  if (!removed) throw notFound("Member");
}
