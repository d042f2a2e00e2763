-- DropForeignKey
ALTER TABLE "job_search" DROP CONSTRAINT "job_search_job_id_fkey";

-- DropForeignKey
ALTER TABLE "job_queue" DROP CONSTRAINT "job_queue_job_id_fkey";

-- DropForeignKey
ALTER TABLE "events" DROP CONSTRAINT "events_job_id_fkey";
