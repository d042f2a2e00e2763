// API keys (SPEC §3): any role creates keys and revokes its own; owners and admins see and revoke all of
// the organization's keys, members only their own. The key itself is returned once, at creation.
import { findApiKey, insertApiKey, isUuid, listApiKeys as listKeys, newId, revokeApiKey as revokeKey, type ApiKeyView } from "@conveyor/db";
import { forbidden, notFound } from "../http/errors";
import { generateApiKey } from "./api-key-secrets";
import type { Caller, ServiceDeps } from "./deps";

export type ApiKeyJson = { id: string; name: string; prefix: string; created_by: string; created_at: string; last_used_at: string | null };
export type CreatedApiKeyJson = { id: string; name: string; prefix: string; key: string; created_at: string };

const seesAllKeys = (caller: Caller) => caller.role === "owner" || caller.role === "admin";

function toJson(key: ApiKeyView): ApiKeyJson {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    created_by: key.createdBy,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
  };
}

export async function createApiKey(input: { caller: Caller; name: string }, { db, clock }: Pick<ServiceDeps, "db" | "clock">): Promise<CreatedApiKeyJson> {
  const { key, prefix, hash } = generateApiKey();
  const stored = await insertApiKey(db.prisma, {
    id: newId(),
    orgId: input.caller.orgId,
    createdBy: input.caller.userId,
    name: input.name,
    prefix,
    keyHash: hash,
    at: clock.now(),
  });
  return { id: stored.id, name: stored.name, prefix: stored.prefix, key, created_at: stored.createdAt.toISOString() };
}

export async function listApiKeys(input: { caller: Caller }, { db }: Pick<ServiceDeps, "db">): Promise<ApiKeyJson[]> {
  const { caller } = input;
  const keys = await listKeys(db.prisma, { orgId: caller.orgId, createdBy: seesAllKeys(caller) ? undefined : caller.userId });
  return keys.map(toJson);
}

/** Revokes a key of the caller's organization: 404 when absent, revoked or elsewhere; 403 for a member's colleague's key. */
export async function revokeApiKey(input: { caller: Caller; id: string }, { db, clock }: Pick<ServiceDeps, "db" | "clock">): Promise<void> {
  const { caller, id } = input;
  const key = isUuid(id) ? await findApiKey(db.prisma, caller.orgId, id) : null;
  if (!key) throw notFound("API key");
  if (key.createdBy !== caller.userId && !seesAllKeys(caller)) throw forbidden("Members can only revoke their own API keys.");
  if (!(await revokeKey(db.prisma, { orgId: caller.orgId, id, at: clock.now() }))) throw notFound("API key");
}
