// Schedules (docs/reference/time.md#time-priority-and-fairness): the API's reads and writes of an organization's schedules, and the ticker's turn that creates
// each due schedule's job (through the job machine's insert, never its own) and moves its next run in one
// transaction; the runs each tick made (schedule_runs), which make a backfill of a past range idempotent (backfill.ts).
export * from "./schedules";
export * from "./backfill";
