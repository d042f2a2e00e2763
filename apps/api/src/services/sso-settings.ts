// An organization's single sign-on settings (docs/reference/tenants.md#audit-log), owners only (the routes say so). Saving checks the provider
// first — its discovery document and JWKS, through the SSRF guard — and answers 400 naming what failed; the client
// secret is stored sealed under WEBHOOK_SECRETS_KEY (bound to the organization) and never shown again.
import { webhookSecretsKey } from "@conveyor/config";
import { urlRefusal } from "@conveyor/contracts";
import { deleteOrgSso, findOrgSso, inTransaction, openSecret, saveOrgSso, sealSecret, type OrgSsoRecord } from "@conveyor/db";
import { AppError, notFound, validationFailed } from "./infrastructure/errors";
import { audit, changedFields } from "./infrastructure/audit";
import type { Caller, ServiceDeps } from "./infrastructure/deps";
import { checkJwks, discoverProvider, providerPolicy } from "./infrastructure/oidc-client";

export type SsoInput = {
  issuer: string;
  client_id: string;
  /** Required the first time; left out, the stored one is kept. */
  client_secret?: string;
  email_domains: string[];
  default_role: "member" | "admin";
  enforce: boolean;
};

export type SsoSettingsJson = {
  issuer: string;
  client_id: string;
  client_secret_set: true;
  email_domains: string[];
  default_role: "member" | "admin";
  enforce: boolean;
  redirect_uri: string;
  updated_at: string;
};

type Deps = Pick<ServiceDeps, "db" | "config" | "clock">;

/** The callback every provider sends its users back to; owners register it as the client's redirect URI. */
export const ssoRedirectUri = (config: Pick<ServiceDeps["config"], "PUBLIC_URL">) => `${config.PUBLIC_URL}/auth/sso/callback`;

/** What the client secret is sealed for: the organization, under a name of its own (never a webhook endpoint's id). */
export const ssoSecretBinding = (orgId: string) => `sso:${orgId}`;

function toJson(record: OrgSsoRecord, config: Deps["config"]): SsoSettingsJson {
  return {
    issuer: record.issuer,
    client_id: record.clientId,
    client_secret_set: true,
    email_domains: record.emailDomains,
    default_role: record.defaultRole === "admin" ? "admin" : "member",
    enforce: record.enforce,
    redirect_uri: ssoRedirectUri(config),
    updated_at: record.updatedAt.toISOString(),
  };
}

/** What the audit log records of the settings: everything but the secret (an edit of it is noted, not shown). */
const auditedFields = (record: Pick<OrgSsoRecord, "issuer" | "clientId" | "emailDomains" | "defaultRole" | "enforce">) => ({
  issuer: record.issuer,
  client_id: record.clientId,
  email_domains: record.emailDomains,
  default_role: record.defaultRole,
  enforce: record.enforce,
});

export async function getSsoSettings(input: { caller: Caller }, { db, config }: Deps): Promise<SsoSettingsJson> {
  const record = await findOrgSso(db.pool, input.caller.orgId);
  if (!record) throw notFound("Single sign-on settings");
  return toJson(record, config);
}

/** Why the provider at `issuer` cannot be used, as 400 details; nothing when it can. Makes the requests discovery needs. */
async function checkProvider(input: SsoInput & { client_secret: string }, config: Deps["config"]): Promise<Record<string, unknown>> {
  const refusal = urlRefusal(input.issuer, providerPolicy(config));
  if (refusal) {
    const hint = input.issuer.startsWith("http:") && !config.SSO_ALLOW_HTTP ? " (http is for development: SSO_ALLOW_HTTP)" : "";
    throw validationFailed([{ path: "issuer", message: `${refusal}${hint}` }]);
  }
  let provider;
  try {
    provider = await discoverProvider(input.issuer, { id: input.client_id, secret: input.client_secret }, config);
  } catch (error) {
    const where = `${input.issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
    throw validationFailed(
      [{ path: "issuer", message: `discovery failed: ${where}: ${oneLine(error)}` }],
      `The provider's discovery document could not be used: ${oneLine(error)}.`,
    );
  }
  const metadata = provider.serverMetadata();
  const missing = (["authorization_endpoint", "token_endpoint", "jwks_uri"] as const).filter((field) => !metadata[field]);
  if (missing.length) throw validationFailed([{ path: "issuer", message: `discovery document has no ${missing.join(", ")}` }]);
  if (metadata.response_types_supported && !metadata.response_types_supported.includes("code")) {
    throw validationFailed([{ path: "issuer", message: "provider does not support the authorization code flow (response_types_supported lacks code)" }]);
  }
  if (metadata.code_challenge_methods_supported && !metadata.code_challenge_methods_supported.includes("S256")) {
    throw validationFailed([{ path: "issuer", message: "provider does not support PKCE with S256 (code_challenge_methods_supported)" }]);
  }
  for (const field of ["authorization_endpoint", "token_endpoint", "userinfo_endpoint"] as const) {
    const url = metadata[field];
    const problem = url === undefined ? null : urlRefusal(url, providerPolicy(config));
    if (problem) throw validationFailed([{ path: "issuer", message: `${field} ${problem}` }]);
  }
  try {
    await checkJwks(provider);
  } catch (error) {
    throw validationFailed(
      [{ path: "issuer", message: `JWKS failed: ${oneLine(error)}` }],
      `The provider's signing keys could not be used: ${oneLine(error)}.`,
    );
  }
  return { ...metadata };
}

/** An error and its causes (openid-client wraps the network's error: "something went wrong" ← ECONNREFUSED) on one line. */
function oneLine(error: unknown): string {
  const messages: string[] = [];
  for (let e = error as { message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.message === "string" && e.message && !messages.includes(e.message)) messages.push(e.message);
  }
  // openid-client's own wrapper says only "something went wrong"; what went wrong is its cause.
  const said = messages.length > 1 ? messages.filter((message) => !/^something went wrong$/i.test(message)) : messages;
  return (said.join(": ") || String(error)).replace(/\s+/g, " ").replace(/\.$/, "").trim().slice(0, 300);
}

/**
 * Creates or replaces the organization's provider after checking it. 409 `sso_domain_taken` when another organization
 * signs in one of the domains.
 */
export async function putSsoSettings(input: { caller: Caller; settings: SsoInput }, { db, config, clock }: Deps): Promise<SsoSettingsJson> {
  const { caller } = input;
  const settings = { ...input.settings, email_domains: [...new Set(input.settings.email_domains)].sort() };
  const stored = await findOrgSso(db.pool, caller.orgId);
  const key = webhookSecretsKey(config);
  const secret = settings.client_secret ?? (stored ? openStoredSecret(stored, key) : undefined);
  if (secret === undefined) throw validationFailed([{ path: "client_secret", message: "is required the first time single sign-on is set up" }]);
  const metadata = await checkProvider({ ...settings, client_secret: secret }, config);
  const at = clock.now();
  const record = await inTransaction(db.pool, async (tx) => {
    const before = await findOrgSso(tx, caller.orgId, { forUpdate: true });
    const outcome = await saveOrgSso(tx, {
      orgId: caller.orgId,
      issuer: settings.issuer,
      clientId: settings.client_id,
      sealedSecret: sealSecret(key, secret, ssoSecretBinding(caller.orgId)),
      emailDomains: settings.email_domains,
      defaultRole: settings.default_role,
      enforce: settings.enforce,
      metadata,
      updatedBy: caller.userId,
      at,
    });
    if (outcome.kind === "domain_taken") {
      throw new AppError("sso_domain_taken", `Another organization signs in ${outcome.domains.join(", ")} with its own provider.`, [
        { path: "email_domains", message: `${outcome.domains.join(", ")} belongs to another organization` },
      ]);
    }
    const after = (await findOrgSso(tx, caller.orgId))!;
    await audit(tx, caller, clock, {
      action: "sso.update",
      target: { type: "organization", id: caller.orgId },
      changes: changedFields(before ? auditedFields(before) : {}, auditedFields(after)),
      details: settings.client_secret === undefined ? null : { client_secret_changed: true },
    });
    return after;
  });
  return toJson(record, config);
}

export async function deleteSsoSettings(input: { caller: Caller }, { db, clock }: Pick<ServiceDeps, "db" | "clock">): Promise<void> {
  const { caller } = input;
  const deleted = await inTransaction(db.pool, async (tx) => {
    const before = await deleteOrgSso(tx, caller.orgId);
    if (before)
      await audit(tx, caller, clock, {
        action: "sso.delete",
        target: { type: "organization", id: caller.orgId },
        changes: changedFields(auditedFields(before), {}),
      });
    return before;
  });
  if (!deleted) throw notFound("Single sign-on settings");
}

/** The stored client secret, opened for a request to the provider. */
export function openStoredSecret(record: Pick<OrgSsoRecord, "orgId" | "sealedSecret">, key: Buffer): string {
  return openSecret(key, record.sealedSecret, ssoSecretBinding(record.orgId));
}
