-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "dependencies" SMALLINT NOT NULL DEFAULT 0,
ADD COLUMN     "dependencies_pending" SMALLINT NOT NULL DEFAULT 0,
ADD COLUMN     "dependents" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "run_on_dependency_failure" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "job_dependencies" (
    "job_id" UUID NOT NULL,
    "depends_on_id" UUID NOT NULL,
    "org_id" UUID NOT NULL,

    CONSTRAINT "job_dependencies_pkey" PRIMARY KEY ("job_id","depends_on_id")
);

-- CreateIndex
CREATE INDEX "job_dependencies_depends_on_id_job_id_idx" ON "job_dependencies"("depends_on_id", "job_id");
