// The jobs list's search as the URL holds it, and the filter part of it: shared by the list and its bulk actions
// (jobs-bulk.tsx), which the list renders, so it lives apart from both.
export type JobSearch = {
  status?: string;
  type?: string;
  created_after?: string;
  created_before?: string;
  /** Jobs that finished (done, failed or cancelled) in a period: what the overview's bars count. */
  finished_after?: string;
  finished_before?: string;
  schedule_id?: string;
  q?: string;
  /** A failure group of GET /jobs/failures: the group's jobs. */
  failure_group?: string;
  /** Pending jobs due `now` or `later` (the overview's Due now and Delayed). */
  due?: "now" | "later";
  /** `oldest`: the list oldest first (newest first without it). Not a filter: bulk actions ignore it. */
  order?: "oldest";
  cursor?: string;
  /** `failures`: the failed jobs grouped by error instead of the list. */
  view?: "failures";
};
export type JobFilter = Omit<JobSearch, "cursor" | "view">;
