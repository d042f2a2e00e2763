// Organizations and their founding owner, created together or not at all.
import type pg from "pg";
import { isUniqueViolation } from "../core/errors";
import { inTransaction } from "../core/transaction";

export type NewOrganization = {
  orgId: string;
  name: string;
  owner: { id: string; email: string; passwordHash: string };
  at: Date;
};

/**
 * Creates a user, an organization and the owner membership in one transaction. Returns false (and creates
 * nothing) when the email already has an account.
 */
export async function createOrganizationWithOwner(pool: pg.Pool, input: NewOrganization): Promise<boolean> {
  try {
    await inTransaction(pool, async (client) => {
      await client.query("INSERT INTO users (id, email, password_hash, created_at) VALUES ($1::uuid, $2, $3, $4)", [
        input.owner.id,
        input.owner.email,
        input.owner.passwordHash,
        input.at,
      ]);
      await client.query("INSERT INTO organizations (id, name, created_at) VALUES ($1::uuid, $2, $3)", [input.orgId, input.name, input.at]);
      await client.query("INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1::uuid, $2::uuid, 'owner', $3)", [
        input.orgId,
        input.owner.id,
        input.at,
      ]);
    });
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}
