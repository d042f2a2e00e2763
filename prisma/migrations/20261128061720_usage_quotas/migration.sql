-- CreateTable
CREATE TABLE "usage_counts" (
    "org_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "type" TEXT NOT NULL,
    "stripe" SMALLINT NOT NULL,
    "jobs_created" BIGINT NOT NULL DEFAULT 0,
    "attempts_started" BIGINT NOT NULL DEFAULT 0,
    "attempt_ms" BIGINT NOT NULL DEFAULT 0,
    "webhook_deliveries" BIGINT NOT NULL DEFAULT 0,
    "payload_bytes" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "usage_counts_pkey" PRIMARY KEY ("org_id","day","type","stripe")
);

-- CreateTable
CREATE TABLE "stored_payload_bytes" (
    "org_id" UUID NOT NULL,
    "stripe" SMALLINT NOT NULL,
    "bytes" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "stored_payload_bytes_pkey" PRIMARY KEY ("org_id","stripe")
);

-- CreateTable
CREATE TABLE "org_quotas" (
    "org_id" UUID NOT NULL,
    "jobs_per_day" BIGINT,
    "jobs_per_month" BIGINT,
    "pending_max" BIGINT,
    "payload_bytes_max" BIGINT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "org_quotas_pkey" PRIMARY KEY ("org_id")
);

-- AddForeignKey
ALTER TABLE "usage_counts" ADD CONSTRAINT "usage_counts_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stored_payload_bytes" ADD CONSTRAINT "stored_payload_bytes_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "org_quotas" ADD CONSTRAINT "org_quotas_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Usage (SPEC §22, issue 36) is written by triggers in the statements that do the work, so it commits or rolls back
-- with them and nothing can forget it: job inserts count jobs created and their payload bytes (by the UTC day the job
-- was created), job updates into and out of 'processing' count attempts started and the milliseconds each attempt ran
-- (by the UTC day of the change), webhook delivery records count deliveries. Statement-level triggers with transition
-- tables: one grouped upsert per statement, not one per row. Internal jobs (type `_…`) are not usage of their own.
-- Each transaction adds to the stripe of its backend (pg_backend_pid() % 16), so concurrent writers of one
-- organization and type rarely wait on one row's lock until the other commits; readers sum the stripes.
CREATE FUNCTION conveyor_usage_stripe() RETURNS smallint LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT (pg_backend_pid() % 16)::smallint
$$;

CREATE FUNCTION conveyor_usage_jobs_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO usage_counts AS u (org_id, day, type, stripe, jobs_created, payload_bytes)
  SELECT n.org_id, (n.created_at AT TIME ZONE 'UTC')::date, n.type, conveyor_usage_stripe(), count(*), sum(octet_length(n.payload::text))
    FROM usage_new_jobs n
   WHERE left(n.type, 1) <> '_'
   GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (org_id, day, type, stripe) DO UPDATE
     SET jobs_created = u.jobs_created + EXCLUDED.jobs_created, payload_bytes = u.payload_bytes + EXCLUDED.payload_bytes;
  INSERT INTO stored_payload_bytes AS s (org_id, stripe, bytes)
  SELECT n.org_id, conveyor_usage_stripe(), sum(octet_length(n.payload::text))
    FROM usage_new_jobs n
   WHERE left(n.type, 1) <> '_'
   GROUP BY 1 ORDER BY 1
  ON CONFLICT (org_id, stripe) DO UPDATE SET bytes = s.bytes + EXCLUDED.bytes;
  RETURN NULL;
END
$$;

CREATE TRIGGER conveyor_usage_jobs_inserted AFTER INSERT ON jobs
  REFERENCING NEW TABLE AS usage_new_jobs FOR EACH STATEMENT EXECUTE FUNCTION conveyor_usage_jobs_inserted();

-- A deleted job (retention, an organization deleted) takes its payload off what the organization stores; its usage
-- stays. Rows of an organization being deleted are skipped: its counters go with it (ON DELETE CASCADE).
CREATE FUNCTION conveyor_usage_jobs_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stored_payload_bytes AS s (org_id, stripe, bytes)
  SELECT o.org_id, conveyor_usage_stripe(), -sum(octet_length(o.payload::text))
    FROM usage_old_jobs o
   WHERE left(o.type, 1) <> '_' AND EXISTS (SELECT 1 FROM organizations g WHERE g.id = o.org_id)
   GROUP BY 1 ORDER BY 1
  ON CONFLICT (org_id, stripe) DO UPDATE SET bytes = s.bytes + EXCLUDED.bytes;
  RETURN NULL;
END
$$;

CREATE TRIGGER conveyor_usage_jobs_deleted AFTER DELETE ON jobs
  REFERENCING OLD TABLE AS usage_old_jobs FOR EACH STATEMENT EXECUTE FUNCTION conveyor_usage_jobs_deleted();

-- An attempt starts when a job moves into 'processing' (or a new attempt takes a processing job over: started_at
-- changes) and ends when it moves out (or is taken over); its milliseconds run from its started_at to the change,
-- both at the millisecond precision events are stored with (so they equal the distance between the two events).
CREATE FUNCTION conveyor_usage_jobs_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO usage_counts AS u (org_id, day, type, stripe, attempts_started, attempt_ms)
  SELECT c.org_id, (now() AT TIME ZONE 'UTC')::date, c.type, conveyor_usage_stripe(),
         count(*) FILTER (WHERE c.started),
         coalesce(sum(c.ms) FILTER (WHERE c.ended), 0)
    FROM (SELECT n.org_id, n.type,
                 n.status = 'processing' AND (o.status <> 'processing' OR n.started_at IS DISTINCT FROM o.started_at) AS started,
                 o.status = 'processing' AND o.started_at IS NOT NULL
                   AND (n.status <> 'processing' OR n.started_at IS DISTINCT FROM o.started_at) AS ended,
                 greatest(0, round(extract(epoch FROM now()::timestamptz(3) - o.started_at) * 1000))::bigint AS ms
            FROM usage_new_jobs n JOIN usage_old_jobs o ON o.id = n.id
           WHERE left(n.type, 1) <> '_' AND (n.status = 'processing' OR o.status = 'processing')) c
   WHERE c.started OR c.ended
   GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (org_id, day, type, stripe) DO UPDATE
     SET attempts_started = u.attempts_started + EXCLUDED.attempts_started, attempt_ms = u.attempt_ms + EXCLUDED.attempt_ms;
  RETURN NULL;
END
$$;

CREATE TRIGGER conveyor_usage_jobs_updated AFTER UPDATE ON jobs
  REFERENCING OLD TABLE AS usage_old_jobs NEW TABLE AS usage_new_jobs FOR EACH STATEMENT EXECUTE FUNCTION conveyor_usage_jobs_updated();

-- Every delivery attempt recorded is a webhook delivery, counted under the type of the job its event is about (a test
-- event, about no job, under its delivery job's type).
CREATE FUNCTION conveyor_usage_deliveries_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER conveyor_usage_deliveries_inserted AFTER INSERT ON webhook_deliveries
  REFERENCING NEW TABLE AS usage_new_deliveries FOR EACH STATEMENT EXECUTE FUNCTION conveyor_usage_deliveries_inserted();

-- Usage of organizations that exist now: jobs created before this migration are counted from the jobs still stored
-- (older ones were never counted; their attempts are not known either), so the figures start from what is known.
INSERT INTO usage_counts (org_id, day, type, stripe, jobs_created, payload_bytes)
SELECT org_id, (created_at AT TIME ZONE 'UTC')::date, type, 0, count(*), sum(octet_length(payload::text))
  FROM jobs WHERE left(type, 1) <> '_' GROUP BY 1, 2, 3;
INSERT INTO stored_payload_bytes (org_id, stripe, bytes)
SELECT org_id, 0, sum(octet_length(payload::text)) FROM jobs WHERE left(type, 1) <> '_' GROUP BY 1;
