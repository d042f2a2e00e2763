-- The readers' horizon: every event with a smaller id is visible to the calling statement or never will be; an event
-- with a larger one may still commit. The oldest transaction still running in THIS database, found from the calling
-- statement's snapshot: transactions of other databases cannot write these events and do not hold it back.
--
-- A running transaction is passed over only when proven to be another database's: pg_stat_activity (backend_xid,
-- datid) or pg_prepared_xacts (transaction, database), read after the snapshot was taken (pg_stat_clear_snapshot
-- first: a transaction keeps its first reading otherwise). Anything not proven (not visible to this role, gone by
-- the time of reading, no database) is waited for, as before. STABLE: it runs on the calling statement's snapshot,
-- so call it once per statement — `(SELECT conveyor_event_horizon())` or a CTE — and read events in that statement.
-- The proof is in packages/db/src/events/events.ts.
--
-- Cost: a few µs while nothing else runs. Reading pg_stat_activity costs more (it copies every backend's entry), so
-- it is read only when it can help — committed events wait at or above the oldest running transaction not known to
-- be another database's or this one's — and each connection remembers what it found (a transaction's database never
-- changes) in a session setting, conveyor.event_horizon = '{other databases' ids}/{this one's}'. Lost or stale, that
-- memory costs a reading or a wait, never an event: it only ever names transactions that were running.
CREATE OR REPLACE FUNCTION conveyor_event_horizon() RETURNS bigint LANGUAGE plpgsql STABLE AS $$
DECLARE
  snap pg_snapshot := pg_current_snapshot();
  -- This transaction's own id counts like any running one (readers write no events; the old horizon did the same).
  horizon xid8 := LEAST(pg_snapshot_xmax(snap), pg_current_xact_id_if_assigned());
  -- The oldest running transaction id, own included (below xmin every transaction has ended).
  oldest xid8 := pg_snapshot_xmin(snap);
  known text[];
  other xid8[];
  ours xid8[];
  running xid8[];
  here oid;
BEGIN
  IF oldest >= horizon THEN
    RETURN horizon::text::bigint << 20;
  END IF;
  known := string_to_array(current_setting('conveyor.event_horizon', true), '/');
  other := COALESCE(known[1]::xid8[], '{}');
  ours := COALESCE(known[2]::xid8[], '{}');
  IF oldest = ANY (other) THEN
    oldest := (SELECT min(x) FROM pg_snapshot_xip(snap) x WHERE x < horizon AND x <> ALL (other));
  END IF;
  IF oldest IS NULL OR oldest = ANY (ours) THEN
    RETURN LEAST(horizon, oldest)::text::bigint << 20;
  END IF;
  -- Reading pg_stat_activity is worth it only when committed events wait behind the oldest running transaction.
  -- (max(id) reads the end of the primary key; a range test here would get a generic plan, a sequential scan.)
  IF COALESCE((SELECT max(id) FROM events), 0) < oldest::text::bigint << 20 THEN
    RETURN oldest::text::bigint << 20;
  END IF;
  running := ARRAY(SELECT x FROM pg_snapshot_xip(snap) x WHERE x < horizon);
  PERFORM pg_stat_clear_snapshot();
  here := (SELECT oid FROM pg_database WHERE datname = current_database());
  -- backend_xid is a 32-bit xid: every running id lies within 2^31 of the next one, so equal low bits are one id.
  SELECT ARRAY(SELECT x FROM unnest(other) x WHERE x = ANY (running)) || COALESCE(array_agg(r) FILTER (WHERE o.db <> here), '{}'),
         COALESCE(array_agg(r) FILTER (WHERE o.db = here), '{}')
    INTO other, ours
    FROM unnest(running) r
    JOIN (SELECT a.backend_xid AS xid, a.datid AS db FROM pg_stat_get_activity(NULL) a WHERE a.backend_xid IS NOT NULL
          UNION ALL
          SELECT p.transaction, p.dbid FROM pg_prepared_xact() p) o ON o.xid = r::xid;
  known[1] := set_config('conveyor.event_horizon', other::text || '/' || ours::text, false);
  oldest := (SELECT min(x) FROM unnest(running) x WHERE x <> ALL (other));
  RETURN LEAST(horizon, oldest)::text::bigint << 20;
END $$;
