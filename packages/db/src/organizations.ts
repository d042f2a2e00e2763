// Organizations and their founding owner, created together or not at all.
import type { PrismaClient } from "./client";
import { isUniqueViolation } from "./errors";

export type NewOrganization = {
  orgId: string;
  name: string;
  owner: { id: string; email: string; passwordHash: string };
  at: Date;
};

/**
 * Creates a user, an organization and the owner membership in one transaction. Returns false (and creates
 * nothing) when the email already has an account.
 */
export async function createOrganizationWithOwner(prisma: PrismaClient, input: NewOrganization): Promise<boolean> {
  try {
    await prisma.$transaction([
      prisma.user.create({ data: { id: input.owner.id, email: input.owner.email, passwordHash: input.owner.passwordHash, createdAt: input.at } }),
      prisma.organization.create({ data: { id: input.orgId, name: input.name, createdAt: input.at } }),
      prisma.membership.create({ data: { orgId: input.orgId, userId: input.owner.id, role: "owner", joinedAt: input.at } }),
    ]);
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}
