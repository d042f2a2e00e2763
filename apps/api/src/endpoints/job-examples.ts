// The examples the job endpoints' documents share: a list item as GET /jobs answers it, and the fields a job's detail
// adds; the other job answers' examples (retries, graphs, cancel) start from them.
export const JOB_ID = "0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01";
export const REPLAY_ID = "0193a5d0-11c2-7e4f-8a6b-3c9d2e7f4b02";
export const AT = "2026-11-21T09:30:00.000Z";
/** A list item as GET /jobs answers it: the documents' examples of other job answers start from it. */
export const listItem = {
  id: JOB_ID,
  type: "send_email",
  status: "done",
  retries: 0,
  max_retries: 3,
  created_at: AT,
  updated_at: "2026-11-21T09:30:01.250Z",
  run_at: null,
  priority: 5,
  replay_of: null,
  schedule_id: null,
  cancel_requested_at: null,
  concurrency_key: null,
  concurrency_limit: null,
  rate_limit: null,
  timeout_ms: null,
  dedupe_key: null,
  debounce_key: null,
  waiting_for: null,
  started_at: "2026-11-21T09:30:00.410Z",
  finished_at: "2026-11-21T09:30:01.250Z",
  progress: null,
};

/** The fields GET /jobs/{id} adds to a list item's, before payload, result and error. */
export const detailExtra = { ...listItem, depends_on: [], dependents: [], on_dependency_failure: "cancel", replayed_as: [], steps: [] };
