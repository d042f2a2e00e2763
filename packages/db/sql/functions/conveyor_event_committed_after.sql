-- Whether the event's transaction had not committed when `snapshot` was taken (its id is (transaction id << 20) + n).
CREATE OR REPLACE FUNCTION conveyor_event_committed_after(event_id bigint, snapshot pg_snapshot) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT NOT pg_visible_in_snapshot((event_id >> 20)::text::xid8, snapshot)
$$;
