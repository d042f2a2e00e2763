// Public tokens (docs/reference/events.md#progress-and-live-results): each reads one job — GET /jobs/{id}, its output and its events — from a browser. Only
// the SHA-256 of a token is stored; a token is refused after its expiry or revocation, and goes with its job when
// retention deletes it (cascade).
import type pg from "pg";
import { TENANT_JOB } from "../core/job-sql";

export type NewPublicToken = { id: string; orgId: string; jobId: string; tokenHash: Buffer; createdBy: string; at: Date; expiresAt: Date };

/** Stores a token for a job of the org; false when the job is not the org's. */
export async function insertPublicToken(db: pg.Pool | pg.PoolClient, token: NewPublicToken): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO job_public_tokens (id, org_id, job_id, token_hash, created_by, created_at, expires_at)
     SELECT $1, j.org_id, j.id, $4, $5, $6, $7 FROM jobs j WHERE j.id = $3 AND j.org_id = $2 AND ${TENANT_JOB("j")}`,
    [token.id, token.orgId, token.jobId, token.tokenHash, token.createdBy, token.at, token.expiresAt],
  );
  return rowCount === 1;
}

/** What a live token grants: one job of one org, until `expiresAt`. */
export type PublicTokenGrant = { id: string; orgId: string; jobId: string; createdBy: string; expiresAt: Date };

/**
 * The grant of a token that is live at `now` — not expired, not revoked, its job still there, and the person who made
 * it still a member of the org (a removed member's tokens stop with their membership, like their keys) — or null.
 */
export async function findLivePublicToken(db: pg.Pool | pg.PoolClient, tokenHash: Buffer, now: Date): Promise<PublicTokenGrant | null> {
  const { rows } = await db.query<{ id: string; org_id: string; job_id: string; created_by: string; expires_at: Date }>({
    name: "conveyor-find-public-token",
    text: `SELECT t.id, t.org_id, t.job_id, t.created_by, t.expires_at FROM job_public_tokens t
            WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > $2
              AND EXISTS (SELECT 1 FROM memberships m WHERE m.org_id = t.org_id AND m.user_id = t.created_by)`,
    values: [tokenHash, now],
  });
  const row = rows[0];
  return row ? { id: row.id, orgId: row.org_id, jobId: row.job_id, createdBy: row.created_by, expiresAt: row.expires_at } : null;
}

/** Which of these tokens are still live at `now` (open streams check theirs together, now and then). */
export async function livePublicTokens(db: pg.Pool | pg.PoolClient, ids: readonly string[], now: Date): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT t.id FROM job_public_tokens t
      WHERE t.id = ANY($1::uuid[]) AND t.revoked_at IS NULL AND t.expires_at > $2
        AND EXISTS (SELECT 1 FROM memberships m WHERE m.org_id = t.org_id AND m.user_id = t.created_by)`,
    [ids, now],
  );
  return new Set(rows.map((r) => r.id));
}

/** Revokes a live token of the org's job; false when there is none (unknown, another org's, already revoked). */
export async function revokePublicToken(db: pg.Pool | pg.PoolClient, input: { orgId: string; jobId: string; id: string; at: Date }): Promise<boolean> {
  const { rowCount } = await db.query(`UPDATE job_public_tokens SET revoked_at = $4 WHERE id = $1 AND job_id = $2 AND org_id = $3 AND revoked_at IS NULL`, [
    input.id,
    input.jobId,
    input.orgId,
    input.at,
  ]);
  return rowCount === 1;
}
