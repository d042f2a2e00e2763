-- Time partitions for the audit log (monthly, on `time`) and the webhook deliveries (daily, on `at`: their id is a
-- bigint sequence, not a UUID v7) — docs/reference/time.md#partitions-and-retention, docs/reference/robustness.md#r58,
-- docs/decisions/2026-12-07-partitioned-audit-log-and-deliveries.md. Retention then drops whole months and days.
--
-- Each table is copied into a new partitioned table of the same name, not attached as one old partition: both are
-- bounded by their retention (400 days of audit entries, JOB_RETENTION_DAYS of deliveries), a unique index holding the
-- partition key had to be built over the old rows either way, and a copy leaves every row in the partition of its own
-- month or day — no old partition of another shape for the maker and retention to know forever. The table is locked
-- for the copy (writers wait; the migration runs as one transaction). The rows go in before the triggers that would
-- see them are made: the usage trigger does not count the deliveries a second time.
--
-- Partitions: one for every month (day) that holds rows, and for this one and the next; the leader makes the rest
-- ahead every hour (packages/db/src/maintenance/partitions.ts). A DEFAULT partition each stores a row no partition
-- exists for.

-- conveyor_make_partition as its file (packages/db/sql/functions/conveyor_make_partition.sql) has it: needed here.
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

-- The audit log.
LOCK TABLE "audit_log" IN ACCESS EXCLUSIVE MODE;
DROP TRIGGER audit_log_append_only ON "audit_log";
DROP TRIGGER audit_log_no_truncate ON "audit_log";
ALTER TABLE "audit_log" RENAME TO "audit_log_unpartitioned";
ALTER TABLE "audit_log_unpartitioned" DROP CONSTRAINT "audit_log_pkey";
DROP INDEX "audit_log_org_time_idx", "audit_log_org_actor_idx", "audit_log_org_target_idx", "audit_log_org_action_idx", "audit_log_time_idx";

CREATE TABLE "audit_log" (
    "id" UUID NOT NULL,
    "org_id" UUID NOT NULL,
    "time" TIMESTAMPTZ(3) NOT NULL,
    "actor_type" TEXT NOT NULL,
    "actor_id" UUID,
    "actor_label" TEXT,
    "action" TEXT NOT NULL,
    "target_type" TEXT,
    "target_id" UUID,
    "target_label" TEXT,
    "ip" TEXT,
    "user_agent" TEXT,
    "request_id" TEXT,
    "changes" JSONB,
    "details" JSONB,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id", "time")
) PARTITION BY RANGE ("time");

-- Append-only, as before (conveyor_audit_log_append_only): the row trigger is cloned onto every partition by Postgres,
-- the TRUNCATE trigger is given to each partition by conveyor_make_partition.
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON "audit_log"
  FOR EACH ROW EXECUTE FUNCTION conveyor_audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON "audit_log"
  FOR EACH STATEMENT EXECUTE FUNCTION conveyor_audit_log_append_only();
CREATE TABLE "audit_log_default" PARTITION OF "audit_log" DEFAULT;
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON "audit_log_default"
  FOR EACH STATEMENT EXECUTE FUNCTION conveyor_audit_log_append_only();

SELECT conveyor_make_partition('audit_log', 'audit_log_p' || to_char(m AT TIME ZONE 'UTC', 'YYYYMM'), 'time', m::text, (m + interval '1 month')::text)
  FROM (SELECT DISTINCT date_trunc('month', "time", 'UTC') AS m FROM "audit_log_unpartitioned"
        UNION SELECT date_trunc('month', now(), 'UTC') + n * interval '1 month' FROM generate_series(0, 1) AS n) AS months
 ORDER BY m;

INSERT INTO "audit_log" ("id", "org_id", "time", "actor_type", "actor_id", "actor_label", "action", "target_type", "target_id", "target_label",
                         "ip", "user_agent", "request_id", "changes", "details")
SELECT "id", "org_id", "time", "actor_type", "actor_id", "actor_label", "action", "target_type", "target_id", "target_label",
       "ip", "user_agent", "request_id", "changes", "details"
  FROM "audit_log_unpartitioned";
DROP TABLE "audit_log_unpartitioned";

CREATE INDEX "audit_log_org_time_idx" ON "audit_log"("org_id", "time" DESC, "id" DESC);
CREATE INDEX "audit_log_org_actor_idx" ON "audit_log"("org_id", "actor_id", "time" DESC, "id" DESC);
CREATE INDEX "audit_log_org_target_idx" ON "audit_log"("org_id", "target_id", "time" DESC, "id" DESC);
CREATE INDEX "audit_log_org_action_idx" ON "audit_log"("org_id", "action", "time" DESC, "id" DESC);
CREATE INDEX "audit_log_time_idx" ON "audit_log"("time");

-- The webhook deliveries; their id sequence goes on (the API shows delivery ids; a redelivery names them).
LOCK TABLE "webhook_deliveries" IN ACCESS EXCLUSIVE MODE;
DROP TRIGGER conveyor_usage_deliveries_inserted ON "webhook_deliveries";
ALTER TABLE "webhook_deliveries" RENAME TO "webhook_deliveries_unpartitioned";
ALTER TABLE "webhook_deliveries_unpartitioned" DROP CONSTRAINT "webhook_deliveries_pkey";
ALTER TABLE "webhook_deliveries_unpartitioned" DROP CONSTRAINT "webhook_deliveries_endpoint_id_fkey";
DROP INDEX "webhook_deliveries_endpoint_id_id_idx";

CREATE TABLE "webhook_deliveries" (
    "id" BIGINT NOT NULL DEFAULT nextval('webhook_deliveries_id_seq'::regclass),
    "endpoint_id" UUID NOT NULL,
    "event_id" BIGINT,
    "event_type" TEXT NOT NULL,
    "job_id" UUID NOT NULL,
    "subject_job_id" UUID,
    "trigger" TEXT NOT NULL DEFAULT 'event',
    "attempt" INTEGER NOT NULL,
    "status_code" INTEGER,
    "duration_ms" INTEGER NOT NULL,
    "error" TEXT,
    "response_body" TEXT,
    "response_truncated" BOOLEAN NOT NULL DEFAULT false,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id", "at")
) PARTITION BY RANGE ("at");
ALTER SEQUENCE "webhook_deliveries_id_seq" OWNED BY "webhook_deliveries"."id";
CREATE TABLE "webhook_deliveries_default" PARTITION OF "webhook_deliveries" DEFAULT;

SELECT conveyor_make_partition('webhook_deliveries', 'webhook_deliveries_p' || to_char(d AT TIME ZONE 'UTC', 'YYYYMMDD'), 'at', d::text,
                               (d + interval '1 day')::text)
  FROM (SELECT DISTINCT date_trunc('day', "at", 'UTC') AS d FROM "webhook_deliveries_unpartitioned"
        UNION SELECT date_trunc('day', now(), 'UTC') + n * interval '1 day' FROM generate_series(0, 1) AS n) AS days
 ORDER BY d;

INSERT INTO "webhook_deliveries" ("id", "endpoint_id", "event_id", "event_type", "job_id", "subject_job_id", "trigger", "attempt", "status_code",
                                  "duration_ms", "error", "response_body", "response_truncated", "at")
SELECT "id", "endpoint_id", "event_id", "event_type", "job_id", "subject_job_id", "trigger", "attempt", "status_code",
       "duration_ms", "error", "response_body", "response_truncated", "at"
  FROM "webhook_deliveries_unpartitioned";
DROP TABLE "webhook_deliveries_unpartitioned";

CREATE INDEX "webhook_deliveries_endpoint_id_id_idx" ON "webhook_deliveries"("endpoint_id", "id");
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE TRIGGER conveyor_usage_deliveries_inserted AFTER INSERT ON "webhook_deliveries"
  REFERENCING NEW TABLE AS usage_new_deliveries FOR EACH STATEMENT EXECUTE FUNCTION conveyor_usage_deliveries_inserted();
