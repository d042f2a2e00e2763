// Accounts: creating an organization with its owner (signup and the operator CLI), logging in, changing a password,
// and who a token belongs to.
import {
  changePassword as changeStoredPassword,
  createOrganizationWithOwner,
  findMembershipDetails,
  findUserByEmail,
  findUserById,
  inTransaction,
  listSsoEnforcedOrgs,
  listUserOrgs,
  newId,
  writeAuditEntry,
  type AuditRequest,
  type AuditWriter,
  type MembershipDetails,
} from "@conveyor/db";
import type { Role } from "@conveyor/contracts";
import Joi from "joi";
import type { Clock } from "../context";
import { AppError, notFound, ssoRequired, unauthorized, validationFailed } from "./infrastructure/errors";
import { audit } from "./infrastructure/audit";
import type { Caller, ServiceDeps } from "./infrastructure/deps";
import { hashPassword, passwordProblem, verifyAgainstNothing, verifyPassword } from "./infrastructure/passwords";
import { signToken } from "./infrastructure/tokens";

const emailSchema = Joi.string()
  .max(254)
  .email({ tlds: { allow: false } });

/** Emails are compared and stored trimmed and lower-cased, everywhere. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export type NewOrganization = { email: string; password: string; orgName: string };
export type CreatedOrganization = { user: { id: string; email: string }; org: { id: string; name: string } };

/** Creates a user, an organization and the owner membership. 409 `email_taken` when the email has an account. */
export async function createOrganization(
  input: NewOrganization,
  { db, config, clock }: Pick<ServiceDeps, "db" | "config" | "clock">,
): Promise<CreatedOrganization> {
  const email = normalizeEmail(input.email);
  const name = input.orgName.trim();
  const problem = passwordProblem(input.password);
  if (problem) throw validationFailed([{ path: "password", message: problem }]);
  if (!name) throw validationFailed([{ path: "org_name", message: "must not be empty" }]);
  // The routes check this already; the operator CLI relies on it here.
  if (emailSchema.validate(email).error) throw validationFailed([{ path: "email", message: "must be a valid email" }]);
  const user = { id: newId(), email, passwordHash: await hashPassword(input.password, config.BCRYPT_COST) };
  const org = { id: newId(), name };
  const created = await createOrganizationWithOwner(db.pool, { orgId: org.id, name, owner: user, at: clock.now() });
  if (!created) throw new AppError("email_taken", "An account with this email already exists; log in instead.");
  return { user: { id: user.id, email }, org };
}

export type SignupResult = { token: string; user: { id: string; email: string; role: "owner" }; org: { id: string; name: string } };

export async function signup(input: NewOrganization, deps: Pick<ServiceDeps, "db" | "config" | "clock">): Promise<SignupResult> {
  const { user, org } = await createOrganization(input, deps);
  const token = signToken({ userId: user.id, orgId: org.id }, deps.config, deps.clock.now());
  return { token, user: { ...user, role: "owner" }, org };
}

export type LoginInput = { email: string; password: string; orgId?: string; request: AuditRequest };
export type OrgChoice = { id: string; name: string; role: Role };
export type LoginResult = {
  token: string;
  user: { id: string; email: string; role: Role };
  orgs: OrgChoice[];
};

/** One refusal for an unknown email and a wrong password alike, byte for byte. */
const invalidLogin = () => unauthorized("The email or password is not correct.");

export type CheckedLogin = {
  user: { id: string; email: string; credentialVersion: number };
  /** The organization asked for, or the user's oldest membership. */
  scope: OrgChoice;
  orgs: OrgChoice[];
};

type LoginDeps = Pick<ServiceDeps, "db" | "config" | "clock" | "failedLogins">;

/**
 * Checks an email and password (counted against the account's failed-login budget) and picks the organization:
 * `orgId`, or the user's oldest membership where a password may be used. A wrong password is recorded in the audit
 * log of the organization asked for, or of each organization the account belongs to (an unknown email has none). In
 * an organization that requires single sign-on (docs/reference/tenants.md#audit-log) only the owner may use a password: 403 `sso_required`.
 */
export async function checkLogin(input: LoginInput, deps: LoginDeps): Promise<CheckedLogin> {
  const { db, config, failedLogins } = deps;
  const email = normalizeEmail(input.email);
  await failedLogins.attempt(email);
  const user = await findUserByEmail(db.pool, email);
  const valid = user ? await verifyPassword(input.password, user.passwordHash) : await verifyAgainstNothing(input.password, config.BCRYPT_COST);
  if (!user || !valid) {
    if (user) await recordFailedLogin(db.pool, { userId: user.id, email, orgId: input.orgId, request: input.request, reason: "wrong_password" }, deps);
    throw invalidLogin();
  }
  await failedLogins.succeeded(email);

  const orgs = (await listUserOrgs(db.pool, user.id)).map((o) => ({ id: o.orgId, name: o.orgName, role: o.role }));
  const enforced = new Set(
    await listSsoEnforcedOrgs(
      db.pool,
      orgs.map((o) => o.id),
    ),
  );
  const passwordAllowed = (org: OrgChoice) => org.role === "owner" || !enforced.has(org.id);
  const scope = input.orgId ? orgs.find((o) => o.id === input.orgId) : (orgs.find(passwordAllowed) ?? orgs[0]);
  if (!scope) {
    if (input.orgId) throw notFound("Organization");
    throw new AppError("forbidden", "This account does not belong to any organization; accept an invite first.");
  }
  if (!passwordAllowed(scope)) {
    await recordFailedLogin(db.pool, { userId: user.id, email, orgId: scope.id, request: input.request, reason: "sso_required" }, deps);
    throw ssoRequired();
  }
  // The version read with the password hash: a password change since then makes what is issued here useless.
  return { user: { id: user.id, email: user.email, credentialVersion: user.credentialVersion }, scope, orgs };
}

/**
 * session.login_failed, in the organization asked for if the account belongs to it, else in each of the account's
 * organizations. Nothing changed, so it is written on its own.
 */
async function recordFailedLogin(
  db: AuditWriter,
  attempt: { userId: string; email: string; orgId?: string; request: AuditRequest; reason: "wrong_password" | "sso_required" },
  deps: Pick<ServiceDeps, "db" | "clock">,
): Promise<void> {
  const orgs = (await listUserOrgs(deps.db.pool, attempt.userId)).map((o) => o.orgId);
  const where = attempt.orgId && orgs.includes(attempt.orgId) ? [attempt.orgId] : orgs;
  const at = deps.clock.now();
  for (const orgId of where) {
    await writeAuditEntry(db, {
      orgId,
      at,
      actor: { type: "user", id: attempt.userId, label: attempt.email },
      action: "session.login_failed",
      target: { type: "user", id: attempt.userId, label: attempt.email },
      request: attempt.request,
      details: { method: "password", reason: attempt.reason },
    });
  }
}

/** session.login: `user` signed in to `orgId` with a password, for a token or a console session. */
export function recordLogin(
  db: AuditWriter,
  login: { user: { id: string; email: string }; orgId: string; request: AuditRequest; credential: "token" | "session"; method: "password" | "sso" },
  clock: Clock,
): Promise<void> {
  return writeAuditEntry(db, {
    orgId: login.orgId,
    at: clock.now(),
    actor: { type: "user", id: login.user.id, label: login.user.email },
    action: login.method === "sso" ? "sso.login" : "session.login",
    target: { type: "user", id: login.user.id, label: login.user.email },
    request: login.request,
    details: { method: login.method, credential: login.credential },
  });
}

/** Checks the password and issues a token scoped to `orgId`, or to the user's oldest membership. */
export async function login(input: LoginInput, deps: LoginDeps): Promise<LoginResult> {
  const { user, scope, orgs } = await checkLogin(input, deps);
  // Issuing a token changes nothing in the database: the entry is all there is to write.
  await recordLogin(deps.db.pool, { user, orgId: scope.id, request: input.request, credential: "token", method: "password" }, deps.clock);
  return {
    token: signToken({ userId: user.id, orgId: scope.id, version: user.credentialVersion }, deps.config, deps.clock.now()),
    user: { id: user.id, email: user.email, role: scope.role },
    orgs,
  };
}

/**
 * Changes the caller's password after checking the current one (a wrong one counts as a failed login for the account,
 * and is 401). Every token and console session of the user issued before stops working, except the session that
 * asked (if it came with one), which stays logged in.
 */
export async function changePassword(
  input: { caller: Caller; currentPassword: string; newPassword: string },
  { db, config, failedLogins, clock }: Pick<ServiceDeps, "db" | "config" | "failedLogins" | "clock">,
): Promise<void> {
  const { caller } = input;
  const user = await findUserById(db.pool, caller.userId);
  if (!user) throw unauthorized("This account no longer exists.");
  await failedLogins.attempt(user.email);
  if (!(await verifyPassword(input.currentPassword, user.passwordHash))) throw unauthorized("The current password is not correct.");
  await failedLogins.succeeded(user.email);
  const problem = passwordProblem(input.newPassword);
  if (problem) throw validationFailed([{ path: "new_password", message: problem }]);
  const passwordHash = await hashPassword(input.newPassword, config.BCRYPT_COST);
  await inTransaction(db.pool, async (tx) => {
    await changeStoredPassword(tx, { userId: user.id, passwordHash, keepSessionId: caller.session?.id });
    await audit(tx, caller, clock, { action: "password.change", target: { type: "user", id: user.id, label: user.email } });
  });
}

/** GET /me: the caller's user, organization and role. */
export async function describeCaller({ caller }: { caller: Caller }, { db }: Pick<ServiceDeps, "db">): Promise<MembershipDetails> {
  const details = await findMembershipDetails(db.pool, caller.orgId, caller.userId);
  // The membership was read a moment ago by authenticate; it can only be gone if it was removed since.
  if (!details) throw unauthorized("This token's user is no longer a member of its organization.");
  return details;
}
