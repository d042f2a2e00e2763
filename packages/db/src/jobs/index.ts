// Jobs as the API and the worker read them: a job (jobs.ts), its attempts and its log (attempts.ts), the one
// filter of "the org's jobs matching" (job-filter.ts), the overview's counts, the worker's artifacts and reconciler
// reads, failure groups, the Retries view, what a replay copies, waitpoints and M-Pesa callbacks. Every change of a
// job's state is the job machine's (../job-machine/): nothing here writes jobs.status or an event by itself.
export * from "./jobs";
export * from "./attempts";
export * from "./job-callbacks";
export * from "./job-stats";
export * from "./job-runtime";
export * from "./job-filter";
export * from "./failure-groups";
export * from "./retries";
export * from "./replay";
export * from "./waitpoints";
export * from "./saved-views";
export * from "./org-job-types";
