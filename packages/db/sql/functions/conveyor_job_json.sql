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

-- The event's data as to_jsonb of a row of conveyor_job_data_fields, whose attributes are JOB_EVENT_FIELDS' names in
-- jsonb's own key order (shorter first, then bytewise; migration 20261207160000_event_data_in_key_order): jsonb stores
-- an object's keys sorted whatever order they came in, so the values are listed here in that order and the sort finds
-- them sorted — the same jsonb, key for key and byte for byte (docs/decisions/2026-12-07-event-data-in-key-order.md).
-- to_jsonb rather than jsonb_build_object: the keys come from the type, only the 23 values are classified at every
-- call; one expression, which the planner inlines (docs/decisions/2026-12-07-lean-transitions.md).
CREATE OR REPLACE FUNCTION conveyor_job_data(j jobs) RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT to_jsonb(ROW(
    j.id, j.type, j.error, j.result, conveyor_iso(j.run_at), j.status, j.retries, j.priority, j.progress,
    j.replay_of, conveyor_iso(j.created_at), j.dedupe_key, j.rate_limit, conveyor_iso(j.started_at), j.timeout_ms,
    conveyor_iso(j.updated_at), conveyor_iso(j.finished_at), j.max_retries, j.schedule_id,
    j.debounce_key, j.concurrency_key, j.concurrency_limit, conveyor_iso(j.cancel_requested_at))::conveyor_job_data_fields)
$$;
