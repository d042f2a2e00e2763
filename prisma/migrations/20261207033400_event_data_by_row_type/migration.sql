-- The job "as it was" in an event (issue 43, docs/reference/lifecycle.md#storage-and-leases), built for a third less
-- CPU; the value is the same jsonb, key for key (docs/decisions/2026-12-07-lean-transitions.md).
--
-- jsonb_build_object classifies each of its 46 arguments (23 keys, 23 values) at every call, through the system
-- caches; to_jsonb of a row of a named composite type takes the keys from the type's attribute names and classifies
-- only the 23 values. Every transition writes an event per job (create, claim, outcome): on the shared 2-core machine
-- 8.5 → 6.0 µs of CPU per event (20,000 rows, median of 7). This migration adds the type; conveyor_job_data's new
-- body, which uses it, is in its source file (packages/db/sql/functions/conveyor_job_json.sql), applied after the
-- migrations.

-- The fields of the job an event carries, in the order and with the names its JSON has always had.
CREATE TYPE conveyor_job_data_fields AS (
  id uuid,
  type text,
  status job_status,
  retries integer,
  max_retries integer,
  created_at text,
  updated_at text,
  run_at text,
  priority smallint,
  replay_of uuid,
  schedule_id uuid,
  cancel_requested_at text,
  concurrency_key text,
  concurrency_limit smallint,
  rate_limit text,
  timeout_ms integer,
  dedupe_key text,
  debounce_key text,
  started_at text,
  finished_at text,
  result jsonb,
  error text,
  progress jsonb
);
