-- When the job's last attempt started (issue 23: a duration column in the jobs list). Written by the start
-- transition in the same row update that sets 'processing', so it costs no extra write. Jobs that ran before this
-- migration keep null (their attempts' times are in their events: GET /jobs/{id}/attempts).
ALTER TABLE "jobs" ADD COLUMN "started_at" TIMESTAMPTZ(3);

-- The list item (and the job, and graph nodes) carries when the last attempt started and when the job finished.
CREATE OR REPLACE FUNCTION conveyor_job_item(j jobs) RETURNS json LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT json_build_object(
    'id', j.id, 'type', j.type, 'status', j.status, 'retries', j.retries, 'max_retries', j.max_retries,
    'created_at', conveyor_iso(j.created_at), 'updated_at', conveyor_iso(j.updated_at),
    'run_at', conveyor_iso(j.run_at), 'priority', j.priority, 'replay_of', j.replay_of,
    'schedule_id', j.schedule_id, 'cancel_requested_at', conveyor_iso(j.cancel_requested_at),
    'concurrency_key', j.concurrency_key, 'concurrency_limit', j.concurrency_limit, 'rate_limit', j.rate_limit,
    'timeout_ms', j.timeout_ms, 'dedupe_key', j.dedupe_key, 'debounce_key', j.debounce_key,
    'waiting_for', conveyor_waiting_for(j),
    'started_at', conveyor_iso(j.started_at), 'finished_at', conveyor_iso(j.finished_at))
$$;

-- Events carry the job as it was, so the same two times (a job.succeeded says when its attempt started and ended).
CREATE OR REPLACE FUNCTION conveyor_job_data(j jobs) RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'id', j.id, 'type', j.type, 'status', j.status, 'retries', j.retries, 'max_retries', j.max_retries,
    'created_at', conveyor_iso(j.created_at), 'updated_at', conveyor_iso(j.updated_at),
    'run_at', conveyor_iso(j.run_at), 'priority', j.priority, 'replay_of', j.replay_of,
    'schedule_id', j.schedule_id, 'cancel_requested_at', conveyor_iso(j.cancel_requested_at),
    'concurrency_key', j.concurrency_key, 'concurrency_limit', j.concurrency_limit, 'rate_limit', j.rate_limit,
    'timeout_ms', j.timeout_ms, 'dedupe_key', j.dedupe_key, 'debounce_key', j.debounce_key,
    'started_at', conveyor_iso(j.started_at), 'finished_at', conveyor_iso(j.finished_at),
    'result', j.result, 'error', j.error)
$$;
