// Arranging tests: organizations, members and credentials written straight to the test database, with
// unique values so every test (and every second org) stays independent.
import { randomBytes } from "node:crypto";
import bcrypt from "bcrypt";
import type { Role } from "@conveyor/contracts";
import { newId } from "@conveyor/db";
import type { DatabaseWithPrisma } from "@conveyor/db/prisma";
import type { ApiConfig } from "../src/env";
import { generateApiKey } from "../src/services/infrastructure/api-key-secrets";
import { signToken } from "../src/services/infrastructure/tokens";

export const TEST_PASSWORD = "correct horse battery staple";
let passwordHash: string | undefined;

export function uniqueEmail(label = "user"): string {
  return `${label}-${randomBytes(5).toString("hex")}@example.test`;
}

export type TestMember = { orgId: string; userId: string; email: string; role: Role; token: string };

/** A new user whose password is TEST_PASSWORD, with an email made from `label`. */
export async function createUser(db: DatabaseWithPrisma, label = "user"): Promise<{ userId: string; email: string }> {
  passwordHash ??= await bcrypt.hash(TEST_PASSWORD, 4);
  const userId = newId();
  const email = uniqueEmail(label);
  await db.prisma.user.create({ data: { id: userId, email, passwordHash } });
  return { userId, email };
}

/** A user with `role` in `orgId` (a new user unless `userId` is given), and a JWT for that org. */
export async function addMember(db: DatabaseWithPrisma, config: ApiConfig, orgId: string, role: Role, userId?: string): Promise<TestMember> {
  let email: string;
  if (userId) {
    email = (await db.prisma.user.findUniqueOrThrow({ where: { id: userId } })).email;
  } else {
    ({ userId, email } = await createUser(db, role));
  }
  await db.prisma.membership.create({ data: { orgId, userId, role } });
  return { orgId, userId, email, role, token: signToken({ userId, orgId }, config, new Date()) };
}

/** A new organization and its owner. */
export async function createOrg(db: DatabaseWithPrisma, config: ApiConfig, name = `Org ${randomBytes(3).toString("hex")}`): Promise<TestMember> {
  const orgId = newId();
  await db.prisma.organization.create({ data: { id: orgId, name } });
  return addMember(db, config, orgId, "owner");
}

/** An API key created by `member` in its org. */
export async function createApiKey(
  db: DatabaseWithPrisma,
  member: Pick<TestMember, "orgId" | "userId">,
  name = "test key",
): Promise<{ id: string; key: string }> {
  const { key, prefix, hash } = generateApiKey();
  const id = newId();
  await db.prisma.apiKey.create({ data: { id, orgId: member.orgId, createdBy: member.userId, name, prefix, keyHash: new Uint8Array(hash) } });
  return { id, key };
}
