-- Progress and output of a running job, and public tokens that read one job (issue 35, SPEC §21).
-- jobs.progress is the handler's last report; output is one row per (coalesced) append in job_output_chunks, so an
-- append is an insert and jobs.output_bytes is the only thing it updates; both go with their job (cascade).

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "output_bytes" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "progress" JSONB;

-- CreateTable
CREATE TABLE "job_output_chunks" (
    "job_id" UUID NOT NULL,
    "offset" INTEGER NOT NULL,
    "chunk" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "job_output_chunks_pkey" PRIMARY KEY ("job_id","offset")
);

-- CreateTable
CREATE TABLE "job_public_tokens" (
    "id" UUID NOT NULL,
    "org_id" UUID NOT NULL,
    "job_id" UUID NOT NULL,
    "token_hash" BYTEA NOT NULL,
    "created_by" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "job_public_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "job_public_tokens_token_hash_key" ON "job_public_tokens"("token_hash");

-- CreateIndex
CREATE INDEX "job_public_tokens_job_id_idx" ON "job_public_tokens"("job_id");

-- AddForeignKey
ALTER TABLE "job_output_chunks" ADD CONSTRAINT "job_output_chunks_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "job_public_tokens" ADD CONSTRAINT "job_public_tokens_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The list item, the job and every event carry the job's progress (the list's bars, an event's job as it was).
-- Same bodies as migration 20261126083000_job_started_at, plus 'progress'.
CREATE OR REPLACE FUNCTION conveyor_job_item(j jobs) RETURNS json LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT json_build_object(
    'id', j.id, 'type', j.type, 'status', j.status, 'retries', j.retries, 'max_retries', j.max_retries,
    'created_at', conveyor_iso(j.created_at), 'updated_at', conveyor_iso(j.updated_at),
    'run_at', conveyor_iso(j.run_at), 'priority', j.priority, 'replay_of', j.replay_of,
    'schedule_id', j.schedule_id, 'cancel_requested_at', conveyor_iso(j.cancel_requested_at),
    'concurrency_key', j.concurrency_key, 'concurrency_limit', j.concurrency_limit, 'rate_limit', j.rate_limit,
    'timeout_ms', j.timeout_ms, 'dedupe_key', j.dedupe_key, 'debounce_key', j.debounce_key,
    'waiting_for', conveyor_waiting_for(j),
    'started_at', conveyor_iso(j.started_at), 'finished_at', conveyor_iso(j.finished_at),
    'progress', j.progress)
$$;

CREATE OR REPLACE FUNCTION conveyor_job_data(j jobs) RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'id', j.id, 'type', j.type, 'status', j.status, 'retries', j.retries, 'max_retries', j.max_retries,
    'created_at', conveyor_iso(j.created_at), 'updated_at', conveyor_iso(j.updated_at),
    'run_at', conveyor_iso(j.run_at), 'priority', j.priority, 'replay_of', j.replay_of,
    'schedule_id', j.schedule_id, 'cancel_requested_at', conveyor_iso(j.cancel_requested_at),
    'concurrency_key', j.concurrency_key, 'concurrency_limit', j.concurrency_limit, 'rate_limit', j.rate_limit,
    'timeout_ms', j.timeout_ms, 'dedupe_key', j.dedupe_key, 'debounce_key', j.debounce_key,
    'started_at', conveyor_iso(j.started_at), 'finished_at', conveyor_iso(j.finished_at),
    'result', j.result, 'error', j.error, 'progress', j.progress)
$$;
