-- The deployment-wide due index (every waiting row by due time: the next due time, the due backlog) gets a predicate
-- of its own words, `num_nonnulls(dispatched_at) = 0`, which the dispatcher's reads of one type (written with
-- `dispatched_at IS NULL`, the waiting index's predicate) cannot prove: planned as generic plans on a table not yet
-- analyzed, they took this index and read every due row of every type each round
-- (docs/decisions/2026-12-07-one-type-reads-the-waiting-index.md). Same rows, same order.
DROP INDEX "job_queue_due_idx";
CREATE INDEX "job_queue_due_idx" ON "job_queue"("due_at") WHERE num_nonnulls(dispatched_at) = 0;
