// Invites (docs/reference/tenants.md#team-and-roles): single-use links valid for 72 hours. A new invite for the same email replaces the
// pending one; accepting creates the account or, for an existing account, requires its current password.
import type { Role } from "@conveyor/contracts";
import {
  findInviteByTokenHash,
  findUserByEmail,
  inTransaction,
  isMemberByEmail,
  newId,
  redeemInvite,
  replaceInvite,
  writeAuditEntry,
  type AuditRequest,
  type InviteRecord,
} from "@conveyor/db";
import { AppError, forbidden, unauthorized, validationFailed } from "./infrastructure/errors";
import { normalizeEmail } from "./accounts";
import { audit } from "./infrastructure/audit";
import type { Caller, ServiceDeps } from "./infrastructure/deps";
import { generateInviteToken, hashInviteToken, looksLikeInviteToken } from "./infrastructure/invite-tokens";
import { hashPassword, passwordProblem, verifyPassword } from "./infrastructure/passwords";
import { signToken } from "./infrastructure/tokens";

export const INVITE_TTL_MS = 72 * 60 * 60 * 1000;

export type InviteJson = { invite_url: string; email: string; expires_at: string };

/** Owners invite admins and members; admins invite members; nobody is made owner by invite. */
export async function createInvite(
  input: { caller: Caller; email: string; role: Role },
  { db, config, clock }: Pick<ServiceDeps, "db" | "config" | "clock">,
): Promise<InviteJson> {
  const { caller, role } = input;
  if (role === "owner")
    throw validationFailed(
      [{ path: "role", message: "cannot be owner: ownership is not granted by invite" }],
      "Ownership is not granted by invite; invite as admin or member.",
    );
  if (role === "admin" && caller.role !== "owner") throw forbidden("Only the owner can invite admins.");
  const email = normalizeEmail(input.email);
  if (await isMemberByEmail(db.pool, caller.orgId, email)) throw new AppError("already_member", "This email already belongs to a member of the organization.");

  const now = clock.now();
  const { token, hash } = generateInviteToken();
  const expiresAt = new Date(now.getTime() + INVITE_TTL_MS);
  const id = newId();
  await inTransaction(db.pool, async (tx) => {
    await replaceInvite(tx, { id, orgId: caller.orgId, email, role, tokenHash: hash, invitedBy: caller.userId, expiresAt, at: now });
    await audit(tx, caller, clock, {
      action: "member.invite",
      target: { type: "invite", id, label: email },
      changes: { email: { before: null, after: email }, role: { before: null, after: role } },
      details: { expires_at: expiresAt.toISOString() },
    });
  });
  return { invite_url: `${config.PUBLIC_URL}/accept-invite?token=${token}`, email, expires_at: expiresAt.toISOString() };
}

/** The refusal for a token that cannot be used now, or null when it can. */
function refusal(invite: InviteRecord | null, now: Date): AppError | null {
  if (!invite) return new AppError("invite_not_found", "This invite link is not valid. Ask for a new invite.");
  if (invite.acceptedAt) return new AppError("invite_used", "This invite has already been used. Log in instead, or ask for a new invite.");
  if (invite.supersededAt) return new AppError("invite_expired", "This invite was replaced by a newer one or withdrawn. Use the latest link you received.");
  if (invite.expiresAt.getTime() <= now.getTime())
    return new AppError("invite_expired", "This invite has expired (invites are valid for 72 hours). Ask for a new invite.");
  return null;
}

async function usableInvite(token: string, { db, clock }: Pick<ServiceDeps, "db" | "clock">): Promise<InviteRecord> {
  const invite = looksLikeInviteToken(token) ? await findInviteByTokenHash(db.pool, hashInviteToken(token)) : null;
  const refused = refusal(invite, clock.now());
  if (refused) throw refused;
  return invite!;
}

export type InviteInfoJson = { email: string; org_name: string; role: Role; expires_at: string };

export async function inspectInvite(input: { token: string }, deps: Pick<ServiceDeps, "db" | "clock">): Promise<InviteInfoJson> {
  const invite = await usableInvite(input.token, deps);
  return { email: invite.email, org_name: invite.orgName, role: invite.role, expires_at: invite.expiresAt.toISOString() };
}

export type AcceptedInviteJson = { token: string; user: { id: string; email: string; role: Role }; org: { id: string; name: string } };

/**
 * Accepts of one token in flight in this process, by token: each waits for the one before it. An accept for an existing
 * account consumes a point of that account's failed-password limit before it checks the password (so parallel guesses
 * cannot pass the limit); without this, a burst of accepts of one link would spend the points and be answered 429 while
 * the first was still redeeming the invite, where the honest answer is 410 invite_used. Across API replicas a burst can
 * still meet the limit (the database keeps exactly one accept winning either way).
 */
const acceptsInFlight = new Map<string, Promise<unknown>>();

/** Exactly one of any number of concurrent accepts of the same token succeeds; the others get 410. */
export async function acceptInvite(
  input: { token: string; password: string; request: AuditRequest },
  deps: Pick<ServiceDeps, "db" | "config" | "clock" | "failedLogins">,
): Promise<AcceptedInviteJson> {
  // Keyed by the token's hash, like everything else that remembers a token.
  const key = looksLikeInviteToken(input.token) ? hashInviteToken(input.token).toString("hex") : input.token;
  const run = (acceptsInFlight.get(key) ?? Promise.resolve()).catch(() => {}).then(() => acceptOnce(input, deps));
  acceptsInFlight.set(key, run);
  try {
    return await run;
  } finally {
    if (acceptsInFlight.get(key) === run) acceptsInFlight.delete(key);
  }
}

async function acceptOnce(
  input: { token: string; password: string; request: AuditRequest },
  deps: Pick<ServiceDeps, "db" | "config" | "clock" | "failedLogins">,
): Promise<AcceptedInviteJson> {
  const { db, config, clock } = deps;
  const invite = await usableInvite(input.token, deps);
  const tokenHash = hashInviteToken(input.token);
  // Twice at most: if an account with this email appears while we hash the new one's password, the second
  // round treats it as the existing account it now is.
  for (let round = 0; round < 2; round++) {
    const existing = await findUserByEmail(db.pool, invite.email);
    let user: { existingId: string } | { newId: string; passwordHash: string };
    // Tokens carry the credential version read with the password that was checked (a new account starts at 0).
    let credentialVersion = 0;
    if (existing) {
      await deps.failedLogins.attempt(invite.email);
      if (!(await verifyPassword(input.password, existing.passwordHash))) {
        // The account may be the one a concurrent accept just created with this very invite: then the
        // honest answer is that the invite is spent, and the password says nothing.
        const spent = refusal(await findInviteByTokenHash(db.pool, tokenHash), clock.now());
        if (spent) throw spent;
        throw unauthorized("This email already has an account: enter that account's current password to accept the invite.");
      }
      await deps.failedLogins.succeeded(invite.email);
      user = { existingId: existing.id };
      credentialVersion = existing.credentialVersion;
    } else {
      const problem = passwordProblem(input.password);
      if (problem) throw validationFailed([{ path: "password", message: problem }]);
      user = { newId: newId(), passwordHash: await hashPassword(input.password, config.BCRYPT_COST) };
    }

    const now = clock.now();
    const outcome = await redeemInvite(
      db.pool,
      { inviteId: invite.id, orgId: invite.orgId, email: invite.email, role: invite.role, at: now, user },
      (tx, userId) =>
        writeAuditEntry(tx, {
          orgId: invite.orgId,
          at: now,
          actor: { type: "user", id: userId, label: invite.email },
          action: "invite.accept",
          target: { type: "invite", id: invite.id, label: invite.email },
          request: input.request,
          changes: { role: { before: null, after: invite.role } },
          details: { account: "existingId" in user ? "existing" : "created" },
        }),
    );
    switch (outcome.kind) {
      case "accepted":
        return {
          token: signToken({ userId: outcome.userId, orgId: invite.orgId, version: credentialVersion }, config, now),
          user: { id: outcome.userId, email: invite.email, role: invite.role },
          org: { id: invite.orgId, name: invite.orgName },
        };
      case "unavailable":
        throw refusal(await findInviteByTokenHash(db.pool, tokenHash), now) ?? new AppError("invite_used", "This invite has already been used.");
      case "already_member":
        throw new AppError("already_member", "This account is already a member of the organization. Log in instead.");
      case "email_taken":
        continue;
    }
  }
  throw new AppError("email_taken", "An account with this email was created at the same moment; try again.");
}
