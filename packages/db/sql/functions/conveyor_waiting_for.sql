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
