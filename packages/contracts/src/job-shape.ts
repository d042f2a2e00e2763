// A job's JSON as the API shows it, written once: the fields of each view, in order. Pure data, so the console may
// import it (@conveyor/contracts/job-shape). The SQL that builds the views (packages/db/sql/functions/
// conveyor_job_json.sql) and the OpenAPI components (apps/api/src/declarations/responses-jobs.ts) say more of each
// field (its SQL, its type and meaning); tests fail when either names other fields or another order
// (packages/db/test/job-shape.test.ts, apps/api/test/job-shape.test.ts). The detail's order and the console's
// live patches are derived from these lists.

/** A job as GET /jobs lists it (and graph nodes, and the start of GET /jobs/{id}), in this order. */
export const JOB_ITEM_FIELDS = [
  "id",
  "type",
  "status",
  "retries",
  "max_retries",
  "created_at",
  "updated_at",
  "run_at",
  "priority",
  "replay_of",
  "schedule_id",
  "cancel_requested_at",
  "concurrency_key",
  "concurrency_limit",
  "rate_limit",
  "timeout_ms",
  "dedupe_key",
  "debounce_key",
  "waiting_for",
  "started_at",
  "finished_at",
  "progress",
] as const;

/**
 * An event's `data`, the job as it was when the event was written: the item's fields but `waiting_for` (a reading of
 * the present, which an event cannot keep true), with `result` and `error`. No order: it is stored as jsonb.
 */
export const JOB_EVENT_FIELDS = [...JOB_ITEM_FIELDS.filter((field) => field !== "waiting_for"), "result", "error"] as const;

/** GET /jobs/{id}, in this order: the item's fields with the payload after the status, then what only the job's page shows. */
export const JOB_DETAIL_FIELDS = [
  ...JOB_ITEM_FIELDS.slice(0, 3),
  "payload",
  ...JOB_ITEM_FIELDS.slice(3),
  "depends_on",
  "dependents",
  "on_dependency_failure",
  "replayed_as",
  "steps",
  "result",
  "error",
] as const;
