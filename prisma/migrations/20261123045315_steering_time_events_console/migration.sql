-- AlterEnum
ALTER TYPE "job_status" ADD VALUE 'cancelled';

-- AlterTable
ALTER TABLE "users" ADD COLUMN     "credential_version" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "cancel_requested_at" TIMESTAMPTZ(3),
ADD COLUMN     "finished_at" TIMESTAMPTZ(3),
ADD COLUMN     "priority" SMALLINT NOT NULL DEFAULT 5,
ADD COLUMN     "replay_of" UUID,
ADD COLUMN     "schedule_id" UUID,
ADD COLUMN     "search_values" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- CreateTable
CREATE TABLE "job_queue" (
    "job_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "org_id" UUID NOT NULL,
    "priority" SMALLINT NOT NULL,
    "due_at" TIMESTAMPTZ(3) NOT NULL,
    "dispatched_at" TIMESTAMPTZ(3),

    CONSTRAINT "job_queue_pkey" PRIMARY KEY ("job_id")
);

-- CreateTable
CREATE TABLE "events" (
    "id" BIGINT NOT NULL,
    "org_id" UUID NOT NULL,
    "job_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "time" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "data" JSONB NOT NULL,

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "event_cursors" (
    "name" TEXT NOT NULL,
    "last_event_id" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_cursors_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "schedules" (
    "id" UUID NOT NULL,
    "org_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "cron" TEXT NOT NULL,
    "timezone" TEXT NOT NULL DEFAULT 'UTC',
    "job" JSONB NOT NULL,
    "paused" BOOLEAN NOT NULL DEFAULT false,
    "next_run_at" TIMESTAMPTZ(3),
    "last_run_at" TIMESTAMPTZ(3),
    "created_by" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "schedules_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_endpoints" (
    "id" UUID NOT NULL,
    "org_id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "description" TEXT,
    "events" TEXT[],
    "secret" BYTEA NOT NULL,
    "previous_secret" BYTEA,
    "previous_secret_expires_at" TIMESTAMPTZ(3),
    "created_by" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "failing_since" TIMESTAMPTZ(3),
    "disabled_at" TIMESTAMPTZ(3),
    "disabled_reason" TEXT,

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" BIGSERIAL NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "event_id" BIGINT NOT NULL,
    "event_type" TEXT NOT NULL,
    "job_id" UUID NOT NULL,
    "attempt" INTEGER NOT NULL,
    "status_code" INTEGER,
    "duration_ms" INTEGER NOT NULL,
    "error" TEXT,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sessions" (
    "id" UUID NOT NULL,
    "token_hash" BYTEA NOT NULL,
    "user_id" UUID NOT NULL,
    "org_id" UUID NOT NULL,
    "credential_version" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "sessions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "job_queue_waiting_idx" ON "job_queue"("type", "priority" DESC, "org_id", "due_at", "job_id") WHERE (dispatched_at IS NULL);

-- CreateIndex
CREATE INDEX "job_queue_in_flight_idx" ON "job_queue"("type", "org_id") WHERE (dispatched_at IS NOT NULL);

-- CreateIndex
CREATE INDEX "job_queue_due_idx" ON "job_queue"("due_at") WHERE (dispatched_at IS NULL);

-- CreateIndex
CREATE INDEX "events_org_id_id_idx" ON "events"("org_id", "id");

-- CreateIndex
CREATE INDEX "events_job_id_id_idx" ON "events"("job_id", "id");

-- CreateIndex
CREATE INDEX "schedules_org_id_id_idx" ON "schedules"("org_id", "id");

-- CreateIndex
CREATE INDEX "schedules_due_idx" ON "schedules"("next_run_at") WHERE (NOT paused);

-- CreateIndex
CREATE INDEX "webhook_endpoints_org_id_id_idx" ON "webhook_endpoints"("org_id", "id");

-- CreateIndex
CREATE INDEX "webhook_deliveries_endpoint_id_id_idx" ON "webhook_deliveries"("endpoint_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "sessions_token_hash_key" ON "sessions"("token_hash");

-- CreateIndex
CREATE INDEX "sessions_user_id_idx" ON "sessions"("user_id");

-- CreateIndex
CREATE INDEX "jobs_finished_at_idx" ON "jobs"("finished_at") WHERE (finished_at IS NOT NULL);

-- CreateIndex
CREATE INDEX "jobs_schedule_id_idx" ON "jobs"("schedule_id", "id") WHERE (schedule_id IS NOT NULL);

-- CreateIndex
CREATE INDEX "jobs_search_values_idx" ON "jobs" USING GIN ("search_values");

-- AddForeignKey
ALTER TABLE "job_queue" ADD CONSTRAINT "job_queue_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "schedules" ADD CONSTRAINT "schedules_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Data: live jobs of a deployment upgraded in place join the dispatcher's queue (a pending job Redis still holds is
-- handed over again, which BullMQ ignores: the job id is the same), and finished jobs get the time they finished.
INSERT INTO "job_queue" ("job_id", "type", "org_id", "priority", "due_at", "dispatched_at")
SELECT "id", "type", "org_id", "priority", COALESCE("run_at", "created_at"), CASE WHEN "status" = 'processing' THEN "updated_at" END
  FROM "jobs" WHERE "status" IN ('pending', 'processing');

UPDATE "jobs" SET "finished_at" = "updated_at" WHERE "status" IN ('done', 'failed');

-- Functions (Prisma's schema does not describe functions, the drift check compares tables, indexes and enums).

-- A job as the API shows it, without its payload: GET /jobs items carry the fields up to cancel_requested_at,
-- events and GET /jobs/{id} add result and error. One definition, so a list, a job and an event never disagree.
CREATE FUNCTION conveyor_iso(t timestamptz) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- json, not jsonb: a list item keeps the documented field order (the seed's fields first).
CREATE FUNCTION conveyor_job_item(j jobs) RETURNS json LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT json_build_object(
    'id', j.id, 'type', j.type, 'status', j.status, 'retries', j.retries, 'max_retries', j.max_retries,
    'created_at', conveyor_iso(j.created_at), 'updated_at', conveyor_iso(j.updated_at),
    'run_at', conveyor_iso(j.run_at), 'priority', j.priority, 'replay_of', j.replay_of,
    'schedule_id', j.schedule_id, 'cancel_requested_at', conveyor_iso(j.cancel_requested_at))
$$;

-- Built as jsonb directly (not from the json item): events write one per status change, on the hot path.
CREATE FUNCTION conveyor_job_data(j jobs) RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'id', j.id, 'type', j.type, 'status', j.status, 'retries', j.retries, 'max_retries', j.max_retries,
    'created_at', conveyor_iso(j.created_at), 'updated_at', conveyor_iso(j.updated_at),
    'run_at', conveyor_iso(j.run_at), 'priority', j.priority, 'replay_of', j.replay_of,
    'schedule_id', j.schedule_id, 'cancel_requested_at', conveyor_iso(j.cancel_requested_at),
    'result', j.result, 'error', j.error)
$$;

-- The id of this transaction's next event: (transaction id << 20) + how many events it wrote already. Ids grow in
-- the order transactions took their ids, a reader that stops below (oldest running transaction << 20) never skips
-- an event that commits later (see packages/db/src/events.ts).
CREATE FUNCTION conveyor_next_event_id() RETURNS bigint LANGUAGE sql VOLATILE AS $$
  SELECT base + (SELECT count(*) FROM events WHERE id >= base AND id < base + 1048576)
    FROM (SELECT (pg_current_xact_id()::text::bigint << 20) AS base) b
$$;
