// Invites: one pending invite per email and organization, identified by the SHA-256 of its token, accepted
// at most once even when several requests race for it.
import type { Role } from "@conveyor/contracts";
import type pg from "pg";
import type { Db } from "./client";
import { inTransaction } from "./transaction";

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

/**
 * Stores an invite and supersedes any earlier pending invite for the same email and organization. `db` must be a
 * transaction (the lock that keeps two simultaneous invites for one address from both staying pending is held to its
 * end).
 */
export async function replaceInvite(db: pg.PoolClient, invite: NewInvite): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`invite:${invite.orgId}:${invite.email}`]);
  await db.query(
    `WITH superseded AS (
       UPDATE invites SET superseded_at = $8 WHERE org_id = $2 AND email = $3 AND accepted_at IS NULL AND superseded_at IS NULL
     )
     INSERT INTO invites (id, org_id, email, role, token_hash, invited_by, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [invite.id, invite.orgId, invite.email, invite.role, invite.tokenHash, invite.invitedBy, invite.expiresAt, invite.at],
  );
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
 * come back), creates the account if needed and adds the membership, all in one transaction — in which
 * `onAccepted` runs too (to write the audit entry), before it commits.
 */
export async function redeemInvite(
  pool: pg.Pool,
  input: InviteRedemption,
  onAccepted?: (tx: pg.PoolClient, userId: string) => Promise<void>,
): Promise<AcceptOutcome> {
  try {
    return await inTransaction(pool, async (tx) => {
      const claimed = await tx.query(
        `UPDATE invites SET accepted_at = $2
          WHERE id = $1 AND accepted_at IS NULL AND superseded_at IS NULL AND expires_at > $2
         RETURNING id`,
        [input.inviteId, input.at],
      );
      if (claimed.rowCount === 0) throw new Rollback({ kind: "unavailable" });

      let userId: string;
      if ("existingId" in input.user) {
        userId = input.user.existingId;
      } else {
        const created = await tx.query(
          `INSERT INTO users (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (email) DO NOTHING RETURNING id`,
          [input.user.newId, input.email, input.user.passwordHash, input.at],
        );
        if (created.rowCount === 0) throw new Rollback({ kind: "email_taken" });
        userId = input.user.newId;
      }

      const joined = await tx.query(
        `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4) ON CONFLICT (org_id, user_id) DO NOTHING RETURNING user_id`,
        [input.orgId, userId, input.role, input.at],
      );
      if (joined.rowCount === 0) throw new Rollback({ kind: "already_member" });
      await onAccepted?.(tx, userId);
      return { kind: "accepted" as const, userId };
    });
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
 * Withdraws a pending invite of `orgId`: its link then answers like a replaced one (410 invite_expired). Answers the
 * invite's email and role, or null when there was no such pending invite (unknown, another organization's,
 * accepted, replaced or expired).
 */
export async function withdrawInvite(
  db: pg.Pool | pg.PoolClient,
  input: { orgId: string; id: string; at: Date },
): Promise<{ email: string; role: Role } | null> {
  const { rows } = await db.query<{ email: string; role: Role }>(
    `UPDATE invites SET superseded_at = $3
      WHERE id = $1 AND org_id = $2 AND accepted_at IS NULL AND superseded_at IS NULL AND expires_at > $3
     RETURNING email, role`,
    [input.id, input.orgId, input.at],
  );
  return rows[0] ?? null;
}
