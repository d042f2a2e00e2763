// Saved views of the console's jobs list (issue 38): a member's named GET /jobs filters in one organization. Each
// view belongs to one membership (org and user), so nobody else can read, apply or delete it, and it goes with the
// membership. The filter is stored as validated by the API (jobFilterSchema); nothing here reads inside it.
import { iso } from "../core/job-sql";
import type { Queryable } from "../core/transaction";

export type SavedView = { id: string; name: string; filter: Record<string, string>; created_at: string };

const VIEW = `v.id, v.name, v.filter, ${iso("v.created_at")} AS created_at`;

/** The member's views, by name. */
export async function listSavedViews(db: Queryable, owner: { orgId: string; userId: string }): Promise<SavedView[]> {
  const { rows } = await db.query<SavedView>(
    `SELECT ${VIEW} FROM saved_views v WHERE v.org_id = $1::uuid AND v.user_id = $2::uuid ORDER BY lower(v.name), v.name, v.id`,
    [owner.orgId, owner.userId],
  );
  return rows;
}

/**
 * Stores a view unless the member already has `cap` views or one of that name: `tx` must be a transaction, because
 * the membership's row is locked while counting, so two saves at once cannot both take the last place.
 * "no_member" when the membership is gone meanwhile.
 */
export async function insertSavedView(
  tx: Queryable,
  view: { id: string; orgId: string; userId: string; name: string; filter: Record<string, string>; cap: number },
): Promise<SavedView | "cap" | "name_taken" | "no_member"> {
  const member = await tx.query(`SELECT 1 FROM memberships WHERE org_id = $1::uuid AND user_id = $2::uuid FOR UPDATE`, [view.orgId, view.userId]);
  if (member.rowCount === 0) return "no_member";
  const { rows: counted } = await tx.query<{ count: number; taken: boolean }>(
    `SELECT count(*)::int AS count, coalesce(bool_or(v.name = $3), false) AS taken FROM saved_views v WHERE v.org_id = $1::uuid AND v.user_id = $2::uuid`,
    [view.orgId, view.userId, view.name],
  );
  if (counted[0]!.taken) return "name_taken";
  if (counted[0]!.count >= view.cap) return "cap";
  const { rows } = await tx.query<SavedView>(
    `INSERT INTO saved_views AS v (id, org_id, user_id, name, filter) VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5::jsonb) RETURNING ${VIEW}`,
    [view.id, view.orgId, view.userId, view.name, JSON.stringify(view.filter)],
  );
  return rows[0]!;
}

/** Deletes the member's view; false when the member has no such view (another member's is not theirs). */
export async function deleteSavedView(db: Queryable, view: { orgId: string; userId: string; id: string }): Promise<boolean> {
  const { rowCount } = await db.query(`DELETE FROM saved_views WHERE id = $1::uuid AND org_id = $2::uuid AND user_id = $3::uuid`, [
    view.id,
    view.orgId,
    view.userId,
  ]);
  return (rowCount ?? 0) > 0;
}
