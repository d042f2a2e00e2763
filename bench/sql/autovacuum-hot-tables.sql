-- Per-table autovacuum settings for the tables a job's life writes (docs/reference/time.md#partitions-and-retention), as measured by
-- bench/tools/autovacuum.ts against the server defaults and written up in docs/operations.md. Not a migration:
-- the storage redesign (docs/reference/lifecycle.md#storage-and-leases) is changing these tables' shape; the settings move into a migration after it.
--
-- job_queue: every job inserts, updates and deletes its row, so the table is nearly all dead rows; its live rows
-- are few (the waiting and running jobs). A fixed threshold instead of a share of a table that is ~0 rows live, and
-- no cost delay: a vacuum of it is small and must not be paced.
ALTER TABLE job_queue SET (
  autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000,
  autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 5000,
  autovacuum_vacuum_cost_delay = 0
);
-- jobs: two non-HOT updates per job (status and updated_at are indexed) and retention's deletes. 2 % instead of
-- 20 % (at 10 M rows, 200 k dead rows instead of 2 M before a vacuum), inserts too (the visibility map keeps the
-- failures view and the stats index-only), and a shorter cost delay so a vacuum of a large table keeps up.
ALTER TABLE jobs SET (
  autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.01, autovacuum_vacuum_cost_delay = 1
);
-- What hangs off a job: inserted once, deleted by retention.
ALTER TABLE events SET (
  autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05, autovacuum_vacuum_cost_delay = 1
);
ALTER TABLE job_logs SET (
  autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05, autovacuum_vacuum_cost_delay = 1
);
ALTER TABLE job_search SET (
  autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05, autovacuum_vacuum_cost_delay = 1
);
-- Small rows updated on every job (HOT upserts): a fixed threshold, no delay.
ALTER TABLE usage_counts SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0);
ALTER TABLE stored_payload_bytes SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0);
ALTER TABLE event_cursors SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0);
ALTER TABLE type_state SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0);
