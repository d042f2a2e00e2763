-- What holds back a job that is due: its queue paused, a rate limit, its concurrency key, its organization's
-- concurrency, or no worker (docs/reference/flow-control.md#why-a-job-waits); NULL when nothing does.
-- For an organization's own type (docs/reference/lifecycle.md#your-own-workers), served by that organization's
-- protocol workers only, never by the built-in workers whose slots type_state records, "no_worker" is whether a
-- protocol worker of the organization that serves the type is live (its last lease call within GONE_BEATS = 3 of
-- its intervals, as GET /workers says "running").
CREATE OR REPLACE FUNCTION conveyor_hold(p_type text, p_org uuid, p_key text, p_key_limit int, p_rate_limit text)
RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN coalesce(qs.paused, false) THEN 'queue_paused'
    WHEN ts.paused_until > now()
      OR (ts.rate_limit IS NOT NULL AND conveyor_window_used(ts.starts, ts.rate_period_ms) >= ts.rate_limit)
      OR EXISTS (SELECT 1 FROM rate_limits r
                  WHERE r.org_id = p_org AND r.name IN (p_rate_limit, qs.rate_limit)
                    AND conveyor_window_used(r.starts, r.period_ms) >= r."limit") THEN 'rate_limit'
    WHEN p_key IS NOT NULL
      AND (SELECT count(*) FROM job_queue k
            WHERE k.org_id = p_org AND k.concurrency_key = p_key AND k.dispatched_at IS NOT NULL) >= coalesce(p_key_limit, 1) THEN 'concurrency_key'
    WHEN coalesce(qs.concurrency_limit, nullif(ts.org_concurrency_limit, 0)) IS NOT NULL
      AND (SELECT count(*) FROM job_queue f
            WHERE f.type = p_type AND f.org_id = p_org AND f.dispatched_at IS NOT NULL) >= coalesce(qs.concurrency_limit, nullif(ts.org_concurrency_limit, 0)) THEN 'org_concurrency'
    WHEN CASE WHEN EXISTS (SELECT 1 FROM org_job_types o WHERE o.org_id = p_org AND o.name = p_type)
              THEN NOT EXISTS (SELECT 1 FROM protocol_workers w
                                WHERE w.org_id = p_org AND p_type = ANY(w.types)
                                  AND w.heartbeat_at >= now() - make_interval(secs => w.heartbeat_ms * 3::double precision / 1000))
              ELSE coalesce(ts.slots, 0) = 0 OR ts.slots_checked_at < now() - interval '10 seconds' END THEN 'no_worker'
  END
  FROM (SELECT 1) AS one
  LEFT JOIN queue_settings qs ON qs.org_id = p_org AND qs.type = p_type
  LEFT JOIN type_state ts ON ts.type = p_type
$$;
