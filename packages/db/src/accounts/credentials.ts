// Data access behind authentication: a JWT's membership (with the user's credential version) and an API key's owner,
// read on every request (or from a cache of at most a few seconds for keys) so removals, revocations and password
// changes take effect at once.
import type { Role } from "@conveyor/contracts";
import type pg from "pg";

export type Membership = {
  orgId: string;
  userId: string;
  role: Role;
  /** The user's current credential version. */
  credentialVersion: number;
  /** The organization requires single sign-on of its non-owner members (docs/reference/tenants.md#audit-log). */
  ssoEnforced: boolean;
};

/** The role of `userId` in `orgId` and the user's credential version, or null when they are not a member. */
export async function findMembership(pool: pg.Pool, orgId: string, userId: string): Promise<Membership | null> {
  const { rows } = await pool.query<{ role: Role; credential_version: number; sso_enforced: boolean }>(
    `SELECT m.role, u.credential_version, COALESCE(s.enforce, false) AS sso_enforced
       FROM memberships m JOIN users u ON u.id = m.user_id LEFT JOIN org_sso s ON s.org_id = m.org_id
      WHERE m.org_id = $1 AND m.user_id = $2`,
    [orgId, userId],
  );
  const row = rows[0];
  return row ? { orgId, userId, role: row.role, credentialVersion: row.credential_version, ssoEnforced: row.sso_enforced } : null;
}

/** `role`: "member" (the job endpoints) or "worker" (the worker protocol only, docs/reference/lifecycle.md#your-own-workers). */
export type ApiKeyOwner = { apiKeyId: string; orgId: string; userId: string; role: "member" | "worker" };

/**
 * The live key with this SHA-256 hash: not revoked, and created by someone who is still a member of the
 * key's organization. Null otherwise.
 */
export async function findLiveApiKey(pool: pg.Pool, keyHash: Buffer): Promise<ApiKeyOwner | null> {
  const { rows } = await pool.query<{ id: string; org_id: string; created_by: string; role: "member" | "worker" }>(
    `SELECT k.id, k.org_id, k.created_by, k.role
       FROM api_keys k
       JOIN memberships m ON m.org_id = k.org_id AND m.user_id = k.created_by
      WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [keyHash],
  );
  const row = rows[0];
  return row ? { apiKeyId: row.id, orgId: row.org_id, userId: row.created_by, role: row.role } : null;
}

/** Records that a key was used; callers throttle this, it is not worth a write per request. */
export async function touchApiKey(pool: pg.Pool, apiKeyId: string, at: Date): Promise<void> {
  await pool.query("UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)", [apiKeyId, at]);
}

/** How job logs name who did something: the user's email, or the API key's name and prefix. */
export async function describeActor(pool: pg.Pool, actor: { userId: string; apiKeyId?: string }): Promise<string> {
  if (actor.apiKeyId) {
    const { rows } = await pool.query<{ name: string; prefix: string }>("SELECT name, prefix FROM api_keys WHERE id = $1", [actor.apiKeyId]);
    if (rows[0]) return `API key "${rows[0].name}" (${rows[0].prefix}…)`;
  }
  const { rows } = await pool.query<{ email: string }>("SELECT email FROM users WHERE id = $1", [actor.userId]);
  return rows[0]?.email ?? "a former member";
}
