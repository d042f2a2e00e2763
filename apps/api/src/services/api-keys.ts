// API keys (docs/reference/tenants.md#authentication): any role creates keys and revokes its own; owners and admins see and revoke all of
// the organization's keys, members only their own. The key itself is returned once, at creation.
import {
  findApiKey,
  inTransaction,
  insertApiKey,
  isSsoEnforced,
  isUuid,
  listApiKeys as listKeys,
  newId,
  revokeApiKey as revokeKey,
  type ListedApiKey,
} from "@conveyor/db";
import { forbidden, notFound, ssoRequired } from "./infrastructure/errors";
import { generateApiKey } from "./infrastructure/api-key-secrets";
import { audit } from "./infrastructure/audit";
import type { Caller, ServiceDeps } from "./infrastructure/deps";

export type ApiKeyJson = {
  id: string;
  name: string;
  prefix: string;
  role: "member" | "worker";
  created_by: string;
  created_by_email: string;
  created_at: string;
  last_used_at: string | null;
};
export type CreatedApiKeyJson = { id: string; name: string; prefix: string; role: "member" | "worker"; key: string; created_at: string };

const seesAllKeys = (caller: Caller) => caller.role === "owner" || caller.role === "admin";

function toJson(key: ListedApiKey): ApiKeyJson {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    role: key.role,
    created_by: key.createdBy,
    created_by_email: key.createdByEmail,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
  };
}

/**
 * A new key; in an organization that requires single sign-on, only its owner may make one (403 sso_required). A key of
 * the `worker` role (docs/reference/lifecycle.md#your-own-workers) is made by owners and admins only.
 */
export async function createApiKey(
  input: { caller: Caller; name: string; role?: "member" | "worker" },
  { db, clock }: Pick<ServiceDeps, "db" | "clock">,
): Promise<CreatedApiKeyJson> {
  const { caller } = input;
  const keyRole = input.role ?? "member";
  if (keyRole === "worker" && !seesAllKeys(caller)) throw forbidden("Only owners and admins can create worker keys.");
  if (caller.role !== "owner" && (await isSsoEnforced(db.pool, caller.orgId))) throw ssoRequired();
  const { key, prefix, hash } = generateApiKey();
  const stored = await inTransaction(db.pool, async (tx) => {
    const stored = await insertApiKey(tx, {
      id: newId(),
      orgId: caller.orgId,
      createdBy: caller.userId,
      name: input.name,
      prefix,
      keyHash: hash,
      at: clock.now(),
      role: keyRole,
    });
    await audit(tx, caller, clock, {
      action: "api_key.create",
      target: { type: "api_key", id: stored.id, label: stored.name },
      changes: { name: { before: null, after: stored.name }, ...(keyRole === "worker" ? { role: { before: null, after: "worker" } } : {}) },
    });
    return stored;
  });
  return { id: stored.id, name: stored.name, prefix: stored.prefix, role: stored.role, key, created_at: stored.createdAt.toISOString() };
}

export async function listApiKeys(input: { caller: Caller }, { db }: Pick<ServiceDeps, "db">): Promise<ApiKeyJson[]> {
  const { caller } = input;
  const keys = await listKeys(db.pool, { orgId: caller.orgId, createdBy: seesAllKeys(caller) ? undefined : caller.userId });
  return keys.map(toJson);
}

/** Revokes a key of the caller's organization: 404 when absent, revoked or elsewhere; 403 for a member's colleague's key. */
export async function revokeApiKey(input: { caller: Caller; id: string }, { db, clock }: Pick<ServiceDeps, "db" | "clock">): Promise<void> {
  const { caller, id } = input;
  const key = isUuid(id) ? await findApiKey(db.pool, caller.orgId, id) : null;
  if (!key) throw notFound("API key");
  if (key.createdBy !== caller.userId && !seesAllKeys(caller)) throw forbidden("Members can only revoke their own API keys.");
  const revoked = await inTransaction(db.pool, async (tx) => {
    const revoked = await revokeKey(tx, { orgId: caller.orgId, id, at: clock.now() });
    if (revoked) await audit(tx, caller, clock, { action: "api_key.revoke", target: { type: "api_key", id, label: key.name } });
    return revoked;
  });
  if (!revoked) throw notFound("API key");
}
