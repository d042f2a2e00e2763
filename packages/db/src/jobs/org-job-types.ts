// Job types an organization registered for its own workers (docs/reference/lifecycle.md#your-own-workers). Every query names the organization: another
// organization's type of the same name is a different type. A deleted type keeps its row (deleted_at), so jobs of it
// still in flight can be leased and finish; it can be registered again.
import type pg from "pg";
import { iso } from "../core/job-sql";
import type { Queryable } from "../core/transaction";

export type OrgJobType = {
  name: string;
  description: string | null;
  payload_schema: Record<string, unknown>;
  default_max_retries: number | null;
  default_timeout_ms: number | null;
  created_at: string;
  updated_at: string;
};

const VIEW = `t.name, t.description, t.payload_schema, t.default_max_retries, t.default_timeout_ms,
              ${iso("t.created_at")} AS created_at, ${iso("t.updated_at")} AS updated_at`;

export type NewOrgJobType = {
  orgId: string;
  name: string;
  description: string | null;
  payloadSchema: Record<string, unknown>;
  defaultMaxRetries: number | null;
  defaultTimeoutMs: number | null;
};

/** Registers a type (or brings back a deleted one of that name); null when a live one of that name exists. */
export async function insertOrgJobType(db: Queryable, t: NewOrgJobType): Promise<OrgJobType | null> {
  const { rows } = await db.query<OrgJobType>(
    `INSERT INTO org_job_types AS t (org_id, name, description, payload_schema, default_max_retries, default_timeout_ms)
     VALUES ($1, $2, $3, $4::jsonb, $5, $6)
     ON CONFLICT (org_id, name) DO UPDATE
        SET description = EXCLUDED.description, payload_schema = EXCLUDED.payload_schema, default_max_retries = EXCLUDED.default_max_retries,
            default_timeout_ms = EXCLUDED.default_timeout_ms, created_at = now(), updated_at = now(), deleted_at = NULL
      WHERE t.deleted_at IS NOT NULL
     RETURNING ${VIEW}`,
    [t.orgId, t.name, t.description, JSON.stringify(t.payloadSchema), t.defaultMaxRetries, t.defaultTimeoutMs],
  );
  return rows[0] ?? null;
}

/** A live type of the organization, or null. */
export async function findOrgJobType(db: Queryable, orgId: string, name: string): Promise<OrgJobType | null> {
  const { rows } = await db.query<OrgJobType>(`SELECT ${VIEW} FROM org_job_types t WHERE t.org_id = $1 AND t.name = $2 AND t.deleted_at IS NULL`, [
    orgId,
    name,
  ]);
  return rows[0] ?? null;
}

/** The organization's live types, by name. */
export async function listOrgJobTypes(db: Queryable, orgId: string): Promise<OrgJobType[]> {
  const { rows } = await db.query<OrgJobType>(`SELECT ${VIEW} FROM org_job_types t WHERE t.org_id = $1 AND t.deleted_at IS NULL ORDER BY t.name`, [orgId]);
  return rows;
}

/** Names of the organization's types that jobs may still be leased for (deleted ones too: their jobs finish). */
export async function leasableOrgTypes(db: Queryable, orgId: string, names: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>("SELECT name FROM org_job_types WHERE org_id = $1 AND name = ANY($2::text[]) ORDER BY name", [
    orgId,
    names,
  ]);
  return rows.map((r) => r.name);
}

/**
 * Of `names`, those some organization registered as its own type (deleted ones too: their jobs may still wait). A
 * plugin may not serve such a name: the built-in workers would run that organization's jobs.
 */
export async function orgTypesNamed(db: Queryable, names: readonly string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const { rows } = await db.query<{ name: string }>("SELECT DISTINCT name FROM org_job_types WHERE name = ANY($1::text[]) ORDER BY name", [names]);
  return rows.map((r) => r.name);
}

export type OrgJobTypeChange = Partial<{
  description: string | null;
  payloadSchema: Record<string, unknown>;
  defaultMaxRetries: number | null;
  defaultTimeoutMs: number | null;
}>;

/** Changes the fields given of a live type (locked first); answers the type before and after, or null when absent. */
export async function updateOrgJobType(
  db: pg.PoolClient,
  orgId: string,
  name: string,
  change: OrgJobTypeChange,
): Promise<{ before: OrgJobType; after: OrgJobType } | null> {
  const { rows: found } = await db.query<OrgJobType>(
    `SELECT ${VIEW} FROM org_job_types t WHERE t.org_id = $1 AND t.name = $2 AND t.deleted_at IS NULL FOR UPDATE`,
    [orgId, name],
  );
  const before = found[0];
  if (!before) return null;
  const { rows } = await db.query<OrgJobType>(
    `UPDATE org_job_types t
        SET description = CASE WHEN $3 THEN $4 ELSE t.description END,
            payload_schema = coalesce($5::jsonb, t.payload_schema),
            default_max_retries = CASE WHEN $6 THEN $7::int ELSE t.default_max_retries END,
            default_timeout_ms = CASE WHEN $8 THEN $9::int ELSE t.default_timeout_ms END,
            updated_at = now()
      WHERE t.org_id = $1 AND t.name = $2
     RETURNING ${VIEW}`,
    [
      orgId,
      name,
      change.description !== undefined,
      change.description ?? null,
      change.payloadSchema === undefined ? null : JSON.stringify(change.payloadSchema),
      change.defaultMaxRetries !== undefined,
      change.defaultMaxRetries ?? null,
      change.defaultTimeoutMs !== undefined,
      change.defaultTimeoutMs ?? null,
    ],
  );
  return { before, after: rows[0]! };
}

/** Deletes a live type (its row stays, marked); false when there was none. */
export async function deleteOrgJobType(db: Queryable, orgId: string, name: string): Promise<boolean> {
  const { rowCount } = await db.query("UPDATE org_job_types SET deleted_at = now() WHERE org_id = $1 AND name = $2 AND deleted_at IS NULL", [orgId, name]);
  return (rowCount ?? 0) > 0;
}
