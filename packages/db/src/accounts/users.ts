// Users: one account per e-mail address across the deployment. Emails arrive trimmed and lower-cased.
import type { Queryable } from "../core/transaction";

export type UserRecord = {
  id: string;
  email: string;
  passwordHash: string;
  /** Raised by every password change; tokens and sessions issued under an older version are refused. */
  credentialVersion: number;
};

const USER = `SELECT id, email, password_hash AS "passwordHash", credential_version AS "credentialVersion" FROM users`;

/** The account with this (normalized) email, or null. */
export async function findUserByEmail(db: Queryable, email: string): Promise<UserRecord | null> {
  const { rows } = await db.query<UserRecord>(`${USER} WHERE email = $1`, [email]);
  return rows[0] ?? null;
}

export async function findUserById(db: Queryable, id: string): Promise<UserRecord | null> {
  const { rows } = await db.query<UserRecord>(`${USER} WHERE id = $1::uuid`, [id]);
  return rows[0] ?? null;
}

/**
 * Sets a new password hash and raises the user's credential version, in one statement: every token and session of
 * the user issued before stops working, except the session `keepSessionId` (the one that asked), which moves to the
 * new version. The user's other sessions are deleted. Returns the new version, or null when the user is gone.
 */
export async function changePassword(db: Queryable, input: { userId: string; passwordHash: string; keepSessionId?: string }): Promise<number | null> {
  const { rows } = await db.query<{ credential_version: number }>(
    `WITH changed AS (
       UPDATE users SET password_hash = $2, credential_version = credential_version + 1 WHERE id = $1 RETURNING credential_version
     ), ended AS (
       DELETE FROM sessions WHERE user_id = $1 AND id IS DISTINCT FROM $3::uuid
     ), kept AS (
       UPDATE sessions SET credential_version = (SELECT credential_version FROM changed) WHERE id = $3::uuid AND user_id = $1
     )
     SELECT credential_version FROM changed`,
    [input.userId, input.passwordHash, input.keepSessionId ?? null],
  );
  return rows[0]?.credential_version ?? null;
}
