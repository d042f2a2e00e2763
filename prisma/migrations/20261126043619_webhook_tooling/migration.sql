-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "response_body" TEXT,
ADD COLUMN     "response_truncated" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "subject_job_id" UUID,
ADD COLUMN     "trigger" TEXT NOT NULL DEFAULT 'event',
ALTER COLUMN "event_id" DROP NOT NULL;
