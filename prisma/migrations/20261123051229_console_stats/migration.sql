-- CreateTable
CREATE TABLE "job_stats" (
    "org_id" UUID NOT NULL,
    "minute" TIMESTAMPTZ(3) NOT NULL,
    "type" TEXT NOT NULL,
    "created" INTEGER NOT NULL DEFAULT 0,
    "done" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "cancelled" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "job_stats_pkey" PRIMARY KEY ("org_id","minute","type")
);

-- CreateTable
CREATE TABLE "job_stats_progress" (
    "org_id" UUID NOT NULL,
    "rolled_until" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "job_stats_progress_pkey" PRIMARY KEY ("org_id")
);

-- CreateIndex
CREATE INDEX "jobs_org_id_finished_at_idx" ON "jobs"("org_id", "finished_at") WHERE (finished_at IS NOT NULL);

-- AddForeignKey
ALTER TABLE "job_stats" ADD CONSTRAINT "job_stats_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "job_stats_progress" ADD CONSTRAINT "job_stats_progress_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
