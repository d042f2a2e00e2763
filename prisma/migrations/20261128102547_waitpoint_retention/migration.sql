-- Waitpoint retention (SPEC §20) takes ended waitpoints oldest end first, a small batch at a time.
CREATE INDEX "waitpoints_finished_idx" ON "waitpoints"("finished_at") WHERE (status <> 'waiting');
