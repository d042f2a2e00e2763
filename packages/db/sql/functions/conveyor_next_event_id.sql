-- The id of this transaction's next event: (transaction id << 20) + how many events it wrote already. Ids grow in
-- the order transactions took their ids, a reader that stops below (oldest running transaction << 20) never skips
-- an event that commits later (packages/db/src/events/events.ts). The same arithmetic as before, in PL/pgSQL: a
-- VOLATILE SQL function is parsed and planned again at every call — every transition's statement calls it once —
-- where PL/pgSQL keeps its query's plan for the connection (≈ 0.3 ms → 0.03 ms a call on the shared 2-core machine).
CREATE OR REPLACE FUNCTION conveyor_next_event_id() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  base bigint := pg_current_xact_id()::text::bigint << 20;
BEGIN
  RETURN base + (SELECT count(*) FROM events WHERE id >= base AND id < base + 1048576);
END
$$;
