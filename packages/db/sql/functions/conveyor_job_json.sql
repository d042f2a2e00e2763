-- A job as the API shows it, without its payload, written once with the field lists of
-- packages/contracts/src/job-shape.ts (packages/db/test/job-shape.test.ts fails when they differ): GET /jobs items,
-- graph nodes and the start of GET /jobs/{id} are conveyor_job_item, in JOB_ITEM_FIELDS' order (json keeps it); an
-- event's data, the job as it was, is conveyor_job_data: JOB_EVENT_FIELDS, without waiting_for (a reading of the
-- present, and the dearest field) and with result and error. Two bodies, not one built from the other: the item must
-- keep its order (json) and the event must not pay for waiting_for.
CREATE OR REPLACE FUNCTION conveyor_job_item(j jobs) RETURNS json LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT json_build_object(
    'id', j.id, 'type', j.type, 'status', j.status, 'retries', j.retries, 'max_retries', j.max_retries,
    'created_at', conveyor_iso(j.created_at), 'updated_at', conveyor_iso(j.updated_at),
    'run_at', conveyor_iso(j.run_at), 'priority', j.priority, 'replay_of', j.replay_of,
    'schedule_id', j.schedule_id, 'cancel_requested_at', conveyor_iso(j.cancel_requested_at),
    'concurrency_key', j.concurrency_key, 'concurrency_limit', j.concurrency_limit, 'rate_limit', j.rate_limit,
    'timeout_ms', j.timeout_ms, 'dedupe_key', j.dedupe_key, 'debounce_key', j.debounce_key,
    'waiting_for', conveyor_waiting_for(j),
    'started_at', conveyor_iso(j.started_at), 'finished_at', conveyor_iso(j.finished_at),
    'progress', j.progress)
$$;

CREATE OR REPLACE FUNCTION conveyor_job_data(j jobs) RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'id', j.id, 'type', j.type, 'status', j.status, 'retries', j.retries, 'max_retries', j.max_retries,
    'created_at', conveyor_iso(j.created_at), 'updated_at', conveyor_iso(j.updated_at),
    'run_at', conveyor_iso(j.run_at), 'priority', j.priority, 'replay_of', j.replay_of,
    'schedule_id', j.schedule_id, 'cancel_requested_at', conveyor_iso(j.cancel_requested_at),
    'concurrency_key', j.concurrency_key, 'concurrency_limit', j.concurrency_limit, 'rate_limit', j.rate_limit,
    'timeout_ms', j.timeout_ms, 'dedupe_key', j.dedupe_key, 'debounce_key', j.debounce_key,
    'started_at', conveyor_iso(j.started_at), 'finished_at', conveyor_iso(j.finished_at),
    'result', j.result, 'error', j.error, 'progress', j.progress)
$$;
