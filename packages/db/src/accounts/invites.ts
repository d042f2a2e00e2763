// Invites: one pending invite per email and organization, identified by the SHA-256 of its token, accepted
// at most once even when several requests race for it.
import type { Role } from "@conveyor/contracts";
import type pg from "pg";
import { inTransaction, Rollback, rollingBack, type Queryable } from "../core/transaction";

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
export async function findInviteByTokenHash(db: Queryable, tokenHash: Buffer): Promise<InviteRecord | null> {
  const { rows } = await db.query<InviteRecord>(
    `SELECT i.id, i.org_id AS "orgId", o.name AS "orgName", i.email, i.role, i.expires_at AS "expiresAt", i.accepted_at AS "acceptedAt",
            i.superseded_at AS "supersededAt"
       FROM invites i JOIN organizations o ON o.id = i.org_id
      WHERE i.token_hash = $1`,
    [tokenHash],
  );
  return rows[0] ?? null;
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
  return rollingBack(
    inTransaction(pool, async (tx): Promise<AcceptOutcome> => {
      const claimed = await tx.query(
        `UPDATE invites SET accepted_at = $2
          WHERE id = $1 AND accepted_at IS NULL AND superseded_at IS NULL AND expires_at > $2
         RETURNING id`,
        [input.inviteId, input.at],
      );
      if (claimed.rowCount === 0) throw new Rollback<AcceptOutcome>({ kind: "unavailable" });

      let userId: string;
      if ("existingId" in input.user) {
        userId = input.user.existingId;
      } else {
        const created = await tx.query(
          `INSERT INTO users (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (email) DO NOTHING RETURNING id`,
          [input.user.newId, input.email, input.user.passwordHash, input.at],
        );
        if (created.rowCount === 0) throw new Rollback<AcceptOutcome>({ kind: "email_taken" });
        userId = input.user.newId;
      }

      const joined = await tx.query(
        `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4) ON CONFLICT (org_id, user_id) DO NOTHING RETURNING user_id`,
        [input.orgId, userId, input.role, input.at],
      );
      if (joined.rowCount === 0) throw new Rollback<AcceptOutcome>({ kind: "already_member" });
      await onAccepted?.(tx, userId);
      return { kind: "accepted" as const, userId };
    }),
  );
}

export type PendingInvite = { id: string; email: string; role: Role; invitedBy: string; expiresAt: Date; createdAt: Date };

/** Invites of `orgId` that can still be accepted at `now`, newest first. Never their tokens (only hashes are stored). */
export async function listPendingInvites(db: Queryable, query: { orgId: string; now: Date }): Promise<PendingInvite[]> {
  const { rows } = await db.query<PendingInvite>(
    `SELECT id, email, role, invited_by AS "invitedBy", expires_at AS "expiresAt", created_at AS "createdAt" FROM invites
      WHERE org_id = $1::uuid AND accepted_at IS NULL AND superseded_at IS NULL AND expires_at > $2
      ORDER BY created_at DESC, id DESC`,
    [query.orgId, query.now],
  );
  return rows;
}

/**
 * Withdraws a pending invite of `orgId`: its link then answers like a replaced one (410 invite_expired). Answers the
 * invite's email and role, or null when there was no such pending invite (unknown, another organization's,
 * accepted, replaced or expired).
 */
export async function withdrawInvite(db: Queryable, input: { orgId: string; id: string; at: Date }): Promise<{ email: string; role: Role } | null> {
  const { rows } = await db.query<{ email: string; role: Role }>(
    `UPDATE invites SET superseded_at = $3
      WHERE id = $1 AND org_id = $2 AND accepted_at IS NULL AND superseded_at IS NULL AND expires_at > $3
     RETURNING email, role`,
    [input.id, input.orgId, input.at],
  );
  return rows[0] ?? null;
}
