-- A rate limit's window, written once (docs/reference/flow-control.md#rate-limits). A start counts against its limit for the period plus a margin of a
-- fiftieth of it (at most a second), so that workers whose clocks lag Postgres' by a little never start one more than
-- the limit allows in any window of the period. Every reading of a window — how full it is now, how full it will
-- be at the dispatcher's lead, when its oldest start leaves — goes through these two functions.
CREATE OR REPLACE FUNCTION conveyor_window_span(period_ms integer) RETURNS interval LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (period_ms + least(period_ms / 50, 1000)) * interval '1 millisecond'
$$;

-- Starts of the window that are still in it at `at`.
CREATE OR REPLACE FUNCTION conveyor_window_used_at(starts timestamptz[], period_ms integer, at timestamptz) RETURNS integer LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT count(*)::integer FROM unnest(coalesce(starts, ARRAY[]::timestamptz[])) AS s
   WHERE s > at - conveyor_window_span(period_ms)
$$;

-- Starts of the window that are in it now.
CREATE OR REPLACE FUNCTION conveyor_window_used(starts timestamptz[], period_ms integer) RETURNS integer LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT conveyor_window_used_at(starts, period_ms, now())
$$;

-- The window with `n` starts now added, keeping the newest `lim` still in it.
CREATE OR REPLACE FUNCTION conveyor_window_add(starts timestamptz[], period_ms integer, lim integer, n integer) RETURNS timestamptz[] LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(s ORDER BY s), ARRAY[]::timestamptz[]) FROM (
    SELECT s FROM (
      SELECT unnest(coalesce(starts, ARRAY[]::timestamptz[])) AS s
      UNION ALL
      SELECT now() FROM generate_series(1, n)
    ) AS every_start
    WHERE s > now() - conveyor_window_span(period_ms)
    ORDER BY s DESC
    LIMIT lim
  ) AS kept
$$;
