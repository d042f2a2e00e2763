-- job_queue pages keep half their room free (issue 43). The dispatcher's hand-over updates every queue row once
-- (dispatched_at, envelope_id), in batches of about a hundred rows at a time; with full pages each new row version went
-- to the end of the table, where the API's inserts of new jobs were writing at the same moment, and the statement
-- waited on them (wall time ≈ 55–100 µs per job on a busy 2-core machine, against ≈ 10–20 with free room; the CPU
-- per job is unchanged). With room on its page the new version stays beside the old one. The rows are narrow and
-- short-lived (deleted when the job finishes), so the table stays small. The update still writes its index entries:
-- it cannot be HOT while the waiting/in-flight indexes tell the two apart (docs/performance.md, issue 43). Applies
-- to pages written from now on; existing pages keep their layout until rewritten.
ALTER TABLE "job_queue" SET (fillfactor = 50);
