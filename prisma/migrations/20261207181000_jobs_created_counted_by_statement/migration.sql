-- Jobs created are counted by the statement that creates them (docs/reference/tenants.md#usage-quotas-and-backpressure,
-- docs/reference/lifecycle.md#storage-and-leases, issue 43), as attempts and pending-job changes already are: the
-- creation statement (packages/db/src/job-machine/create.ts, COUNT_CREATED) adds jobs created, payload bytes, stored
-- payload bytes and pending jobs to usage_counts and stored_payload_bytes itself, one upsert per organization, day,
-- type and stripe — the figures the trigger below derived, from each payload's jsonb text as it did. The trigger kept a
-- transition table of every inserted row, whole, and turned each payload into text twice, once per usage table
-- (docs/decisions/2026-12-07-jobs-created-counted-by-statement.md). Nothing stored changes: usage rows keep their totals.
-- The delete trigger stays (retention and organization deletes are not the job machine's statements).
DROP TRIGGER IF EXISTS conveyor_usage_jobs_inserted ON jobs;
DROP FUNCTION IF EXISTS conveyor_usage_jobs_inserted();
