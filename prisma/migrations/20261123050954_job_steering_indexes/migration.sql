-- CreateIndex
CREATE INDEX "jobs_replay_of_idx" ON "jobs"("replay_of") WHERE (replay_of IS NOT NULL);

-- CreateIndex
CREATE INDEX "idempotency_keys_job_id_idx" ON "idempotency_keys"("job_id");
