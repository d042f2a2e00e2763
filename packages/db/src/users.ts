// Users: one account per e-mail address across the deployment. Emails arrive trimmed and lower-cased.
import type { Db } from "./client";

export type UserRecord = { id: string; email: string; passwordHash: string };

/** The account with this (normalized) email, or null. */
export async function findUserByEmail(db: Db, email: string): Promise<UserRecord | null> {
  return db.user.findUnique({ where: { email }, select: { id: true, email: true, passwordHash: true } });
}
