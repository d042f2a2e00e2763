// The jobs list's search as the URL holds it, the filter part of it, and the list's request for it: shared by the
// list, its bulk actions (jobs-bulk.tsx) and the first page the API writes into the page's HTML
// (first-page-server.tsx), so it lives apart from all three and imports only the filters' names, which the client
// reads from the API's document (JOB_FILTER_KEYS).
import { JOB_FILTER_KEYS, type JobListFilter } from "@conveyor/client";

export type JobSearch = Omit<JobListFilter, "due"> & {
  /** Pending jobs due `now` or `later` (the overview's Due now and Delayed). */
  due?: "now" | "later";
  /** `oldest`: the list oldest first (newest first without it). Not a filter: bulk actions ignore it. */
  order?: "oldest";
  cursor?: string;
  /** `failures`: the failed jobs grouped by error instead of the list. */
  view?: "failures";
};
export type JobFilter = Omit<JobSearch, "cursor" | "view">;

/** The filters of the list, in the order the URL and the list's request name them (GET /jobs' own). */
export const FILTER_KEYS = JOB_FILTER_KEYS;

/** Jobs on a page of the list. */
export const PAGE_SIZE = 50;

/** The URL's search, kept to the known filters with string values (anything else in the address is dropped). */
export function parseJobSearch(search: Record<string, unknown>): JobSearch {
  const result: JobSearch = {};
  for (const key of [...FILTER_KEYS, "cursor"] as const) {
    const value = search[key];
    if (key === "due") {
      if (value === "now" || value === "later") result.due = value;
      continue;
    }
    if (typeof value === "string" && value.trim()) result[key] = value.trim();
    else if (typeof value === "number") result[key] = String(value);
  }
  if (search.view === "failures") result.view = "failures";
  if (search.order === "oldest") result.order = "oldest";
  return result;
}

export const filterOf = (search: JobSearch): JobFilter => Object.fromEntries(FILTER_KEYS.filter((k) => search[k]).map((k) => [k, search[k]]));

/**
 * The query of GET /jobs for one page of the list (with each job's last error, shown in a failed row). The page asks
 * it (jobsListQuery) and the API answers it into the page's HTML on arrival (first-page-server.tsx): one definition.
 */
export const jobsListParams = (search: JobSearch) => ({
  limit: PAGE_SIZE,
  ...filterOf(search),
  order: search.order,
  cursor: search.cursor,
  include: "error" as const,
});
