-- The leader's partition maker (docs/reference/time.md#partitions-and-retention, docs/reference/robustness.md#r58),
-- one partition of one range-partitioned table per call; called by packages/db/src/maintenance/partitions.ts and by the
-- migration that partitioned the audit log and the webhook deliveries.

-- Makes `part`, the partition of `parent` for [lo, hi) of its partition key `key`, unless a table of that name exists;
-- answers whether it made it. Every partitioned table has a DEFAULT partition `<parent>_default` that stores any row no
-- partition exists for (an insert never fails for want of one): when it holds rows of [lo, hi) — the leader was down
-- longer than it makes partitions ahead, a clock ahead — they move into the new partition in this same transaction
-- (Postgres refuses to make a partition whose rows sit in DEFAULT): DEFAULT is detached, the partition made, the rows
-- copied into it and deleted from the detached DEFAULT (whose cloned row triggers went with the detach, so an
-- append-only table's trigger does not refuse this move), and DEFAULT attached again. The rows are inserted into the
-- partition itself, never through the parent, so the parent's statement triggers (usage counts) do not count them twice.
-- A BEFORE TRUNCATE trigger of the parent is given to the partition too: Postgres fires a parent's statement triggers
-- only for statements on the parent, and a TRUNCATE of one partition must be refused as the parent's is.
-- The parent is locked first (ACCESS EXCLUSIVE, as making a partition takes it anyway): an insert waits a moment rather
-- than land in DEFAULT between the check and the move. The caller sets lock_timeout.
CREATE OR REPLACE FUNCTION conveyor_make_partition(parent text, part text, key text, lo text, hi text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  fallback text := parent || '_default';
  strays boolean;
  columns text;
  trigger record;
BEGIN
  IF to_regclass(part) IS NOT NULL THEN
    RETURN false;
  END IF;
  EXECUTE format('LOCK TABLE %I IN ACCESS EXCLUSIVE MODE', parent);
  IF to_regclass(part) IS NOT NULL THEN
    RETURN false;
  END IF;
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE %I >= %L AND %I < %L)', fallback, key, lo, key, hi) INTO strays;
  IF NOT strays THEN
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', part, parent, lo, hi);
  ELSE
    SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO columns
      FROM pg_attribute a
     WHERE a.attrelid = parent::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
    EXECUTE format('ALTER TABLE %I DETACH PARTITION %I', parent, fallback);
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', part, parent, lo, hi);
    EXECUTE format('INSERT INTO %I (%s) SELECT %s FROM %I WHERE %I >= %L AND %I < %L', part, columns, columns, fallback, key, lo, key, hi);
    EXECUTE format('DELETE FROM %I WHERE %I >= %L AND %I < %L', fallback, key, lo, key, hi);
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I DEFAULT', parent, fallback);
  END IF;
  FOR trigger IN
    SELECT t.tgname, t.tgfoid::regproc AS fn FROM pg_trigger t
     WHERE t.tgrelid = parent::regclass AND NOT t.tgisinternal AND t.tgtype & 32 = 32 AND t.tgtype & 2 = 2
  LOOP
    EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION %s()', trigger.tgname, part, trigger.fn);
  END LOOP;
  RETURN true;
END $$;
