// Console sessions (SPEC §11): logging in with a password gives a session whose token lives only in an HttpOnly
// cookie; the body tells the console who it is, where, and the CSRF token it must send with every change. Sessions
// last SESSION_TTL from the login (fixed: use does not extend them); logout, a password change and a removal from the
// organization end them.
import { deleteSession, deleteSessionByTokenHash, findMembershipDetails, insertSession, listUserOrgs, moveSession, newId } from "@conveyor/db";
import { durationMs } from "../env";
import { notFound, unauthorized } from "../http/errors";
import { checkLogin, type LoginInput, type OrgChoice } from "./accounts";
import type { Caller, ServiceDeps } from "./deps";
import { csrfKey, csrfToken, generateSessionToken, hashSessionToken, looksLikeSessionToken } from "./session-secrets";

export type SessionJson = {
  user: { id: string; email: string };
  org: { id: string; name: string };
  role: OrgChoice["role"];
  orgs: OrgChoice[];
  csrf_token: string;
};

/** What GET /auth/session and its siblings answer, for the caller's current organization. */
async function sessionJson(userId: string, orgId: string, csrf: string, { db }: Pick<ServiceDeps, "db">): Promise<SessionJson> {
  const [details, orgs] = await Promise.all([findMembershipDetails(db.prisma, orgId, userId), listUserOrgs(db.prisma, userId)]);
  // Read a moment ago by the authenticator (or the login); gone only if the member was removed since.
  if (!details) throw unauthorized("The console session has ended or expired; log in again.");
  return { ...details, orgs: orgs.map((o) => ({ id: o.orgId, name: o.orgName, role: o.role })), csrf_token: csrf };
}

export type StartedSession = { token: string; maxAgeSeconds: number; body: SessionJson };

/**
 * Logs in with a password (the same checks, refusals and failed-login limits as POST /auth/login) and starts a
 * session in `orgId` or the user's oldest organization. The token goes in the cookie; only its SHA-256 is stored.
 * The session of the cookie the browser sent (`replacing`), if any, ends: the new cookie takes its place.
 */
export async function startSession(
  input: LoginInput & { replacing?: string },
  deps: Pick<ServiceDeps, "db" | "config" | "clock" | "failedLogins">,
): Promise<StartedSession> {
  const { user, scope } = await checkLogin(input, deps);
  if (input.replacing !== undefined && looksLikeSessionToken(input.replacing)) await deleteSessionByTokenHash(deps.db.pool, hashSessionToken(input.replacing));
  const { token, hash } = generateSessionToken();
  const now = deps.clock.now();
  const ttlMs = durationMs(deps.config.SESSION_TTL);
  await insertSession(deps.db.pool, {
    id: newId(),
    tokenHash: hash,
    userId: user.id,
    orgId: scope.id,
    credentialVersion: user.credentialVersion,
    at: now,
    expiresAt: new Date(now.getTime() + ttlMs),
  });
  const body = await sessionJson(user.id, scope.id, csrfToken(csrfKey(deps.config.JWT_SECRET), hash), deps);
  return { token, maxAgeSeconds: ttlMs / 1000, body };
}

function sessionOf(caller: Caller): NonNullable<Caller["session"]> {
  // The session endpoints are declared with access "session": the authenticator only lets a session through.
  if (!caller.session) throw unauthorized("No console session: log in with POST /auth/session.");
  return caller.session;
}

/** GET /auth/session: who the session is, in which organization, and its CSRF token. */
export async function describeSession(input: { caller: Caller }, deps: Pick<ServiceDeps, "db">): Promise<SessionJson> {
  const { caller } = input;
  return sessionJson(caller.userId, caller.orgId, sessionOf(caller).csrfToken, deps);
}

/** POST /auth/session/org: the session continues in another organization of its user (404 for any other). */
export async function switchSessionOrg(input: { caller: Caller; orgId: string }, deps: Pick<ServiceDeps, "db">): Promise<SessionJson> {
  const { caller } = input;
  const session = sessionOf(caller);
  const orgId = input.orgId.toLowerCase();
  if (!(await moveSession(deps.db.pool, { sessionId: session.id, userId: caller.userId, orgId }))) throw notFound("Organization");
  return sessionJson(caller.userId, orgId, session.csrfToken, deps);
}

/** DELETE /auth/session: logout. */
export async function endSession(input: { caller: Caller }, deps: Pick<ServiceDeps, "db">): Promise<void> {
  await deleteSession(deps.db.pool, sessionOf(input.caller).id);
}
