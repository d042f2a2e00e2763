// Saved views of the console's jobs list (issue 38): a person's named GET /jobs filters, in the organization of
// their credential. Each person sees, applies and deletes only their own; another person's view is a 404 like an
// unknown id. The filter was validated against the jobs list's own schema (jobFilterSchema) by the endpoint.
import { deleteSavedView, inTransaction, insertSavedView, isUuid, listSavedViews, newId, type SavedView } from "@conveyor/db";
import type { JobFilterInput } from "@conveyor/contracts";
import { AppError, notFound } from "./infrastructure/errors";
import type { Caller, ServiceDeps } from "./infrastructure/deps";

/** Views one person may keep in one organization. */
export const SAVED_VIEWS_PER_USER = 50;

export async function listViews(options: { caller: Caller }, { db }: Pick<ServiceDeps, "db">): Promise<SavedView[]> {
  return listSavedViews(db.pool, { orgId: options.caller.orgId, userId: options.caller.userId });
}

export async function saveView(options: { caller: Caller; name: string; filter: JobFilterInput }, { db }: Pick<ServiceDeps, "db">): Promise<SavedView> {
  const { caller, name, filter } = options;
  const saved = await inTransaction(db.pool, (tx) =>
    insertSavedView(tx, { id: newId(), orgId: caller.orgId, userId: caller.userId, name, filter: filter as Record<string, string>, cap: SAVED_VIEWS_PER_USER }),
  );
  if (saved === "cap") {
    throw new AppError("saved_view_limit", `You have ${SAVED_VIEWS_PER_USER} saved views, the most one person may keep. Delete one to save another.`);
  }
  if (saved === "name_taken")
    throw new AppError("saved_view_name_taken", `You already have a view named “${name}”. Choose another name, or delete that one first.`);
  // The membership went while saving: the credential no longer acts for this organization.
  if (saved === "no_member") throw notFound("Membership");
  return saved;
}

export async function deleteView(options: { caller: Caller; id: string }, { db }: Pick<ServiceDeps, "db">): Promise<void> {
  const { caller, id } = options;
  const deleted = isUuid(id) && (await deleteSavedView(db.pool, { orgId: caller.orgId, userId: caller.userId, id }));
  if (!deleted) throw notFound("Saved view");
}
