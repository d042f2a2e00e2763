-- Failures grouped by error with a time filter (issue 23): failure_counts again, by the UTC day the failed jobs were
-- created. GET /jobs/failures with created_after/created_before sums the whole days in range from here and reads only
-- the partial first and last day from the jobs (failure-groups.ts), instead of every failed job in range. Keyed by the
-- creation day, not the failure's: the time filters are on created_at, like GET /jobs's, and must count the same jobs.
-- Written by the transitions that write failure_counts (job-machine/sql.ts, countFailures), taken off by retention,
-- which deletes a day's row once none of its failed jobs is left (retention.ts).

-- CreateTable
CREATE TABLE "failure_counts_daily" (
    "org_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "failure_group" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "failed" INTEGER NOT NULL,
    "first_seen" TIMESTAMPTZ(3) NOT NULL,
    "last_seen" TIMESTAMPTZ(3) NOT NULL,
    "sample_job_id" UUID NOT NULL,

    CONSTRAINT "failure_counts_daily_pkey" PRIMARY KEY ("org_id","day","failure_group")
);

-- AddForeignKey
ALTER TABLE "failure_counts_daily" ADD CONSTRAINT "failure_counts_daily_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The jobs that failed before this migration (as failure_counts' backfill counted them, by creation day).
INSERT INTO "failure_counts_daily" ("org_id", "day", "failure_group", "type", "failed", "first_seen", "last_seen", "sample_job_id")
SELECT "org_id", ("created_at" AT TIME ZONE 'UTC')::date, "failure_group", min("type"), count(*),
       min(coalesce("finished_at", "updated_at")), max(coalesce("finished_at", "updated_at")),
       (array_agg("id" ORDER BY coalesce("finished_at", "updated_at") DESC, "id" DESC))[1]
  FROM "jobs" WHERE "status" = 'failed' AND "failure_group" IS NOT NULL
 GROUP BY "org_id", ("created_at" AT TIME ZONE 'UTC')::date, "failure_group";
