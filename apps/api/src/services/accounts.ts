// Accounts: creating an organization with its owner (signup and the operator CLI), logging in, and who a
// token belongs to.
import { createOrganizationWithOwner, findMembershipDetails, findUserByEmail, listUserOrgs, newId, type MembershipDetails } from "@conveyor/db";
import type { Role } from "@conveyor/contracts";
import Joi from "joi";
import { AppError, notFound, unauthorized, validationFailed } from "../http/errors";
import type { Caller, ServiceDeps } from "./deps";
import { hashPassword, passwordProblem, verifyAgainstNothing, verifyPassword } from "./passwords";
import { signToken } from "./tokens";

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
  const created = await createOrganizationWithOwner(db.prisma, { orgId: org.id, name, owner: user, at: clock.now() });
  if (!created) throw new AppError("email_taken", "An account with this email already exists; log in instead.");
  return { user: { id: user.id, email }, org };
}

export type SignupResult = { token: string; user: { id: string; email: string; role: "owner" }; org: { id: string; name: string } };

export async function signup(input: NewOrganization, deps: Pick<ServiceDeps, "db" | "config" | "clock">): Promise<SignupResult> {
  const { user, org } = await createOrganization(input, deps);
  const token = signToken({ userId: user.id, orgId: org.id }, deps.config, deps.clock.now());
  return { token, user: { ...user, role: "owner" }, org };
}

export type LoginInput = { email: string; password: string; orgId?: string };
export type LoginResult = {
  token: string;
  user: { id: string; email: string; role: Role };
  orgs: { id: string; name: string; role: Role }[];
};

/** One refusal for an unknown email and a wrong password alike, byte for byte. */
const invalidLogin = () => unauthorized("The email or password is not correct.");

/** Checks the password and issues a token scoped to `orgId`, or to the user's oldest membership. */
export async function login(
  input: LoginInput,
  { db, config, clock, failedLogins }: Pick<ServiceDeps, "db" | "config" | "clock" | "failedLogins">,
): Promise<LoginResult> {
  const email = normalizeEmail(input.email);
  await failedLogins.attempt(email);
  const user = await findUserByEmail(db.prisma, email);
  const valid = user ? await verifyPassword(input.password, user.passwordHash) : await verifyAgainstNothing(input.password, config.BCRYPT_COST);
  if (!user || !valid) throw invalidLogin();
  await failedLogins.succeeded(email);

  const orgs = await listUserOrgs(db.prisma, user.id);
  const scope = input.orgId ? orgs.find((o) => o.orgId === input.orgId) : orgs[0];
  if (!scope) {
    if (input.orgId) throw notFound("Organization");
    throw new AppError("forbidden", "This account does not belong to any organization; accept an invite first.");
  }
  return {
    token: signToken({ userId: user.id, orgId: scope.orgId }, config, clock.now()),
    user: { id: user.id, email: user.email, role: scope.role },
    orgs: orgs.map((o) => ({ id: o.orgId, name: o.orgName, role: o.role })),
  };
}

/** GET /me: the caller's user, organization and role. */
export async function describeCaller({ caller }: { caller: Caller }, { db }: Pick<ServiceDeps, "db">): Promise<MembershipDetails> {
  const details = await findMembershipDetails(db.prisma, caller.orgId, caller.userId);
  // The membership was read a moment ago by authenticate; it can only be gone if it was removed since.
  if (!details) throw unauthorized("This token's user is no longer a member of its organization.");
  return details;
}
