// Console sessions (docs/reference/tenants.md#the-console): the cookie holds a random token and only its SHA-256 is stored. Every request reads
// the session together with its user's credential version and its membership, so a logout, a password change or a
// removal from the organization ends it on the next request.
import type { Role } from "@conveyor/contracts";
import type pg from "pg";

export type NewSession = {
  id: string;
  tokenHash: Buffer;
  userId: string;
  orgId: string;
  /** The user's credential version read with the password that was checked: a change since then ends the session. */
  credentialVersion: number;
  at: Date;
  expiresAt: Date;
  /** Begun through the organization's single sign-on: it stays in that organization. */
  viaSso?: boolean;
};

/** Stores a session, and forgets the user's expired ones, so the table holds live sessions and few dead ones. */
export async function insertSession(db: pg.Pool | pg.PoolClient, session: NewSession): Promise<void> {
  await db.query(
    `WITH pruned AS (DELETE FROM sessions WHERE user_id = $3 AND expires_at <= $6)
     INSERT INTO sessions (id, token_hash, user_id, org_id, credential_version, created_at, last_seen_at, expires_at, via_sso)
     VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8)`,
    [session.id, session.tokenHash, session.userId, session.orgId, session.credentialVersion, session.at, session.expiresAt, session.viaSso ?? false],
  );
}

export type LiveSession = { id: string; userId: string; orgId: string; role: Role; expiresAt: Date; viaSso: boolean };

/** last_seen_at is written at most this often per session. */
const TOUCH_INTERVAL = "1 minute";

/**
 * The session whose token has this SHA-256, if it is still good at `now`: not expired, begun under the user's current
 * credential version, its user still a member of its organization, and — where the organization requires single
 * sign-on — begun through it, unless its user is the owner. Records the use (at most once a minute).
 */
export async function findLiveSession(pool: pg.Pool, tokenHash: Buffer, now: Date): Promise<LiveSession | null> {
  const { rows } = await pool.query<{ id: string; user_id: string; org_id: string; role: Role | null; current: boolean; expires_at: Date; via_sso: boolean }>(
    `WITH s AS (
       SELECT s.id, s.user_id, s.org_id, s.expires_at, s.last_seen_at, s.via_sso, m.role,
              s.credential_version = u.credential_version AND (s.via_sso OR m.role = 'owner' OR NOT COALESCE(o.enforce, false)) AS current
         FROM sessions s
         JOIN users u ON u.id = s.user_id
         LEFT JOIN memberships m ON m.org_id = s.org_id AND m.user_id = s.user_id
         LEFT JOIN org_sso o ON o.org_id = s.org_id
        WHERE s.token_hash = $1
     ), touched AS (
       UPDATE sessions t SET last_seen_at = $2 FROM s
        WHERE t.id = s.id AND s.current AND s.role IS NOT NULL AND s.expires_at > $2
          AND s.last_seen_at < $2::timestamptz - interval '${TOUCH_INTERVAL}'
     )
     SELECT id, user_id, org_id, role, current, expires_at, via_sso FROM s`,
    [tokenHash, now],
  );
  const row = rows[0];
  if (!row || !row.current || row.role === null || row.expires_at.getTime() <= now.getTime()) return null;
  return { id: row.id, userId: row.user_id, orgId: row.org_id, role: row.role, expiresAt: row.expires_at, viaSso: row.via_sso };
}

/** Ends a session (logout). */
export async function deleteSession(db: pg.Pool | pg.PoolClient, id: string): Promise<void> {
  await db.query("DELETE FROM sessions WHERE id = $1", [id]);
}

/** Ends the session whose token has this SHA-256, if there is one (a browser logging in again replaces its session). */
export async function deleteSessionByTokenHash(db: pg.Pool | pg.PoolClient, tokenHash: Buffer): Promise<void> {
  await db.query("DELETE FROM sessions WHERE token_hash = $1", [tokenHash]);
}

/** Moves a session to another organization of its user; false (and nothing changed) when they are not a member there. */
export async function moveSession(pool: pg.Pool, input: { sessionId: string; userId: string; orgId: string }): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE sessions SET org_id = $3
      WHERE id = $1 AND user_id = $2 AND EXISTS (SELECT 1 FROM memberships WHERE org_id = $3 AND user_id = $2)`,
    [input.sessionId, input.userId, input.orgId],
  );
  return rowCount === 1;
}
