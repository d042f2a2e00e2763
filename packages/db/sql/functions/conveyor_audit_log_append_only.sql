-- Trigger of audit_log (BEFORE UPDATE OR DELETE, and BEFORE TRUNCATE): the audit log is append-only
-- (docs/reference/robustness.md#r44, docs/reference/tenants.md#audit-log).

-- The audit log is append-only. No endpoint changes or deletes an entry, and this makes the database
-- refuse it too, whatever the code path: every UPDATE and TRUNCATE, and every DELETE except those of retention, which names
-- its cut-off in the transaction (SET LOCAL conveyor.audit_delete_before) and may only remove entries older than it,
-- and never one younger than a day. It guards against mistakes of the application; a database superuser can
-- always drop the trigger (docs/decisions/2026-11-25-audit-log-single-sign-issue-26.md).
CREATE OR REPLACE FUNCTION conveyor_audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  cut_off timestamptz := NULLIF(current_setting('conveyor.audit_delete_before', true), '')::timestamptz;
BEGIN
  IF TG_OP = 'DELETE' AND cut_off IS NOT NULL AND cut_off <= now() - interval '1 day' AND OLD.time < cut_off THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit log entries cannot be changed or deleted (%)', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
