-- CreateTable
CREATE TABLE "waitpoints" (
    "id" UUID NOT NULL,
    "org_id" UUID NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'waiting',
    "description" TEXT,
    "tags" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "token_hash" BYTEA NOT NULL,
    "data" JSONB,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3),
    "finished_by" TEXT,
    "job_id" UUID,
    "idempotency_key" TEXT,
    "request_hash" BYTEA,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "waitpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "job_steps" (
    "job_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "result" JSONB,
    "wake_at" TIMESTAMPTZ(3),
    "waitpoint_id" UUID,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "job_steps_pkey" PRIMARY KEY ("job_id","name")
);

-- CreateIndex
CREATE UNIQUE INDEX "waitpoints_token_hash_key" ON "waitpoints"("token_hash");

-- CreateIndex
CREATE INDEX "waitpoints_org_id_id_idx" ON "waitpoints"("org_id", "id");

-- CreateIndex
CREATE INDEX "waitpoints_org_id_status_id_idx" ON "waitpoints"("org_id", "status", "id");

-- CreateIndex
CREATE INDEX "waitpoints_expiry_idx" ON "waitpoints"("expires_at") WHERE (status = 'waiting');

-- CreateIndex
CREATE UNIQUE INDEX "waitpoints_org_id_idempotency_key_key" ON "waitpoints"("org_id", "idempotency_key");

-- CreateIndex
CREATE INDEX "job_steps_waitpoint_id_idx" ON "job_steps"("waitpoint_id");

-- AddForeignKey
ALTER TABLE "waitpoints" ADD CONSTRAINT "waitpoints_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Why a pending job waits (SPEC §14, §20): a job without a queue row waits for a waitpoint when one of the points it
-- depends on (depends_on, or ctx.waitFor) is still waiting, otherwise for jobs; a job due later because it sleeps
-- (ctx.sleep) waits for its run_at even after a retry. Only those two cases differ from the definition before.
CREATE OR REPLACE FUNCTION conveyor_waiting_for(j jobs) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN j.status <> 'pending' THEN NULL ELSE (
    SELECT CASE
      WHEN q.job_id IS NULL THEN
        CASE WHEN EXISTS (SELECT 1 FROM job_dependencies d JOIN waitpoints w ON w.id = d.depends_on_id
                           WHERE d.job_id = j.id AND w.status = 'waiting') THEN 'waitpoint' ELSE 'dependencies' END
      WHEN q.dispatched_at IS NOT NULL THEN 'capacity'
      WHEN q.due_at > now() THEN
        CASE WHEN j.retries > 0 AND NOT EXISTS (SELECT 1 FROM job_steps s WHERE s.job_id = j.id AND s.status = 'sleeping') THEN 'retry' ELSE 'run_at' END
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
