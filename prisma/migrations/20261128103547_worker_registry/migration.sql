-- The worker registry (issue 38): each worker process registers here, heartbeats its busy slots and running job ids,
-- and removes itself on a graceful stop; the console's Workers view (GET /workers) reads it. Timestamps are the
-- database's clock (now()), so hosts with skewed clocks agree on who is gone.
CREATE TABLE "workers" (
    "id" UUID NOT NULL,
    "host" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "version" TEXT NOT NULL,
    "node_version" TEXT NOT NULL,
    "types" TEXT[],
    "concurrency" INTEGER NOT NULL,
    "heartbeat_ms" INTEGER NOT NULL,
    "busy" INTEGER NOT NULL DEFAULT 0,
    "job_ids" UUID[] DEFAULT ARRAY[]::UUID[],
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "heartbeat_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workers_pkey" PRIMARY KEY ("id")
);

-- The leader's reaper: rows whose heartbeat stopped long ago.
CREATE INDEX "workers_heartbeat_at_idx" ON "workers"("heartbeat_at");
