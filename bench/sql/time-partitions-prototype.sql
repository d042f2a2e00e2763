-- Time partitions, a prototype (docs/reference/time.md#partitions-and-retention, docs/reference/robustness.md#r58; design in docs/decisions/2026-12-06-time-partitions.md).
-- NOT a migration: it builds partitioned twins (tp_*) of jobs, events, job_logs and job_search beside the real tables
-- of a scratch database, so bench/tools/partitions.ts can time retention by dropping partitions against today's
-- batched DELETE on the same rows. Run only on a private server.
--
-- The key: the job's UUID v7 id, whose first 48 bits are its creation time in ms. jobs is partitioned by RANGE (id)
-- and what hangs off a job by RANGE (job_id) with the same bounds (one UTC day each), so a job and its events, logs
-- and search values always sit in partitions of the same day and go together; the primary key (id) needs no change
-- and a read by id prunes to one partition. A DEFAULT partition per table holds what has no day partition: the rows
-- a retention pass keeps (a job still waiting, one a live job depends on) and, should the leader not have made a
-- day ahead (down for days, a clock ahead), new jobs — an insert never fails for want of a partition.

-- The smallest UUID v7 of a moment: its ms in the first 48 bits, version 7, every other bit 0.
CREATE OR REPLACE FUNCTION tp_uuid_at(t timestamptz) RETURNS uuid LANGUAGE sql IMMUTABLE AS $$
  SELECT (lpad(to_hex(floor(extract(epoch FROM t) * 1000)::bigint), 12, '0') || '70008000000000000000')::uuid
$$;

-- The tables partitioned, and the column each is partitioned by.
CREATE OR REPLACE FUNCTION tp_tables() RETURNS TABLE (name text, key text) LANGUAGE sql IMMUTABLE AS $$
  VALUES ('tp_jobs', 'id'), ('tp_events', 'job_id'), ('tp_job_logs', 'job_id'), ('tp_job_search', 'job_id')
$$;

-- The columns an INSERT … SELECT may name (not the generated failure_group).
CREATE OR REPLACE FUNCTION tp_columns(tbl text) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position)
    FROM information_schema.columns WHERE table_schema = 'public' AND table_name = tbl AND is_generated = 'NEVER'
$$;

DROP TABLE IF EXISTS tp_jobs, tp_events, tp_job_logs, tp_job_search CASCADE;
CREATE TABLE tp_jobs (LIKE jobs INCLUDING DEFAULTS INCLUDING GENERATED) PARTITION BY RANGE (id);
CREATE TABLE tp_events (LIKE events INCLUDING DEFAULTS) PARTITION BY RANGE (job_id);
CREATE TABLE tp_job_logs (LIKE job_logs INCLUDING DEFAULTS) PARTITION BY RANGE (job_id);
CREATE TABLE tp_job_search (LIKE job_search INCLUDING DEFAULTS) PARTITION BY RANGE (job_id);
CREATE TABLE tp_jobs_default PARTITION OF tp_jobs DEFAULT;
CREATE TABLE tp_events_default PARTITION OF tp_events DEFAULT;
CREATE TABLE tp_job_logs_default PARTITION OF tp_job_logs DEFAULT;
CREATE TABLE tp_job_search_default PARTITION OF tp_job_search DEFAULT;

-- Every index of the real tables, on the twins (a unique one must hold the partition key: events' and job_logs'
-- primary keys become (job_id, id), which their (job_id, id) indexes already were).
DO $$
DECLARE
  r record;
  def text;
BEGIN
  FOR r IN SELECT i.tablename, i.indexname, i.indexdef FROM pg_indexes i
            WHERE i.schemaname = 'public' AND i.tablename IN ('jobs', 'events', 'job_logs', 'job_search') LOOP
    def := replace(r.indexdef, ' ON public.' || r.tablename || ' ', ' ON public.tp_' || r.tablename || ' ');
    def := replace(def, 'INDEX ' || r.indexname || ' ', 'INDEX tp_' || r.indexname || ' ');
    IF r.tablename IN ('events', 'job_logs') AND r.indexname = r.tablename || '_pkey' THEN
      def := 'CREATE UNIQUE INDEX tp_' || r.indexname || ' ON public.tp_' || r.tablename || ' USING btree (job_id, id)';
    END IF;
    EXECUTE def;
  END LOOP;
END $$;

-- The leader's duty: a partition per UTC day from `from_day` to `to_day` for each table, made when missing. Rows of
-- that day already in the DEFAULT partition (jobs created while none was ready) are moved into the new one: the
-- default is detached, the day made, its rows moved, and the default attached again, in one transaction.
CREATE OR REPLACE FUNCTION tp_make_partitions(from_day date, to_day date) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  d date;
  t record;
  part text;
  lo uuid;
  hi uuid;
  made int := 0;
  strays boolean;
BEGIN
  FOR d IN SELECT generate_series(from_day, to_day, interval '1 day')::date LOOP
    lo := tp_uuid_at(d::timestamp AT TIME ZONE 'UTC');
    hi := tp_uuid_at((d + 1)::timestamp AT TIME ZONE 'UTC');
    FOR t IN SELECT * FROM tp_tables() LOOP
      part := t.name || '_' || to_char(d, 'YYYYMMDD');
      CONTINUE WHEN to_regclass(part) IS NOT NULL;
      EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE %I >= $1 AND %I < $2)', t.name || '_default', t.key, t.key) INTO strays USING lo, hi;
      IF strays THEN
        EXECUTE format('ALTER TABLE %I DETACH PARTITION %I', t.name, t.name || '_default');
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', part, t.name, lo, hi);
        EXECUTE format('INSERT INTO %I (%s) SELECT %s FROM %I WHERE %I >= $1 AND %I < $2', t.name, tp_columns(t.name), tp_columns(t.name),
                       t.name || '_default', t.key, t.key) USING lo, hi;
        EXECUTE format('DELETE FROM %I WHERE %I >= $1 AND %I < $2', t.name || '_default', t.key, t.key) USING lo, hi;
        EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I DEFAULT', t.name, t.name || '_default');
      ELSE
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', part, t.name, lo, hi);
      END IF;
      made := made + 1;
    END LOOP;
  END LOOP;
  RETURN made;
END $$;

-- Retention of one day. First, with the day's partitions still attached and locked in SHARE mode (reads go on; a write
-- to a job of that day, such as a retry of an old failed job, waits for the pass), it reads which jobs must outlive
-- the day (not final, finished after the cut-off, or depended on by a job still live) and takes the failed jobs that
-- go off failure_counts. Only then does it detach the four partitions — the parents' ACCESS EXCLUSIVE lock, held from
-- here to the commit — and copy the kept jobs back through the parents (they land in DEFAULT, no day partition being
-- there any more) with their events, logs and search values. The detached tables are left for the caller to DROP
-- after the commit (a DROP of a detached table locks nothing the queries use). Answers the jobs that went and were kept.
CREATE OR REPLACE FUNCTION tp_retire_day(d date, cutoff timestamptz, OUT gone bigint, OUT kept bigint) LANGUAGE plpgsql AS $$
DECLARE
  suffix text := '_' || to_char(d, 'YYYYMMDD');
  t record;
BEGIN
  FOR t IN SELECT * FROM tp_tables() LOOP
    EXECUTE format('LOCK TABLE %I IN SHARE MODE', t.name || suffix);
  END LOOP;
  EXECUTE format(
    $q$CREATE TEMP TABLE tp_kept ON COMMIT DROP AS
       SELECT x.id FROM %I x
        WHERE NOT (x.status IN ('done', 'failed', 'cancelled') AND x.finished_at < $1)
           OR (x.dependents > 0 AND EXISTS (SELECT 1 FROM job_dependencies dep JOIN tp_jobs w ON w.id = dep.job_id
                                             WHERE dep.depends_on_id = x.id AND w.status IN ('pending', 'processing')))$q$,
    'tp_jobs' || suffix) USING cutoff;
  SELECT count(*) INTO kept FROM tp_kept;
  -- GET /jobs/failures counts the failed jobs there are (failure-groups.ts): what goes is taken off, by group.
  EXECUTE format(
    $q$UPDATE failure_counts c SET failed = c.failed - g.n
         FROM (SELECT org_id, failure_group, count(*)::int AS n FROM %I
                WHERE status = 'failed' AND failure_group IS NOT NULL AND id NOT IN (SELECT id FROM tp_kept)
                GROUP BY 1, 2 ORDER BY 1, 2) g
        WHERE c.org_id = g.org_id AND c.failure_group = g.failure_group$q$,
    'tp_jobs' || suffix);
  EXECUTE format('SELECT count(*) FROM %I', 'tp_jobs' || suffix) INTO gone;
  gone := gone - kept;
  FOR t IN SELECT * FROM tp_tables() ORDER BY name = 'tp_jobs' LOOP  -- what hangs off a job first, jobs last
    EXECUTE format('ALTER TABLE %I DETACH PARTITION %I', t.name, t.name || suffix);
  END LOOP;
  EXECUTE format('INSERT INTO tp_jobs (%s) SELECT %s FROM %I WHERE id IN (SELECT id FROM tp_kept)',
                 tp_columns('tp_jobs'), tp_columns('tp_jobs'), 'tp_jobs' || suffix);
  FOR t IN SELECT * FROM tp_tables() WHERE name <> 'tp_jobs' LOOP
    EXECUTE format('INSERT INTO %I (%s) SELECT %s FROM %I WHERE job_id IN (SELECT id FROM tp_kept)',
                   t.name, tp_columns(t.name), tp_columns(t.name), t.name || suffix);
  END LOOP;
END $$;
