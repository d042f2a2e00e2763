-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "role" TEXT NOT NULL DEFAULT 'member';

-- CreateTable
CREATE TABLE "org_job_types" (
    "org_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "payload_schema" JSONB NOT NULL,
    "default_max_retries" INTEGER,
    "default_timeout_ms" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "org_job_types_pkey" PRIMARY KEY ("org_id","name")
);

-- CreateTable
CREATE TABLE "worker_leases" (
    "job_id" UUID NOT NULL,
    "org_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "worker_id" UUID NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "worker_leases_pkey" PRIMARY KEY ("job_id")
);

-- CreateTable
CREATE TABLE "protocol_workers" (
    "id" UUID NOT NULL,
    "org_id" UUID NOT NULL,
    "api_key_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "types" TEXT[],
    "concurrency" INTEGER NOT NULL,
    "heartbeat_ms" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "heartbeat_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "protocol_workers_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "worker_leases_org_id_type_expires_at_idx" ON "worker_leases"("org_id", "type", "expires_at");

-- CreateIndex
CREATE INDEX "protocol_workers_org_id_heartbeat_at_idx" ON "protocol_workers"("org_id", "heartbeat_at");

-- AddForeignKey
ALTER TABLE "org_job_types" ADD CONSTRAINT "org_job_types_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
