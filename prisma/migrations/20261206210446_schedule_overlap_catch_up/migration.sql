-- AlterTable
ALTER TABLE "schedules" ADD COLUMN     "buffered_run_at" TIMESTAMPTZ(3),
ADD COLUMN     "catch_up" TEXT NOT NULL DEFAULT 'latest',
ADD COLUMN     "catch_up_window_seconds" INTEGER,
ADD COLUMN     "last_job_id" UUID,
ADD COLUMN     "overlap" TEXT NOT NULL DEFAULT 'allow';

-- CreateTable
CREATE TABLE "schedule_runs" (
    "schedule_id" UUID NOT NULL,
    "tick" TIMESTAMPTZ(3) NOT NULL,
    "job_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "schedule_runs_pkey" PRIMARY KEY ("schedule_id","tick")
);

-- AddForeignKey
ALTER TABLE "schedule_runs" ADD CONSTRAINT "schedule_runs_schedule_id_fkey" FOREIGN KEY ("schedule_id") REFERENCES "schedules"("id") ON DELETE CASCADE ON UPDATE CASCADE;
