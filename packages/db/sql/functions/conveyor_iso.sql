-- A time as the API writes it: UTC, milliseconds, a Z (2026-12-07T03:40:00.000Z).
CREATE OR REPLACE FUNCTION conveyor_iso(t timestamptz) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;
