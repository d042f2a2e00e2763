-- The job "as it was" in an event, and a failed job's failure group, for less CPU at every transition; what is stored
-- is the same, byte for byte (issue 43, docs/reference/lifecycle.md#storage-and-leases,
-- docs/decisions/2026-12-07-event-data-in-key-order.md).
--
-- 1. jsonb keeps an object's keys sorted (shorter keys first, then bytewise), whatever order they were built in:
--    to_jsonb of a row sorts its attributes' names at every call. conveyor_job_data_fields had them in the order of
--    the API's job (JOB_EVENT_FIELDS); here they are in jsonb's own order, so the sort finds them sorted. The value is
--    the same jsonb: the keys and values did not change, only the order in which they are handed over.
-- 2. conveyor_failure_group, the stored generated column jobs.failure_group's function, in PL/pgSQL: as a SQL
--    function Postgres inlined it (and conveyor_normalise_error's eight regular expressions in it), parsing both
--    bodies again, at the start of every statement that writes jobs — also when no row has an error. A PL/pgSQL
--    function is not inlined; STRICT, it is not even called for a row without an error. The same text for the same
--    arguments: nothing stored is computed again.
--
-- Both functions are carried here as their source files have them (packages/db/sql/functions/conveyor_job_json.sql,
-- conveyor_failure_group.sql): the type is replaced under the function in one transaction.

CREATE TYPE conveyor_job_data_fields_sorted AS (
  id uuid,
  type text,
  error text,
  result jsonb,
  run_at text,
  status job_status,
  retries integer,
  priority smallint,
  progress jsonb,
  replay_of uuid,
  created_at text,
  dedupe_key text,
  rate_limit text,
  started_at text,
  timeout_ms integer,
  updated_at text,
  finished_at text,
  max_retries integer,
  schedule_id uuid,
  debounce_key text,
  concurrency_key text,
  concurrency_limit smallint,
  cancel_requested_at text
);
DROP TYPE conveyor_job_data_fields;
ALTER TYPE conveyor_job_data_fields_sorted RENAME TO conveyor_job_data_fields;

CREATE OR REPLACE FUNCTION conveyor_job_data(j jobs) RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT to_jsonb(ROW(
    j.id, j.type, j.error, j.result, conveyor_iso(j.run_at), j.status, j.retries, j.priority, j.progress,
    j.replay_of, conveyor_iso(j.created_at), j.dedupe_key, j.rate_limit, conveyor_iso(j.started_at), j.timeout_ms,
    conveyor_iso(j.updated_at), conveyor_iso(j.finished_at), j.max_retries, j.schedule_id,
    j.debounce_key, j.concurrency_key, j.concurrency_limit, conveyor_iso(j.cancel_requested_at))::conveyor_job_data_fields)
$$;

CREATE OR REPLACE FUNCTION conveyor_failure_group(type text, error text) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  RETURN left(md5($1 || E'\n' || conveyor_normalise_error($2)), 16);
END
$$;
