// Invites: one pending invite per email and organization, identified by the SHA-256 of its token, accepted
// at most once even when several requests race for it.
import type { Role } from "@conveyor/contracts";
import type { Db, PrismaClient } from "./client";

/** Generous bounds for the short transactions below, so a burst of requests queues instead of failing. */
const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 10_000 };

export type NewInvite = {
  id: string;
  orgId: string;
  email: string;
  role: Role;
  tokenHash: Buffer;
  invitedBy: string;
  expiresAt: Date;
  at: Date;
};

/** Stores an invite and supersedes any earlier pending invite for the same email and organization. */
export async function replaceInvite(prisma: PrismaClient, invite: NewInvite): Promise<void> {
  await prisma.$transaction(async (tx) => {
    // Two invites for the same address at the same instant must not both stay pending.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`invite:${invite.orgId}:${invite.email}`}, 0))`;
    await tx.invite.updateMany({
      where: { orgId: invite.orgId, email: invite.email, acceptedAt: null, supersededAt: null },
      data: { supersededAt: invite.at },
    });
    await tx.invite.create({
      data: {
        id: invite.id,
        orgId: invite.orgId,
        email: invite.email,
        role: invite.role,
        tokenHash: new Uint8Array(invite.tokenHash),
        invitedBy: invite.invitedBy,
        expiresAt: invite.expiresAt,
        createdAt: invite.at,
      },
    });
  }, TRANSACTION_OPTIONS);
}

export type InviteRecord = {
  id: string;
  orgId: string;
  orgName: string;
  email: string;
  role: Role;
  expiresAt: Date;
  acceptedAt: Date | null;
  supersededAt: Date | null;
};

/** The invite whose token has this SHA-256, whatever its state, or null. */
export async function findInviteByTokenHash(db: Db, tokenHash: Buffer): Promise<InviteRecord | null> {
  const row = await db.invite.findUnique({
    where: { tokenHash: new Uint8Array(tokenHash) },
    select: { id: true, orgId: true, email: true, role: true, expiresAt: true, acceptedAt: true, supersededAt: true, org: { select: { name: true } } },
  });
  if (!row) return null;
  const { org, ...invite } = row;
  return { ...invite, orgName: org.name };
}

export type InviteRedemption = {
  inviteId: string;
  orgId: string;
  email: string;
  role: Role;
  at: Date;
  /** The account joining: an existing one, or one to create. */
  user: { existingId: string } | { newId: string; passwordHash: string };
};

export type AcceptOutcome =
  | { kind: "accepted"; userId: string }
  /** Someone else accepted it first, or it expired or was superseded meanwhile. */
  | { kind: "unavailable" }
  /** An account with this email appeared since the caller looked. */
  | { kind: "email_taken" }
  | { kind: "already_member" };

class Rollback extends Error {
  constructor(readonly outcome: AcceptOutcome) {
    super(outcome.kind);
  }
}

/**
 * Claims the invite with a conditional UPDATE (only one of any number of concurrent callers sees its row
 * come back), creates the account if needed and adds the membership, all in one transaction.
 */
export async function redeemInvite(prisma: PrismaClient, input: InviteRedemption): Promise<AcceptOutcome> {
  try {
    return await prisma.$transaction(async (tx) => {
      const claimed = await tx.$queryRaw<{ id: string }[]>`
        UPDATE invites SET accepted_at = ${input.at}
         WHERE id = ${input.inviteId}::uuid AND accepted_at IS NULL AND superseded_at IS NULL AND expires_at > ${input.at}
        RETURNING id::text`;
      if (claimed.length === 0) throw new Rollback({ kind: "unavailable" });

      let userId: string;
      if ("existingId" in input.user) {
        userId = input.user.existingId;
      } else {
        const created = await tx.$queryRaw<{ id: string }[]>`
          INSERT INTO users (id, email, password_hash, created_at)
          VALUES (${input.user.newId}::uuid, ${input.email}, ${input.user.passwordHash}, ${input.at})
          ON CONFLICT (email) DO NOTHING
          RETURNING id::text`;
        if (created.length === 0) throw new Rollback({ kind: "email_taken" });
        userId = input.user.newId;
      }

      const joined = await tx.$queryRaw<{ user_id: string }[]>`
        INSERT INTO memberships (org_id, user_id, role, joined_at)
        VALUES (${input.orgId}::uuid, ${userId}::uuid, ${input.role}::role, ${input.at})
        ON CONFLICT (org_id, user_id) DO NOTHING
        RETURNING user_id::text`;
      if (joined.length === 0) throw new Rollback({ kind: "already_member" });
      return { kind: "accepted" as const, userId };
    }, TRANSACTION_OPTIONS);
  } catch (error) {
    if (error instanceof Rollback) return error.outcome;
    throw error;
  }
}

export type PendingInvite = { id: string; email: string; role: Role; invitedBy: string; expiresAt: Date; createdAt: Date };

/** Invites of `orgId` that can still be accepted at `now`, newest first. Never their tokens (only hashes are stored). */
export async function listPendingInvites(db: Db, query: { orgId: string; now: Date }): Promise<PendingInvite[]> {
  return db.invite.findMany({
    where: { orgId: query.orgId, acceptedAt: null, supersededAt: null, expiresAt: { gt: query.now } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: { id: true, email: true, role: true, invitedBy: true, expiresAt: true, createdAt: true },
  });
}

/**
 * Withdraws a pending invite of `orgId`: its link then answers like a replaced one (410 invite_expired). False when
 * there was no such pending invite (unknown, another organization's, accepted, replaced or expired).
 */
export async function withdrawInvite(db: Db, input: { orgId: string; id: string; at: Date }): Promise<boolean> {
  const { count } = await db.invite.updateMany({
    where: { id: input.id, orgId: input.orgId, acceptedAt: null, supersededAt: null, expiresAt: { gt: input.at } },
    data: { supersededAt: input.at },
  });
  return count > 0;
}
