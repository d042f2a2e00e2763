-- The exact quota check of a job write (docs/reference/tenants.md#usage-quotas-and-backpressure), called by
-- packages/db/src/usage under the organization's advisory lock (36); raises CQ036 naming the quota exceeded.

-- What every quota block may still add counts as used.
CREATE OR REPLACE FUNCTION conveyor_enforce_quotas(p_org uuid, p_at timestamptz, p_day bigint, p_month bigint, p_pending bigint, p_bytes bigint)
  RETURNS float8 LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  asked timestamptz := clock_timestamp();
  waited float8;
  today date := (p_at AT TIME ZONE 'UTC')::date;
  used bigint;
  held bigint;
  b_day bigint;
  b_month bigint;
  b_pending bigint;
  b_bytes bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(36, hashtext(p_org::text));
  waited := extract(epoch FROM clock_timestamp() - asked) * 1000;
  SELECT coalesce(sum(jobs) FILTER (WHERE day = today), 0), coalesce(sum(jobs) FILTER (WHERE day >= date_trunc('month', today)::date AND day <= today), 0),
         coalesce(sum(pending_jobs) FILTER (WHERE day >= today - 1), 0), coalesce(sum(bytes) FILTER (WHERE day >= today - 1), 0)
    INTO b_day, b_month, b_pending, b_bytes FROM quota_blocks WHERE org_id = p_org;
  IF p_day IS NOT NULL THEN
    SELECT coalesce(sum(jobs_created), 0) + b_day INTO used FROM usage_counts WHERE org_id = p_org AND day = today;
    IF used > p_day THEN RAISE EXCEPTION USING ERRCODE = 'CQ036', MESSAGE = 'jobs_per_day', DETAIL = used::text; END IF;
  END IF;
  IF p_month IS NOT NULL THEN
    SELECT coalesce(sum(jobs_created), 0) + b_month INTO used FROM usage_counts
     WHERE org_id = p_org AND day >= date_trunc('month', today)::date AND day <= today;
    IF used > p_month THEN RAISE EXCEPTION USING ERRCODE = 'CQ036', MESSAGE = 'jobs_per_month', DETAIL = used::text; END IF;
  END IF;
  IF p_pending IS NOT NULL OR p_bytes IS NOT NULL THEN
    SELECT coalesce(sum(pending_jobs), 0) + b_pending, coalesce(sum(bytes), 0) + b_bytes INTO used, held FROM stored_payload_bytes WHERE org_id = p_org;
    IF used > p_pending THEN RAISE EXCEPTION USING ERRCODE = 'CQ036', MESSAGE = 'pending_max', DETAIL = used::text; END IF;
    IF held > p_bytes THEN RAISE EXCEPTION USING ERRCODE = 'CQ036', MESSAGE = 'payload_bytes_max', DETAIL = held::text; END IF;
  END IF;
  RETURN waited;
END
$$;
