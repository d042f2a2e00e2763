-- Issue 21: a webhook endpoint receives exactly the events committed after its creation (the reasoning is in
-- packages/db/src/webhooks.ts and docs/decisions.md).

-- AlterTable
-- Endpoints that exist already keep receiving every event the relay has not passed yet: a snapshot that sees no
-- transaction at all, and marked as matched by the relay. New ones get the snapshot of the statement creating them.
ALTER TABLE "webhook_endpoints" ADD COLUMN     "created_snapshot" pg_snapshot NOT NULL DEFAULT '1:1:',
ADD COLUMN     "relay_start" BIGINT;
UPDATE "webhook_endpoints" SET "relay_start" = COALESCE((SELECT "last_event_id" FROM "event_cursors" WHERE "name" = 'webhook-relay'), 0);
ALTER TABLE "webhook_endpoints" ALTER COLUMN "created_snapshot" SET DEFAULT pg_current_snapshot();

-- Whether the event's transaction had not committed when `snapshot` was taken (its id is (transaction id << 20) + n).
CREATE FUNCTION conveyor_event_committed_after(event_id bigint, snapshot pg_snapshot) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT NOT pg_visible_in_snapshot((event_id >> 20)::text::xid8, snapshot)
$$;
