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
