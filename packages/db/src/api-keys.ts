// API keys of an organization. Only the SHA-256 of a key and its first 8 characters are stored; a revoked
// key is kept (revoked_at set) so its id never comes back to life, but is no longer listed.
import type { Db } from "./client";

export type NewApiKey = { id: string; orgId: string; createdBy: string; name: string; prefix: string; keyHash: Buffer; at: Date };

export type ApiKeyView = { id: string; name: string; prefix: string; createdBy: string; createdAt: Date; lastUsedAt: Date | null };

const viewFields = { id: true, name: true, prefix: true, createdBy: true, createdAt: true, lastUsedAt: true } as const;

export async function insertApiKey(db: Db, key: NewApiKey): Promise<ApiKeyView> {
  return db.apiKey.create({
    data: {
      id: key.id,
      orgId: key.orgId,
      createdBy: key.createdBy,
      name: key.name,
      prefix: key.prefix,
      keyHash: new Uint8Array(key.keyHash),
      createdAt: key.at,
    },
    select: viewFields,
  });
}

/** A listed key, with the e-mail of the person who created it. */
export type ListedApiKey = ApiKeyView & { createdByEmail: string };

/** Live keys of `orgId`, oldest first; only those created by `createdBy` when it is given. */
export async function listApiKeys(db: Db, filter: { orgId: string; createdBy?: string }): Promise<ListedApiKey[]> {
  const keys = await db.apiKey.findMany({
    where: { orgId: filter.orgId, revokedAt: null, ...(filter.createdBy ? { createdBy: filter.createdBy } : {}) },
    orderBy: { id: "asc" },
    select: { ...viewFields, creator: { select: { email: true } } },
  });
  return keys.map(({ creator, ...key }) => ({ ...key, createdByEmail: creator.email }));
}

/** A live key of `orgId`, or null (absent, revoked, or another organization's). */
export async function findApiKey(db: Db, orgId: string, id: string): Promise<ApiKeyView | null> {
  return db.apiKey.findFirst({ where: { id, orgId, revokedAt: null }, select: viewFields });
}

/** Revokes a live key of `orgId`. Returns false when there was none to revoke. */
export async function revokeApiKey(db: Db, input: { orgId: string; id: string; at: Date }): Promise<boolean> {
  const { count } = await db.apiKey.updateMany({ where: { id: input.id, orgId: input.orgId, revokedAt: null }, data: { revokedAt: input.at } });
  return count > 0;
}
