// The audit log page's filters as the URL holds them; apart from the page, so the router reads them without loading it.

export type AuditSearch = { actor_id?: string; action?: string; target_id?: string; after?: string; before?: string };

export const AUDIT_FILTER_KEYS = ["actor_id", "action", "target_id", "after", "before"] as const;

/** The URL's search, kept to the known filters with string values (anything else in the address is dropped). */
export function parseAuditSearch(search: Record<string, unknown>): AuditSearch {
  const result: AuditSearch = {};
  for (const key of AUDIT_FILTER_KEYS) {
    const value = search[key];
    if (typeof value === "string" && value.trim()) result[key] = value.trim();
  }
  return result;
}
