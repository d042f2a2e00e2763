// Single sign-on (docs/reference/tenants.md#audit-log): each organization's OpenID Connect provider, the e-mail domains it signs in (each domain
// belongs to one organization at most), the sign-ins on their way through a provider, and the members a first
// sign-in creates. The client secret is stored sealed (core/secret-box.ts) and only opened to talk to the provider.
import type pg from "pg";
import type { Role } from "@conveyor/contracts";
import { isUniqueViolation } from "../core/errors";

export type OrgSsoRecord = {
  orgId: string;
  issuer: string;
  clientId: string;
  /** Sealed for the org id. */
  sealedSecret: Buffer;
  emailDomains: string[];
  defaultRole: Role;
  enforce: boolean;
  /** The provider's discovery document, as checked when the configuration was saved. */
  metadata: Record<string, unknown>;
  updatedAt: Date;
};

type OrgSsoRow = {
  org_id: string;
  issuer: string;
  client_id: string;
  client_secret: Buffer;
  email_domains: string[] | null;
  default_role: Role;
  enforce: boolean;
  metadata: Record<string, unknown>;
  updated_at: Date;
};

const SELECT = `SELECT s.org_id, s.issuer, s.client_id, s.client_secret, s.default_role, s.enforce, s.metadata, s.updated_at,
                       ARRAY(SELECT d.domain FROM sso_domains d WHERE d.org_id = s.org_id ORDER BY d.domain) AS email_domains
                  FROM org_sso s`;

const record = (row: OrgSsoRow): OrgSsoRecord => ({
  orgId: row.org_id,
  issuer: row.issuer,
  clientId: row.client_id,
  sealedSecret: row.client_secret,
  emailDomains: row.email_domains ?? [],
  defaultRole: row.default_role,
  enforce: row.enforce,
  metadata: row.metadata,
  updatedAt: row.updated_at,
});

/** The organization's provider, or null. `forUpdate` locks it until the transaction ends. */
export async function findOrgSso(db: pg.Pool | pg.PoolClient, orgId: string, options: { forUpdate?: boolean } = {}): Promise<OrgSsoRecord | null> {
  const { rows } = await db.query<OrgSsoRow>(`${SELECT} WHERE s.org_id = $1${options.forUpdate ? " FOR UPDATE OF s" : ""}`, [orgId]);
  return rows[0] ? record(rows[0]) : null;
}

/** The organization whose provider signs in `domain` (lower-case), or null. */
export async function findSsoOrgByDomain(db: pg.Pool | pg.PoolClient, domain: string): Promise<string | null> {
  const { rows } = await db.query<{ org_id: string }>("SELECT org_id FROM sso_domains WHERE domain = $1", [domain]);
  return rows[0]?.org_id ?? null;
}

/** Of `orgIds`, those that require single sign-on of their non-owner members. */
export async function listSsoEnforcedOrgs(db: pg.Pool | pg.PoolClient, orgIds: readonly string[]): Promise<string[]> {
  if (orgIds.length === 0) return [];
  const { rows } = await db.query<{ org_id: string }>("SELECT org_id FROM org_sso WHERE enforce AND org_id = ANY($1::uuid[])", [orgIds]);
  return rows.map((row) => row.org_id);
}

/** Whether `orgId` requires single sign-on of its non-owner members. */
export async function isSsoEnforced(db: pg.Pool | pg.PoolClient, orgId: string): Promise<boolean> {
  return (await listSsoEnforcedOrgs(db, [orgId])).length > 0;
}

export type SsoSettings = Omit<OrgSsoRecord, "updatedAt"> & { updatedBy: string; at: Date };

export type SaveSsoOutcome = { kind: "saved" } | { kind: "domain_taken"; domains: string[] };

/**
 * Creates or replaces the organization's provider and the domains it signs in, in `db` (a transaction). Domains
 * another organization signs in are refused, and nothing is written.
 */
export async function saveOrgSso(db: pg.PoolClient, settings: SsoSettings): Promise<SaveSsoOutcome> {
  const { rows: taken } = await db.query<{ domain: string }>("SELECT domain FROM sso_domains WHERE domain = ANY($1::text[]) AND org_id <> $2 ORDER BY domain", [
    settings.emailDomains,
    settings.orgId,
  ]);
  if (taken.length) return { kind: "domain_taken", domains: taken.map((row) => row.domain) };
  await db.query(
    `INSERT INTO org_sso (org_id, issuer, client_id, client_secret, default_role, enforce, metadata, updated_by, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
     ON CONFLICT (org_id) DO UPDATE SET issuer = $2, client_id = $3, client_secret = $4, default_role = $5, enforce = $6, metadata = $7,
                                        updated_by = $8, updated_at = $9`,
    [
      settings.orgId,
      settings.issuer,
      settings.clientId,
      settings.sealedSecret,
      settings.defaultRole,
      settings.enforce,
      JSON.stringify(settings.metadata),
      settings.updatedBy,
      settings.at,
    ],
  );
  await db.query("DELETE FROM sso_domains WHERE org_id = $1 AND NOT (domain = ANY($2::text[]))", [settings.orgId, settings.emailDomains]);
  try {
    await db.query("INSERT INTO sso_domains (domain, org_id) SELECT unnest($1::text[]), $2 ON CONFLICT (domain) DO NOTHING", [
      settings.emailDomains,
      settings.orgId,
    ]);
  } catch (error) {
    // Only a domain another organization claimed at this very moment can collide; the caller rolls back.
    if (isUniqueViolation(error)) return { kind: "domain_taken", domains: settings.emailDomains };
    throw error;
  }
  const { rows: mine } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM sso_domains WHERE org_id = $1", [settings.orgId]);
  if (mine[0]!.n !== settings.emailDomains.length) return { kind: "domain_taken", domains: settings.emailDomains };
  return { kind: "saved" };
}

/** Removes the organization's provider, its domains and the sign-ins on their way; answers what it was, or null. */
export async function deleteOrgSso(db: pg.PoolClient, orgId: string): Promise<OrgSsoRecord | null> {
  const before = await findOrgSso(db, orgId, { forUpdate: true });
  if (!before) return null;
  await db.query("DELETE FROM sso_domains WHERE org_id = $1", [orgId]);
  await db.query("DELETE FROM sso_logins WHERE org_id = $1", [orgId]);
  await db.query("DELETE FROM org_sso WHERE org_id = $1", [orgId]);
  return before;
}

export type NewSsoLogin = {
  id: string;
  flowHash: Buffer;
  orgId: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  returnTo: string;
  at: Date;
  expiresAt: Date;
};

/** Stores a sign-in on its way to the provider, and forgets those that expired. */
export async function insertSsoLogin(db: pg.Pool | pg.PoolClient, login: NewSsoLogin): Promise<void> {
  await db.query(
    `WITH pruned AS (DELETE FROM sso_logins WHERE expires_at <= $8)
     INSERT INTO sso_logins (id, flow_hash, org_id, state, nonce, code_verifier, return_to, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [login.id, login.flowHash, login.orgId, login.state, login.nonce, login.codeVerifier, login.returnTo, login.at, login.expiresAt],
  );
}

export type SsoLoginRecord = { orgId: string; state: string; nonce: string; codeVerifier: string; returnTo: string };

/**
 * Takes the sign-in of this browser (the SHA-256 of its cookie's token) if it has not expired: deleted as it is read,
 * so a callback can use it once, whatever happens next.
 */
export async function takeSsoLogin(db: pg.Pool | pg.PoolClient, flowHash: Buffer, now: Date): Promise<SsoLoginRecord | null> {
  const { rows } = await db.query<{ org_id: string; state: string; nonce: string; code_verifier: string; return_to: string; expires_at: Date }>(
    "DELETE FROM sso_logins WHERE flow_hash = $1 RETURNING org_id, state, nonce, code_verifier, return_to, expires_at",
    [flowHash],
  );
  const row = rows[0];
  if (!row || row.expires_at.getTime() <= now.getTime()) return null;
  return { orgId: row.org_id, state: row.state, nonce: row.nonce, codeVerifier: row.code_verifier, returnTo: row.return_to };
}

export type SsoMember = {
  userId: string;
  email: string;
  role: Role;
  credentialVersion: number;
  /** The account was made by this sign-in. */
  createdUser: boolean;
  /** The membership was made by this sign-in (with the provider's default role). */
  joined: boolean;
};

/**
 * The member a verified e-mail signs in as: the account with that e-mail (made now from `newUser` if there is none),
 * made a member of `orgId` with `defaultRole` if it is not one yet. In `db`, a transaction.
 */
export async function ensureSsoMember(
  db: pg.PoolClient,
  input: { orgId: string; email: string; defaultRole: Role; newUser: { id: string; passwordHash: string } | null; at: Date },
): Promise<SsoMember> {
  const findUser = async () =>
    (await db.query<{ id: string; credential_version: number }>("SELECT id, credential_version FROM users WHERE email = $1", [input.email])).rows[0];
  let user = await findUser();
  let createdUser = false;
  if (!user) {
    if (!input.newUser) throw new Error("no account has this e-mail, and none was prepared");
    const created = await db.query("INSERT INTO users (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (email) DO NOTHING", [
      input.newUser.id,
      input.email,
      input.newUser.passwordHash,
      input.at,
    ]);
    createdUser = (created.rowCount ?? 0) > 0;
    user = (await findUser())!;
  }
  const joined = await db.query("INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4) ON CONFLICT (org_id, user_id) DO NOTHING", [
    input.orgId,
    user.id,
    input.defaultRole,
    input.at,
  ]);
  const { rows } = await db.query<{ role: Role }>("SELECT role FROM memberships WHERE org_id = $1 AND user_id = $2", [input.orgId, user.id]);
  return {
    userId: user.id,
    email: input.email,
    role: rows[0]!.role,
    credentialVersion: user.credential_version,
    createdUser,
    joined: (joined.rowCount ?? 0) > 0,
  };
}
