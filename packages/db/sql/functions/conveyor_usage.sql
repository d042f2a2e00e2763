-- Usage counted where jobs and deliveries are written (docs/reference/tenants.md#usage-quotas-and-backpressure):
-- statement-level triggers of jobs (AFTER DELETE) and webhook_deliveries (AFTER INSERT) with transition tables,
-- adding to usage_counts and stored_payload_bytes in the stripe conveyor_usage_stripe gives the backend. Jobs created,
-- attempts and pending-job changes are counted by the job machine's own statements (create.ts, countUsage).

-- Issue 36, the cost of usage metering on POST /jobs: waits on counter rows. A transaction adds to the stripe of its
-- backend, and two concurrent inserts of one organization whose backends share a stripe queue on that row until the
-- first commits (its WAL flush). With the stripe taken as pg_backend_pid() % 16, an API pool of 10 connections has two
-- sharing a stripe almost always (1 − 16·15·…·7 / 16^10 ≈ 0.96); forced into one stripe, four pgbench clients inserting
-- 16 jobs a statement ran about half as fast as four spread over stripes (docs/performance.md). Now each backend holds
-- a stripe of its own while it lives: the first time it counts usage it takes the first free one of 64 from its pid
-- on, marked by a session advisory lock (classid 37, a key space no other lock uses; the lock goes with the backend, so
-- a stripe frees itself when its connection closes, crash or not), and keeps the number in a session setting. Only
-- when 64 backends hold one each does a backend share one (pid % 64). Readers sum the stripes whatever their number,
-- and the fold leaves finished days one row each. The triggers call this in the select list of their grouped sums:
-- once per organization and type counted, not per job, and not at all for a statement that counts nothing.
CREATE OR REPLACE FUNCTION conveyor_usage_stripe() RETURNS smallint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  held text := current_setting('conveyor.usage_stripe', true);
  k int;
BEGIN
  IF held IS NOT NULL AND held <> '' THEN
    RETURN held::smallint;
  END IF;
  -- A session setting made in a transaction that rolls back is undone, the session lock is not: taking it again is
  -- granted at once (session advisory locks are reentrant), so the same stripe is found.
  FOR i IN 0..63 LOOP
    k := (pg_backend_pid() + i) % 64;
    IF pg_try_advisory_lock(37, k) THEN
      PERFORM set_config('conveyor.usage_stripe', k::text, false);
      RETURN k;
    END IF;
  END LOOP;
  k := pg_backend_pid() % 64;
  PERFORM set_config('conveyor.usage_stripe', k::text, false);
  RETURN k;
END
$$;

-- Stored payload bytes and pending jobs given back when jobs are deleted (not when their organization is).
CREATE OR REPLACE FUNCTION conveyor_usage_jobs_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stored_payload_bytes AS s (org_id, stripe, bytes, pending_jobs)
  SELECT o.org_id, conveyor_usage_stripe(), -sum(octet_length(o.payload::text)), -count(*) FILTER (WHERE o.status = 'pending')
    FROM usage_old_jobs o
   WHERE left(o.type, 1) <> '_' AND EXISTS (SELECT 1 FROM organizations g WHERE g.id = o.org_id)
   GROUP BY 1 ORDER BY 1
  ON CONFLICT (org_id, stripe) DO UPDATE SET bytes = s.bytes + EXCLUDED.bytes, pending_jobs = s.pending_jobs + EXCLUDED.pending_jobs;
  RETURN NULL;
END
$$;

-- Every delivery attempt recorded is a webhook delivery, counted under the type of the job its event is about (a test
-- event, about no job, under its delivery job's type).
CREATE OR REPLACE FUNCTION conveyor_usage_deliveries_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO usage_counts AS u (org_id, day, type, stripe, webhook_deliveries)
  SELECT e.org_id, (d.at AT TIME ZONE 'UTC')::date, coalesce(s.type, j.type, '_webhook'), conveyor_usage_stripe(), count(*)
    FROM usage_new_deliveries d
    JOIN webhook_endpoints e ON e.id = d.endpoint_id
    LEFT JOIN jobs s ON s.id = d.subject_job_id
    LEFT JOIN jobs j ON j.id = d.job_id
   GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (org_id, day, type, stripe) DO UPDATE SET webhook_deliveries = u.webhook_deliveries + EXCLUDED.webhook_deliveries;
  RETURN NULL;
END
$$;
