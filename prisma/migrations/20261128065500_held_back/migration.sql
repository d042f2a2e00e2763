-- "Held back" decided once (SPEC §19). Whether due jobs of one type and organization, with a concurrency key (and its
-- limit) and a rate limit, may start now is this one function: `waiting_for` (conveyor_waiting_for), the backlog
-- gauges (backlog.ts) and GET /queues (flow-control.ts) all ask it, for a job or for a group of jobs alike. The
-- dispatcher and the claim, which take many jobs in one statement, apply the same conditions while counting what they
-- take (dispatch.ts, job-machine/start.ts): a new kind of limit is a branch here and its count there.
-- Answers NULL when nothing holds them back, else the reason, in the order a person should read them.
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
    WHEN coalesce(ts.slots, 0) = 0 OR ts.slots_checked_at < now() - interval '10 seconds' THEN 'no_worker'
  END
  FROM (SELECT 1) AS one
  LEFT JOIN queue_settings qs ON qs.org_id = p_org AND qs.type = p_type
  LEFT JOIN type_state ts ON ts.type = p_type
$$;

-- Why a pending job waits: not yet queued (a waitpoint, or other dependencies), handed over (a worker slot), not due
-- yet (its run_at, a sleep, or its retry's time), or whatever conveyor_hold says of it — else a free worker slot.
CREATE OR REPLACE FUNCTION conveyor_waiting_for(j jobs) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN j.status <> 'pending' THEN NULL ELSE (
    SELECT CASE
      WHEN q.job_id IS NULL THEN
        CASE WHEN EXISTS (SELECT 1 FROM job_dependencies d JOIN waitpoints w ON w.id = d.depends_on_id
                           WHERE d.job_id = j.id AND w.status = 'waiting') THEN 'waitpoint' ELSE 'dependencies' END
      WHEN q.dispatched_at IS NOT NULL THEN 'capacity'
      WHEN q.due_at > now() THEN
        CASE WHEN j.retries > 0 AND NOT EXISTS (SELECT 1 FROM job_steps s WHERE s.job_id = j.id AND s.status = 'sleeping') THEN 'retry' ELSE 'run_at' END
      ELSE coalesce(conveyor_hold(j.type, j.org_id, j.concurrency_key, j.concurrency_limit, j.rate_limit), 'capacity')
    END
    FROM (SELECT 1) AS one
    LEFT JOIN job_queue q ON q.job_id = j.id
  ) END
$$;
