// Console sessions (docs/reference/tenants.md#the-console): logging in with a password gives a session whose token lives only in an HttpOnly
// cookie; the body tells the console who it is, where, and the CSRF token it must send with every change. Sessions
// last SESSION_TTL from the login (fixed: use does not extend them); logout, a password change and a removal from the
// organization end them.
import {
  deleteSession,
  deleteSessionByTokenHash,
  findJobOrgs,
  findMembershipDetails,
  inTransaction,
  insertSession,
  isSsoEnforced,
  isUuid,
  listSsoEnforcedOrgs,
  listUserOrgs,
  moveSession,
  newId,
} from "@conveyor/db";
import type pg from "pg";
import { durationMs } from "../env";
import { AppError, notFound, ssoRequired, unauthorized } from "./infrastructure/errors";
import { checkLogin, recordLogin, type LoginInput, type OrgChoice } from "./accounts";
import { audit } from "./infrastructure/audit";
import type { Caller, ServiceDeps } from "./infrastructure/deps";
import { csrfKey, csrfToken, generateSessionToken, hashSessionToken, looksLikeSessionToken } from "./infrastructure/session-secrets";

export type SessionJson = {
  user: { id: string; email: string };
  org: { id: string; name: string };
  role: OrgChoice["role"];
  orgs: OrgChoice[];
  csrf_token: string;
};

/**
 * What GET /auth/session and its siblings answer, for the caller's current organization. A session begun through an
 * organization's single sign-on stays in it, so it lists that organization only.
 */
async function sessionJson(userId: string, orgId: string, csrf: string, viaSso: boolean, { db }: Pick<ServiceDeps, "db">): Promise<SessionJson> {
  const [details, orgs] = await Promise.all([findMembershipDetails(db.pool, orgId, userId), listUserOrgs(db.pool, userId)]);
  // Read a moment ago by the authenticator (or the login); gone only if the member was removed since.
  if (!details) throw unauthorized("The console session has ended or expired; log in again.");
  const listed = viaSso ? orgs.filter((o) => o.orgId === orgId) : orgs;
  return { ...details, orgs: listed.map((o) => ({ id: o.orgId, name: o.orgName, role: o.role })), csrf_token: csrf };
}

export type StartedSession = { token: string; maxAgeSeconds: number; body: SessionJson };

/** A console session stored in `tx` (its token only in the returned value), and how to answer it once committed. */
export type NewConsoleSession = { finish(): Promise<StartedSession> };

/**
 * Stores a console session for a member whose identity is established (a password checked, or a provider's ID token
 * verified) in `tx`, the transaction that also records the login. The session of the cookie the browser sent
 * (`replacing`), if any, ends: the new cookie takes its place.
 */
export async function insertConsoleSession(
  tx: pg.PoolClient,
  input: { user: { id: string; credentialVersion: number }; orgId: string; replacing?: string; viaSso: boolean },
  deps: Pick<ServiceDeps, "db" | "config" | "clock">,
): Promise<NewConsoleSession> {
  const { user, orgId, viaSso } = input;
  const { token, hash } = generateSessionToken();
  const now = deps.clock.now();
  const ttlMs = durationMs(deps.config.SESSION_TTL);
  if (input.replacing !== undefined && looksLikeSessionToken(input.replacing)) await deleteSessionByTokenHash(tx, hashSessionToken(input.replacing));
  await insertSession(tx, {
    id: newId(),
    tokenHash: hash,
    userId: user.id,
    orgId,
    credentialVersion: user.credentialVersion,
    at: now,
    expiresAt: new Date(now.getTime() + ttlMs),
    viaSso,
  });
  return {
    finish: async () => ({
      token,
      maxAgeSeconds: ttlMs / 1000,
      body: await sessionJson(user.id, orgId, csrfToken(csrfKey(deps.config.JWT_SECRET), hash), viaSso, deps),
    }),
  };
}

/**
 * Logs in with a password (the same checks, refusals and failed-login limits as POST /auth/login) and starts a
 * session in `orgId` or the user's oldest organization. The token goes in the cookie; only its SHA-256 is stored.
 */
export async function startSession(
  input: LoginInput & { replacing?: string },
  deps: Pick<ServiceDeps, "db" | "config" | "clock" | "failedLogins">,
): Promise<StartedSession> {
  const { user, scope } = await checkLogin(input, deps);
  const session = await inTransaction(deps.db.pool, async (tx) => {
    const session = await insertConsoleSession(tx, { user, orgId: scope.id, replacing: input.replacing, viaSso: false }, deps);
    await recordLogin(tx, { user, orgId: scope.id, request: input.request, credential: "session", method: "password" }, deps.clock);
    return session;
  });
  return session.finish();
}

function sessionOf(caller: Caller): NonNullable<Caller["session"]> {
  // The session endpoints are declared with access "session": the authenticator only lets a session through.
  if (!caller.session) throw unauthorized("No console session: log in with POST /auth/session.");
  return caller.session;
}

/** GET /auth/session: who the session is, in which organization, and its CSRF token. */
export async function describeSession(input: { caller: Caller }, deps: Pick<ServiceDeps, "db">): Promise<SessionJson> {
  const { caller } = input;
  const session = sessionOf(caller);
  return sessionJson(caller.userId, caller.orgId, session.csrfToken, session.viaSso, deps);
}

/**
 * POST /auth/session/org: the session continues in another organization of its user (404 for any other). A session
 * begun through single sign-on stays in its organization (403: that provider vouched for this one only), and a
 * password session cannot enter an organization that requires single sign-on unless its user owns it.
 */
export async function switchSessionOrg(input: { caller: Caller; orgId: string }, deps: Pick<ServiceDeps, "db">): Promise<SessionJson> {
  const { caller } = input;
  const session = sessionOf(caller);
  const orgId = input.orgId.toLowerCase();
  if (session.viaSso && orgId !== caller.orgId) {
    throw new AppError("forbidden", "A session begun with single sign-on stays in its organization; log in again to use another one.");
  }
  const membership = (await listUserOrgs(deps.db.pool, caller.userId)).find((o) => o.orgId === orgId);
  if (!membership) throw notFound("Organization");
  if (!session.viaSso && membership.role !== "owner" && (await isSsoEnforced(deps.db.pool, orgId))) throw ssoRequired();
  if (!(await moveSession(deps.db.pool, { sessionId: session.id, userId: caller.userId, orgId }))) throw notFound("Organization");
  return sessionJson(caller.userId, orgId, session.csrfToken, session.viaSso, deps);
}

/**
 * GET /auth/session/job-orgs/{id}: the session's other organizations that hold a job with this id — those it could
 * switch to (none for a session begun with single sign-on; not one that requires single sign-on of a password
 * session, unless its user owns it) — so that the console offers "Look in …" only where the job is (issue 48 #10).
 */
export async function findJobElsewhere(input: { caller: Caller; id: string }, deps: Pick<ServiceDeps, "db">): Promise<OrgChoice[]> {
  const { caller } = input;
  if (sessionOf(caller).viaSso || !isUuid(input.id)) return [];
  const others = (await listUserOrgs(deps.db.pool, caller.userId)).filter((o) => o.orgId !== caller.orgId);
  const holding = new Set(
    await findJobOrgs(
      deps.db.pool,
      others.map((o) => o.orgId),
      input.id.toLowerCase(),
    ),
  );
  const found = others.filter((o) => holding.has(o.orgId));
  const enforced = new Set(
    await listSsoEnforcedOrgs(
      deps.db.pool,
      found.filter((o) => o.role !== "owner").map((o) => o.orgId),
    ),
  );
  return found.filter((o) => !enforced.has(o.orgId)).map((o) => ({ id: o.orgId, name: o.orgName, role: o.role }));
}

/** DELETE /auth/session: logout. */
export async function endSession(input: { caller: Caller }, deps: Pick<ServiceDeps, "db" | "clock">): Promise<void> {
  const { caller } = input;
  await inTransaction(deps.db.pool, async (tx) => {
    await deleteSession(tx, sessionOf(caller).id);
    await audit(tx, caller, deps.clock, { action: "session.logout", target: { type: "user", id: caller.userId } });
  });
}
