// Signing in through an organization's OpenID provider (docs/reference/tenants.md#audit-log): the authorization code flow with PKCE, state and
// nonce. The start stores the flow's secrets under the SHA-256 of a random token the browser keeps in a cookie; the
// callback takes them once (a replayed callback finds nothing), lets openid-client exchange the code and verify the
// ID token, checks the e-mail, makes the member on a first sign-in, and starts a console session in that organization.
import { createHash, randomBytes } from "node:crypto";
import { webhookSecretsKey } from "@conveyor/config";
import type { Role } from "@conveyor/contracts";
import {
  ensureSsoMember,
  findOrgSso,
  findSsoOrgByDomain,
  findUserByEmail,
  inTransaction,
  insertSsoLogin,
  isUuid,
  newId,
  takeSsoLogin,
  writeAuditEntry,
  type AuditRequest,
  type OrgSsoRecord,
} from "@conveyor/db";
import { AppError, validationFailed } from "./infrastructure/errors";
import { normalizeEmail } from "./accounts";
import type { ServiceDeps } from "./infrastructure/deps";
import { oidc, storedProvider } from "./infrastructure/oidc-client";
import { hashPassword } from "./infrastructure/passwords";
import { insertConsoleSession, type StartedSession } from "./sessions";
import { openStoredSecret, ssoRedirectUri } from "./sso-settings";

/** How long a sign-in may stay at the provider. */
export const SSO_LOGIN_TTL_MS = 10 * 60 * 1000;
/** Where a sign-in lands unless it asked for another console page. */
const DEFAULT_RETURN = "/overview";

type Deps = Pick<ServiceDeps, "db" | "config" | "clock" | "logger">;

/** Why a sign-in was refused, as the audit log and the login page name it. */
export type SsoFailure = "no_sign_in" | "provider_error" | "token_rejected" | "email_missing" | "email_unverified" | "domain_not_allowed" | "not_configured";

export class SsoRefusal extends AppError {
  constructor(
    readonly reason: SsoFailure,
    message: string,
  ) {
    super(reason === "not_configured" ? "sso_not_configured" : "sso_failed", message);
  }
}

/**
 * A page of the console to land on: a path on this origin, never another site (`//host`, `/\\host`, a scheme), and
 * not the login page itself. Anything else is a 400 — the sign-in does not start.
 */
export function consoleReturnPath(value: string | undefined): string {
  if (value === undefined || value === "") return DEFAULT_RETURN;
  const safe = /^\/(?![/\\])[^\s\\]*$/.test(value) && value.length <= 512 && new URL(value, "http://console.invalid").origin === "http://console.invalid";
  if (!safe) throw validationFailed([{ path: "query.return_to", message: "must be a path inside the console, such as /jobs" }]);
  return value.startsWith("/login") ? DEFAULT_RETURN : value;
}

const flowHash = (token: string) => createHash("sha256").update(token, "utf8").digest();

/** The organization a sign-in is for: the one whose provider signs in the e-mail's domain, or the one named. */
async function ssoOrgFor(input: { email?: string; orgId?: string }, { db }: Pick<Deps, "db">): Promise<OrgSsoRecord> {
  let orgId: string | null = null;
  if (input.email !== undefined) orgId = await findSsoOrgByDomain(db.pool, normalizeEmail(input.email).split("@").pop()!);
  else if (input.orgId !== undefined && isUuid(input.orgId)) orgId = input.orgId.toLowerCase();
  const record = orgId ? await findOrgSso(db.pool, orgId) : null;
  if (!record) {
    throw new SsoRefusal(
      "not_configured",
      input.email !== undefined
        ? "No organization signs in this e-mail's domain with single sign-on; log in with your password."
        : "This organization has no single sign-on.",
    );
  }
  return record;
}

const clientOf = (record: OrgSsoRecord, config: Deps["config"]) => ({ id: record.clientId, secret: openStoredSecret(record, webhookSecretsKey(config)) });

/**
 * GET /auth/sso/start: where to send the browser (the provider's authorization endpoint) and the flow token for its
 * cookie. `returnTo` has been checked by consoleReturnPath.
 */
export async function startSsoLogin(
  input: { email?: string; orgId?: string; returnTo: string },
  deps: Deps,
): Promise<{ location: string; flowToken: string; maxAgeSeconds: number }> {
  const record = await ssoOrgFor(input, deps);
  const provider = storedProvider(record.metadata, clientOf(record, deps.config), deps.config);
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const flowToken = randomBytes(32).toString("base64url");
  const now = deps.clock.now();
  await insertSsoLogin(deps.db.pool, {
    id: newId(),
    flowHash: flowHash(flowToken),
    orgId: record.orgId,
    state,
    nonce,
    codeVerifier,
    returnTo: input.returnTo,
    at: now,
    expiresAt: new Date(now.getTime() + SSO_LOGIN_TTL_MS),
  });
  const location = oidc.buildAuthorizationUrl(provider, {
    redirect_uri: ssoRedirectUri(deps.config),
    scope: "openid email profile",
    response_type: "code",
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
    state,
    nonce,
    ...(input.email !== undefined ? { login_hint: normalizeEmail(input.email) } : {}),
  });
  return { location: location.href, flowToken, maxAgeSeconds: SSO_LOGIN_TTL_MS / 1000 };
}

/** The verified e-mail of the signed-in person: from the ID token, or from the userinfo endpoint if it is not there. */
async function verifiedEmail(
  provider: oidc.Configuration,
  tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>,
): Promise<{ email: string; verified: boolean }> {
  const claims = tokens.claims();
  if (!claims) throw new SsoRefusal("token_rejected", "The provider sent no ID token.");
  let email = typeof claims.email === "string" ? claims.email : undefined;
  let verified = claims.email_verified;
  if (email === undefined || verified === undefined) {
    const info = await oidc.fetchUserInfo(provider, tokens.access_token, claims.sub);
    email ??= typeof info.email === "string" ? info.email : undefined;
    verified ??= info.email_verified;
  }
  if (email === undefined) throw new SsoRefusal("email_missing", "The provider did not say which e-mail address you signed in with.");
  return { email: normalizeEmail(email), verified: verified === true };
}

/**
 * GET /auth/sso/callback: the provider sent the browser back. Takes this browser's sign-in (once), has openid-client
 * check the response and the ID token, and opens a console session for the member (made now, with the provider's
 * default role, on a first sign-in). Every refusal is an SsoRefusal; those that reach an organization are recorded
 * in its audit log as session.login_failed.
 */
export async function finishSsoLogin(
  input: { flowToken: string | undefined; callbackUrl: URL; request: AuditRequest; replacing?: string },
  deps: Deps,
): Promise<{ session: StartedSession; returnTo: string; orgId: string }> {
  const { db, config, clock } = deps;
  const login = input.flowToken ? await takeSsoLogin(db.pool, flowHash(input.flowToken), clock.now()) : null;
  if (!login) throw new SsoRefusal("no_sign_in", "This sign-in has expired or was already used; start again from the login page.");
  const record = await findOrgSso(db.pool, login.orgId);
  if (!record) throw new SsoRefusal("not_configured", "This organization no longer has single sign-on.");
  let email: string | undefined;
  try {
    const provider = storedProvider(record.metadata, clientOf(record, config), config);
    let tokens;
    try {
      tokens = await oidc.authorizationCodeGrant(provider, input.callbackUrl, {
        pkceCodeVerifier: login.codeVerifier,
        expectedState: login.state,
        expectedNonce: login.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      deps.logger.warn("single sign-on refused by the checks of the provider's response", { orgId: record.orgId, reason: (error as Error).message });
      const providerSaid = error instanceof oidc.AuthorizationResponseError;
      throw new SsoRefusal(
        providerSaid ? "provider_error" : "token_rejected",
        providerSaid ? "The identity provider did not sign you in." : "The identity provider's answer could not be verified.",
      );
    }
    const found = await verifiedEmail(provider, tokens);
    email = found.email;
    if (!found.verified) throw new SsoRefusal("email_unverified", "The identity provider has not verified this e-mail address.");
    const domain = email.split("@").pop()!;
    if (!record.emailDomains.includes(domain)) throw new SsoRefusal("domain_not_allowed", `This organization does not sign in ${domain} addresses.`);
    return await openSsoSession({ record, email, request: input.request, replacing: input.replacing, returnTo: login.returnTo }, deps);
  } catch (error) {
    if (error instanceof SsoRefusal) {
      await writeAuditEntry(db.pool, {
        orgId: record.orgId,
        at: clock.now(),
        actor: { type: "user", id: null, label: email ?? null },
        action: "session.login_failed",
        target: { type: "organization", id: record.orgId },
        request: input.request,
        details: { method: "sso", reason: error.reason },
      });
    }
    throw error;
  }
}

/** The member's session, with the membership a first sign-in makes, in one transaction with its audit entry. */
async function openSsoSession(
  input: { record: OrgSsoRecord; email: string; request: AuditRequest; replacing?: string; returnTo: string },
  deps: Deps,
): Promise<{ session: StartedSession; returnTo: string; orgId: string }> {
  const { record, email } = input;
  const { db, config, clock } = deps;
  // An account made here has a password nobody knows: it signs in through the provider (docs/decisions/2026-11-25-audit-log-single-sign-issue-26.md).
  const newUser = (await findUserByEmail(db.pool, email))
    ? null
    : { id: newId(), passwordHash: await hashPassword(randomBytes(32).toString("base64"), config.BCRYPT_COST) };
  const defaultRole: Role = record.defaultRole === "admin" ? "admin" : "member";
  const session = await inTransaction(db.pool, async (tx) => {
    const member = await ensureSsoMember(tx, { orgId: record.orgId, email, defaultRole, newUser, at: clock.now() });
    const session = await insertConsoleSession(
      tx,
      { user: { id: member.userId, credentialVersion: member.credentialVersion }, orgId: record.orgId, replacing: input.replacing, viaSso: true },
      deps,
    );
    await writeAuditEntry(tx, {
      orgId: record.orgId,
      at: clock.now(),
      actor: { type: "user", id: member.userId, label: email },
      action: "sso.login",
      target: { type: "user", id: member.userId, label: email },
      request: input.request,
      changes: member.joined ? { role: { before: null, after: member.role } } : null,
      details: { method: "sso", credential: "session", ...(member.joined ? { joined: true } : {}), ...(member.createdUser ? { account_created: true } : {}) },
    });
    return session;
  });
  return { session: await session.finish(), returnTo: input.returnTo, orgId: record.orgId };
}
