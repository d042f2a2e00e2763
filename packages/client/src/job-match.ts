// "Does this job belong in this list?" for a client holding a list of GET /jobs and hearing of a change: the
// console's live updates read every event through it. It is the JavaScript reading of the API's one filter
// (jobsMatching() in packages/db/src/jobs/job-filter.ts); test/job-match.test.ts holds the two to the same answers.

import type { JobFilterKey } from "./job-types.js";

/** The filters of GET /jobs as query parameters (strings, as the URL carries them); their names come from the document. */
export type JobListFilter = { [K in JobFilterKey]?: string };
/** A job as a list item or an event's data shows it: the fields a filter can be read against in JavaScript. */
export type FilterableJob = {
  id: string;
  status?: string;
  type?: string;
  created_at?: string;
  /** null while the job has not finished. */
  finished_at?: string | null;
  schedule_id?: string | null;
  failure_group?: string | null;
};

/**
 * Does `job` belong in a list filtered by `filter` (the query parameters of GET /jobs)? The reading in JavaScript of
 * jobsMatching()'s conditions (packages/db/src/jobs/job-filter.ts), for a client that holds a list and hears of a change
 * (the console's live updates): `"no"` when a condition the job's fields decide fails (its status, type, creation
 * time or schedule; `due` only lists pending jobs), `"yes"` when every condition is decided and holds, and `"unknown"`
 * when one the job's fields cannot decide remains (`q` reads the payload, `due` the queue, `failure_group` a field
 * events do not carry): read the list again. A job's id held by the list is what it lists; this says nothing of its place.
 */
export function jobMatchesFilter(job: FilterableJob, filter: JobListFilter): "yes" | "no" | "unknown" {
  let unknown = false;
  /** A condition: false when the job's field decides that it fails; otherwise true, and noted when undecided. */
  const holds = (known: boolean, test: () => boolean): boolean => {
    if (known) return test();
    unknown = true;
    return true;
  };
  const statuses = filter.status ? filter.status.split(",") : undefined;
  const checks = [
    !statuses || holds(job.status !== undefined, () => statuses.includes(job.status!)),
    !filter.type || holds(job.type !== undefined, () => job.type === filter.type),
    !filter.created_after || holds(job.created_at !== undefined, () => Date.parse(job.created_at!) >= Date.parse(filter.created_after!)),
    !filter.created_before || holds(job.created_at !== undefined, () => Date.parse(job.created_at!) < Date.parse(filter.created_before!)),
    // A job not finished yet has no finishing time: it is in no finished_after/finished_before list.
    !filter.finished_after ||
      holds(job.finished_at !== undefined, () => job.finished_at != null && Date.parse(job.finished_at) >= Date.parse(filter.finished_after!)),
    !filter.finished_before ||
      holds(job.finished_at !== undefined, () => job.finished_at != null && Date.parse(job.finished_at) < Date.parse(filter.finished_before!)),
    !filter.schedule_id || holds(job.schedule_id !== undefined, () => job.schedule_id?.toLowerCase() === filter.schedule_id!.toLowerCase()),
    !filter.failure_group || holds(job.failure_group !== undefined, () => job.failure_group?.toLowerCase() === filter.failure_group!.toLowerCase()),
    // Due now or later: pending jobs only; which of the two, the queue's state says (not a field of the job).
    !filter.due || (holds(job.status !== undefined, () => job.status === "pending") && holds(false, () => true)),
    filter.q === undefined || holds(false, () => true),
  ];
  if (checks.includes(false)) return "no";
  return unknown ? "unknown" : "yes";
}
