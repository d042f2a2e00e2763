// API keys of an organization. Only the SHA-256 of a key and its first 8 characters are stored; a revoked
// key is kept (revoked_at set) so its id never comes back to life, but is no longer listed.
import type { Queryable } from "../core/transaction";

/** `role`: "member" (default) or "worker" (docs/reference/lifecycle.md#your-own-workers: the worker protocol only). */
export type NewApiKey = { id: string; orgId: string; createdBy: string; name: string; prefix: string; keyHash: Buffer; at: Date; role?: "member" | "worker" };

export type ApiKeyView = { id: string; name: string; prefix: string; role: "member" | "worker"; createdBy: string; createdAt: Date; lastUsedAt: Date | null };

const VIEW = `k.id, k.name, k.prefix, k.role, k.created_by AS "createdBy", k.created_at AS "createdAt", k.last_used_at AS "lastUsedAt"`;

export async function insertApiKey(db: Queryable, key: NewApiKey): Promise<ApiKeyView> {
  const { rows } = await db.query<ApiKeyView>(
    `INSERT INTO api_keys AS k (id, org_id, created_by, name, prefix, key_hash, created_at, role) VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5, $6, $7, $8)
     RETURNING ${VIEW}`,
    [key.id, key.orgId, key.createdBy, key.name, key.prefix, key.keyHash, key.at, key.role ?? "member"],
  );
  return rows[0]!;
}

/** A listed key, with the e-mail of the person who created it. */
export type ListedApiKey = ApiKeyView & { createdByEmail: string };

/** Live keys of `orgId`, oldest first; only those created by `createdBy` when it is given. */
export async function listApiKeys(db: Queryable, filter: { orgId: string; createdBy?: string }): Promise<ListedApiKey[]> {
  const { rows } = await db.query<ListedApiKey>(
    `SELECT ${VIEW}, u.email AS "createdByEmail" FROM api_keys k JOIN users u ON u.id = k.created_by
      WHERE k.org_id = $1::uuid AND k.revoked_at IS NULL AND ($2::uuid IS NULL OR k.created_by = $2::uuid)
      ORDER BY k.id`,
    [filter.orgId, filter.createdBy ?? null],
  );
  return rows;
}

/** A live key of `orgId`, or null (absent, revoked, or another organization's). */
export async function findApiKey(db: Queryable, orgId: string, id: string): Promise<ApiKeyView | null> {
  const { rows } = await db.query<ApiKeyView>(`SELECT ${VIEW} FROM api_keys k WHERE k.id = $1::uuid AND k.org_id = $2::uuid AND k.revoked_at IS NULL`, [
    id,
    orgId,
  ]);
  return rows[0] ?? null;
}

/** Revokes a live key of `orgId`. Returns false when there was none to revoke. */
export async function revokeApiKey(db: Queryable, input: { orgId: string; id: string; at: Date }): Promise<boolean> {
  const { rowCount } = await db.query("UPDATE api_keys SET revoked_at = $3 WHERE id = $1::uuid AND org_id = $2::uuid AND revoked_at IS NULL", [
    input.id,
    input.orgId,
    input.at,
  ]);
  return (rowCount ?? 0) > 0;
}
