-- Usage is counted by the statements that do the work (docs/reference/tenants.md#usage-quotas-and-backpressure, docs/reference/lifecycle.md#storage-and-leases, issue 43). The claim, the outcome, the
-- suspensions and the cancellations add their attempts, attempt milliseconds and pending-job changes to usage_counts
-- and stored_payload_bytes themselves, one upsert per organization, day, type and stripe per statement
-- (packages/db/src/job-machine/sql.ts, countUsage) — the same figures the trigger below derived. The trigger fired on
-- every UPDATE of jobs (progress, output, amendments included) and kept the old and the new row of every updated job
-- for it; its counts now come from the writers, so it goes. Nothing stored changes: usage rows keep their totals.
DROP TRIGGER IF EXISTS conveyor_usage_jobs_updated ON jobs;
DROP FUNCTION IF EXISTS conveyor_usage_jobs_updated();
