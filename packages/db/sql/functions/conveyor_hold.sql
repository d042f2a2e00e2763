-- "Held back", written once (docs/reference/flow-control.md#why-a-job-waits,
-- docs/decisions/2026-12-07-held-back-once.md): each condition that keeps a due job from starting is one function
-- here, and conveyor_hold composes them for `waiting_for`, the backlog gauges and GET /queues. The dispatcher's limits
-- and candidates (flow/flow-control.ts, job-machine/hand-over.ts) and the claims (job-machine/start.ts) call the same
-- functions over their sets. Every one is inlined by Postgres into the statement that calls it, so a claim of 100
-- jobs runs the probes it ran when it wrote them by hand: a condition of the settings is a function of the settings'
-- row (`qs`: the organization's queue_settings row of the type, `ts`: the type's type_state row; NULL when there is
-- none), read once by the caller; a condition that counts jobs is a set-returning function answering a row when it
-- holds, asked as `EXISTS (SELECT FROM conveyor_…(…))`. (A scalar SQL function that reads a table is never inlined:
-- called once per claimed job, such functions cost +90 µs of Postgres per job.) `p_job` is the job asking when it is
-- itself handed over (the claim), so that it does not count against its own key or cap; NULL for a job in line.

-- The organization paused its queue of the type.
CREATE OR REPLACE FUNCTION conveyor_queue_paused(qs queue_settings) RETURNS boolean LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT coalesce(qs.paused, false)
$$;

-- Until when a provider's 429 (Retry-After) paused the type, deployment-wide; NULL when it is not paused.
CREATE OR REPLACE FUNCTION conveyor_type_paused_until(ts type_state) RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN ts.paused_until > now() THEN ts.paused_until END
$$;

-- Starts an organization's rate limit still allows in its window at `p_at` (now, or the dispatcher's lead).
CREATE OR REPLACE FUNCTION conveyor_rate_left(r rate_limits, p_at timestamptz) RETURNS integer LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT r."limit" - conveyor_window_used_at(r.starts, r.period_ms, p_at)
$$;

-- Starts the type's deployment-wide rate limit (TYPE_RATE_LIMITS) still allows at `p_at`; NULL when it has none.
CREATE OR REPLACE FUNCTION conveyor_rate_left(t type_state, p_at timestamptz) RETURNS integer LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT t.rate_limit - conveyor_window_used_at(t.starts, t.rate_period_ms, p_at)
$$;

-- A rate limit of the organization's, of those named (the job's, its queue's), has no start left now.
CREATE OR REPLACE FUNCTION conveyor_rate_spent(p_org uuid, p_names text[]) RETURNS SETOF boolean LANGUAGE sql STABLE PARALLEL SAFE ROWS 1 AS $$
  SELECT true FROM rate_limits r WHERE r.org_id = p_org AND r.name = ANY(p_names) AND conveyor_rate_left(r, now()) <= 0
$$;

-- Jobs handed over or running per concurrency key of the organizations `p_orgs`, other than `p_job`: the dispatcher
-- reads it for all the keys of the organizations it serves in a round, a claim or `waiting_for` for one key (its
-- conditions on a key are pushed down to the index, job_queue_key_in_flight_idx).
CREATE OR REPLACE FUNCTION conveyor_keys_in_flight(p_orgs uuid[], p_job uuid) RETURNS TABLE (org_id uuid, concurrency_key text, n integer)
LANGUAGE sql STABLE PARALLEL SAFE ROWS 10 AS $$
  SELECT k.org_id, k.concurrency_key, count(*)::integer FROM job_queue k
   WHERE k.org_id = ANY(p_orgs) AND k.concurrency_key IS NOT NULL AND k.dispatched_at IS NOT NULL AND k.job_id IS DISTINCT FROM p_job
   GROUP BY k.org_id, k.concurrency_key
$$;

-- The job's concurrency key (at most `p_limit`, default 1, at once) has no room for it.
CREATE OR REPLACE FUNCTION conveyor_key_full(p_org uuid, p_key text, p_limit integer, p_job uuid) RETURNS SETOF boolean LANGUAGE sql STABLE PARALLEL SAFE ROWS 1 AS $$
  SELECT true FROM conveyor_keys_in_flight(ARRAY[p_org], p_job) AS k WHERE k.concurrency_key = p_key AND k.n >= coalesce(p_limit, 1)
$$;

-- The organization's cap on its jobs of the type in flight: its queue's setting (`p_queue_cap`, queue_settings'
-- concurrency_limit), else the deployment's ORG_CONCURRENCY_LIMIT as the dispatcher recorded it (`p_deployment_cap`,
-- type_state's org_concurrency_limit; 0: none); NULL when there is none. Columns rather than rows: a row passed into
-- a subquery (the count of conveyor_org_full) is built whole for every job.
CREATE OR REPLACE FUNCTION conveyor_org_cap(p_queue_cap integer, p_deployment_cap integer) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(p_queue_cap, nullif(p_deployment_cap, 0))
$$;

-- Jobs of the organization's type handed over or running, other than `p_job`.
CREATE OR REPLACE FUNCTION conveyor_org_in_flight(p_org uuid, p_type text, p_job uuid) RETURNS SETOF integer LANGUAGE sql STABLE PARALLEL SAFE ROWS 1 AS $$
  SELECT count(*)::integer FROM job_queue f
   WHERE f.type = p_type AND f.org_id = p_org AND f.dispatched_at IS NOT NULL AND f.job_id IS DISTINCT FROM p_job
$$;

-- The organization's cap `p_cap` (conveyor_org_cap) on the type has no room for the job; its jobs in flight are
-- counted only under a cap.
CREATE OR REPLACE FUNCTION conveyor_org_full(p_org uuid, p_type text, p_cap integer, p_job uuid) RETURNS SETOF boolean LANGUAGE sql STABLE PARALLEL SAFE ROWS 1 AS $$
  SELECT true FROM conveyor_org_in_flight(p_org, p_type, p_job) AS n WHERE p_cap IS NOT NULL AND n >= p_cap
$$;

-- No worker serves the type. For an organization's own type (docs/reference/lifecycle.md#your-own-workers), served by
-- that organization's protocol workers only, never by the built-in workers whose slots type_state records: no
-- protocol worker of the organization that serves the type is live (its last lease call within GONE_BEATS = 3 of its
-- intervals, as GET /workers says "running"). Otherwise: no slot in `ts`, or the dispatcher has not said so for 10 s.
CREATE OR REPLACE FUNCTION conveyor_no_worker(p_org uuid, p_type text, ts type_state) RETURNS SETOF boolean LANGUAGE sql STABLE PARALLEL SAFE ROWS 1 AS $$
  SELECT true WHERE CASE
    WHEN EXISTS (SELECT 1 FROM org_job_types o WHERE o.org_id = p_org AND o.name = p_type)
      THEN NOT EXISTS (SELECT 1 FROM protocol_workers w
                        WHERE w.org_id = p_org AND p_type = ANY(w.types)
                          AND w.heartbeat_at >= now() - make_interval(secs => w.heartbeat_ms * 3::double precision / 1000))
    ELSE coalesce(ts.slots, 0) = 0 OR coalesce(ts.slots_checked_at < now() - interval '10 seconds', false) END
$$;

-- What holds back a job that is due and still in line, the first that applies: its queue paused, a rate limit (the
-- type paused after a 429, or a window spent), its concurrency key, its organization's cap, no worker; NULL when
-- nothing does.
CREATE OR REPLACE FUNCTION conveyor_hold(p_type text, p_org uuid, p_key text, p_key_limit int, p_rate_limit text)
RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN conveyor_queue_paused(qs) THEN 'queue_paused'
    WHEN conveyor_type_paused_until(ts) IS NOT NULL OR conveyor_rate_left(ts, now()) <= 0
      OR EXISTS (SELECT FROM conveyor_rate_spent(p_org, ARRAY[p_rate_limit, qs.rate_limit])) THEN 'rate_limit'
    WHEN EXISTS (SELECT FROM conveyor_key_full(p_org, p_key, p_key_limit, NULL)) THEN 'concurrency_key'
    WHEN EXISTS (SELECT FROM conveyor_org_full(p_org, p_type, conveyor_org_cap(qs.concurrency_limit, ts.org_concurrency_limit), NULL)) THEN 'org_concurrency'
    WHEN EXISTS (SELECT FROM conveyor_no_worker(p_org, p_type, ts)) THEN 'no_worker'
  END
  FROM (SELECT 1) AS one
  LEFT JOIN queue_settings qs ON qs.org_id = p_org AND qs.type = p_type
  LEFT JOIN type_state ts ON ts.type = p_type
$$;
