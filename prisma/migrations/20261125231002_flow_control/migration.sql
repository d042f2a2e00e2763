-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "concurrency_key" TEXT,
ADD COLUMN     "concurrency_limit" SMALLINT,
ADD COLUMN     "debounce_key" TEXT,
ADD COLUMN     "dedupe_key" TEXT,
ADD COLUMN     "rate_limit" TEXT,
ADD COLUMN     "timeout_ms" INTEGER;

-- AlterTable
ALTER TABLE "job_queue" ADD COLUMN     "concurrency_key" TEXT,
ADD COLUMN     "concurrency_limit" SMALLINT,
ADD COLUMN     "debounce_key" TEXT,
ADD COLUMN     "rate_limit" TEXT;

-- CreateTable
CREATE TABLE "rate_limits" (
    "org_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "limit" INTEGER NOT NULL,
    "period_ms" INTEGER NOT NULL,
    "starts" TIMESTAMPTZ(3)[] DEFAULT ARRAY[]::TIMESTAMPTZ(3)[],
    "last_grant" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "rate_limits_pkey" PRIMARY KEY ("org_id","name")
);

-- CreateTable
CREATE TABLE "queue_settings" (
    "org_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "paused" BOOLEAN NOT NULL DEFAULT false,
    "paused_at" TIMESTAMPTZ(3),
    "concurrency_limit" INTEGER,
    "rate_limit" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "queue_settings_pkey" PRIMARY KEY ("org_id","type")
);

-- CreateTable
CREATE TABLE "dedupe_keys" (
    "org_id" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "job_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "dedupe_keys_pkey" PRIMARY KEY ("org_id","key")
);

-- CreateTable
CREATE TABLE "type_state" (
    "type" TEXT NOT NULL,
    "slots" INTEGER NOT NULL DEFAULT 0,
    "slots_checked_at" TIMESTAMPTZ(3),
    "rate_limit" INTEGER,
    "rate_period_ms" INTEGER,
    "starts" TIMESTAMPTZ(3)[] DEFAULT ARRAY[]::TIMESTAMPTZ(3)[],
    "last_grant" INTEGER NOT NULL DEFAULT 0,
    "paused_until" TIMESTAMPTZ(3),
    "org_concurrency_limit" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "type_state_pkey" PRIMARY KEY ("type")
);

-- CreateIndex
CREATE INDEX "dedupe_keys_created_at_idx" ON "dedupe_keys"("created_at");

-- CreateIndex
CREATE INDEX "job_queue_key_in_flight_idx" ON "job_queue"("org_id", "concurrency_key") WHERE (dispatched_at IS NOT NULL AND concurrency_key IS NOT NULL);

-- CreateIndex
CREATE UNIQUE INDEX "job_queue_debounce_key_idx" ON "job_queue"("org_id", "type", "debounce_key") WHERE (debounce_key IS NOT NULL);

-- AddForeignKey
ALTER TABLE "rate_limits" ADD CONSTRAINT "rate_limits_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "queue_settings" ADD CONSTRAINT "queue_settings_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "dedupe_keys" ADD CONSTRAINT "dedupe_keys_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Starts counted in a rate limit window: the times of the last starts, within the period and a margin (2 percent, at
-- most a second) for the moments between a start and the first thing its handler sends.
CREATE FUNCTION conveyor_window_used(starts timestamptz[], period_ms integer) RETURNS integer LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT count(*)::integer FROM unnest(coalesce(starts, ARRAY[]::timestamptz[])) AS s
   WHERE s > now() - (period_ms + least(period_ms / 50, 1000)) * interval '1 millisecond'
$$;

-- Why a pending job has not started (SPEC 14), the first reason that applies, in the order of WAITING_REASONS
-- (packages/contracts/src/flow-control.ts). Null unless the job is pending. A job without a queue row is waiting
-- for its dependencies, a handed-over one for a worker slot.
CREATE FUNCTION conveyor_waiting_for(j jobs) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN j.status <> 'pending' THEN NULL ELSE (
    SELECT CASE
      WHEN q.job_id IS NULL THEN 'dependencies'
      WHEN q.dispatched_at IS NOT NULL THEN 'capacity'
      WHEN q.due_at > now() THEN CASE WHEN j.retries > 0 THEN 'retry' ELSE 'run_at' END
      WHEN coalesce(qs.paused, false) THEN 'queue_paused'
      WHEN ts.paused_until > now()
        OR (ts.rate_limit IS NOT NULL AND conveyor_window_used(ts.starts, ts.rate_period_ms) >= ts.rate_limit)
        OR EXISTS (SELECT 1 FROM rate_limits r
                    WHERE r.org_id = j.org_id AND r.name IN (j.rate_limit, qs.rate_limit)
                      AND conveyor_window_used(r.starts, r.period_ms) >= r.limit) THEN 'rate_limit'
      WHEN j.concurrency_key IS NOT NULL
        AND (SELECT count(*) FROM job_queue k
              WHERE k.org_id = j.org_id AND k.concurrency_key = j.concurrency_key AND k.dispatched_at IS NOT NULL) >= j.concurrency_limit THEN 'concurrency_key'
      WHEN coalesce(qs.concurrency_limit, nullif(ts.org_concurrency_limit, 0)) IS NOT NULL
        AND (SELECT count(*) FROM job_queue f
              WHERE f.type = j.type AND f.org_id = j.org_id AND f.dispatched_at IS NOT NULL) >= coalesce(qs.concurrency_limit, nullif(ts.org_concurrency_limit, 0)) THEN 'org_concurrency'
      WHEN coalesce(ts.slots, 0) = 0 OR ts.slots_checked_at < now() - interval '10 seconds' THEN 'no_worker'
      ELSE 'capacity'
    END
    FROM (SELECT 1) AS one
    LEFT JOIN job_queue q ON q.job_id = j.id
    LEFT JOIN queue_settings qs ON qs.org_id = j.org_id AND qs.type = j.type
    LEFT JOIN type_state ts ON ts.type = j.type
  ) END
$$;

-- A rate limit window after n more starts now: the starts still in the window, newest first, at most lim of them.
CREATE FUNCTION conveyor_window_add(starts timestamptz[], period_ms integer, lim integer, n integer) RETURNS timestamptz[] LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(s ORDER BY s), ARRAY[]::timestamptz[]) FROM (
    SELECT s FROM (
      SELECT unnest(coalesce(starts, ARRAY[]::timestamptz[])) AS s
      UNION ALL
      SELECT now() FROM generate_series(1, n)
    ) AS every_start
    WHERE s > now() - (period_ms + least(period_ms / 50, 1000)) * interval '1 millisecond'
    ORDER BY s DESC
    LIMIT lim
  ) AS kept
$$;

-- Jobs as lists and GET /jobs/{id} show them, with the flow-control fields and why a pending job waits.
CREATE OR REPLACE FUNCTION conveyor_job_item(j jobs) RETURNS json LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT json_build_object(
    'id', j.id, 'type', j.type, 'status', j.status, 'retries', j.retries, 'max_retries', j.max_retries,
    'created_at', conveyor_iso(j.created_at), 'updated_at', conveyor_iso(j.updated_at),
    'run_at', conveyor_iso(j.run_at), 'priority', j.priority, 'replay_of', j.replay_of,
    'schedule_id', j.schedule_id, 'cancel_requested_at', conveyor_iso(j.cancel_requested_at),
    'concurrency_key', j.concurrency_key, 'concurrency_limit', j.concurrency_limit, 'rate_limit', j.rate_limit,
    'timeout_ms', j.timeout_ms, 'dedupe_key', j.dedupe_key, 'debounce_key', j.debounce_key,
    'waiting_for', conveyor_waiting_for(j))
$$;

-- Events carry the stored fields (not waiting_for, which is a reading of the present).
CREATE OR REPLACE FUNCTION conveyor_job_data(j jobs) RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'id', j.id, 'type', j.type, 'status', j.status, 'retries', j.retries, 'max_retries', j.max_retries,
    'created_at', conveyor_iso(j.created_at), 'updated_at', conveyor_iso(j.updated_at),
    'run_at', conveyor_iso(j.run_at), 'priority', j.priority, 'replay_of', j.replay_of,
    'schedule_id', j.schedule_id, 'cancel_requested_at', conveyor_iso(j.cancel_requested_at),
    'concurrency_key', j.concurrency_key, 'concurrency_limit', j.concurrency_limit, 'rate_limit', j.rate_limit,
    'timeout_ms', j.timeout_ms, 'dedupe_key', j.dedupe_key, 'debounce_key', j.debounce_key,
    'result', j.result, 'error', j.error)
$$;
