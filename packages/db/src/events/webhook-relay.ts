// The webhook relay (docs/reference/events.md#events): the workers' leader turns committed events into delivery jobs, each event to each
// enabled endpoint of its org that subscribes to it, exactly once — the reasoning is below. Delivering is the
// delivery job's (webhook-delivery.ts); the endpoints are the API's (webhooks.ts).
import type pg from "pg";
import { LIVE_EVENT_TYPES, WEBHOOK_DELIVERY_TYPE, type WebhookDeliveryPayload } from "@conveyor/contracts";
import { newId } from "../core/ids";
import { insertJobs } from "../job-machine";
import { inTransaction } from "../core/transaction";

/** Name of the relay's row in event_cursors. */
export const WEBHOOK_RELAY_CURSOR = "webhook-relay";

export type RelayOptions = {
  /** Events read per round at most. */
  limit: number;
  /** max_retries of each delivery job. */
  maxRetries: number;
};

// Which events an endpoint receives: those committed after it was created, exactly, as Stripe and Svix do. "After"
// is decided by the snapshot of the statement that created it (`created_snapshot`, taken by the column's default):
// an event whose transaction that snapshot sees committed before the endpoint; any other committed after it began
// (conveyor_event_committed_after). Clocks play no part.
//
// The relay cannot simply match each event to the endpoints it sees: an endpoint whose creating transaction commits
// after a round's snapshot is invisible to that round, although that round may read events committed after the
// endpoint's snapshot: a transaction that was running when the endpoint was created and committed before it (one
// that takes its id after the creation's stays above the horizon until the creation ends). So the first round that
// sees an endpoint catches it up: it also queues the endpoint's events at or below the cursor it locked (they can
// only have ids from the endpoint's snapshot's xmin on), and records that cursor as the endpoint's `relay_start`.
// Exactly once, because:
//  - Rounds are serialised by the cursor's row lock, and each reads with a snapshot taken after it locked, so it
//    sees every earlier round's commit. Every event at or below the cursor was below the horizon of the round that
//    passed it, so it is visible to every later round (packages/db/src/events/events.ts).
//  - For an endpoint E, no round before the first one that sees E (R) matches it; R queues E's events up to R's
//    locked cursor L (catch-up) and in (L, last] (its batch), and sets relay_start, so no later round catches E up
//    again; later rounds queue E's events in their batches, which follow each other without overlap.
//  - The idle path (no enabled endpoint visible) moves the cursor without reading events, but only if the cursor row
//    is still the version its snapshot saw (compare-and-set on xmin): a round that joined an endpoint always writes
//    the cursor row, so an idle move on a snapshot that did not see that endpoint cannot follow it. An idle move
//    before the endpoint is joined is covered by the catch-up, whose range reaches the cursor wherever it is.

/**
 * One round of the webhook relay: the events after the relay's cursor (below the horizon, so none is skipped), each
 * matched to the enabled endpoints of its org that subscribe to its type and were created before it committed; the
 * catch-up of endpoints this relay sees for the first time (above); a delivery job per match (through insertJobs:
 * the dispatcher, retries, the fence and the reconciler apply); and the cursor moved past them — all in one
 * transaction, with the cursor's row locked, so two leaders can never relay an event twice. The first round ever
 * starts at the horizon.
 */
export async function relayEventsToWebhooks(pool: pg.Pool, options: RelayOptions): Promise<{ events: number; deliveries: number }> {
  const cursor = WEBHOOK_RELAY_CURSOR;
  // No enabled endpoint anywhere (the usual case for many installations): the events need no reading, the cursor
  // moves to the horizon in one statement — written only when events lie between them (every transaction moves the
  // horizon, this one's too), so ticks without events write nothing; and only if no round wrote the row since this
  // statement's snapshot (see above).
  // Prepared once per connection: it runs at every tick, and planning it again each time cost more than running it
  // (docs/decisions/2026-12-07-cheaper-job-writes.md).
  const { rows: idle } = await pool.query<{ idle: boolean }>({
    name: "conveyor-relay-idle",
    text: `WITH idle AS (
       SELECT NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE disabled_at IS NULL) AS idle,
              (SELECT xmin FROM event_cursors WHERE name = $1) AS version
     ), moved AS (
       UPDATE event_cursors c SET last_event_id = h.horizon, updated_at = now()
         FROM idle, (SELECT conveyor_event_horizon() - 1 AS horizon) h
        WHERE c.name = $1 AND idle.idle AND c.xmin = idle.version
          AND EXISTS (SELECT 1 FROM events e WHERE e.id > c.last_event_id AND e.id <= h.horizon)
     )
     SELECT idle AND version IS NOT NULL AS idle FROM idle`,
    values: [cursor],
  });
  if (idle[0]!.idle) return { events: 0, deliveries: 0 };
  return inTransaction(pool, async (client) => {
    // The horizon is only worked out when the row is missing (the first round ever).
    await client.query(
      `INSERT INTO event_cursors (name, last_event_id)
       SELECT $1, conveyor_event_horizon() - 1 WHERE NOT EXISTS (SELECT 1 FROM event_cursors WHERE name = $1)
       ON CONFLICT (name) DO NOTHING`,
      [cursor],
    );
    const locked = await client.query<{ after: string }>("SELECT last_event_id::text AS after FROM event_cursors WHERE name = $1 FOR UPDATE", [cursor]);
    const after = locked.rows[0]!.after;
    const { rows } = await client.query<{
      last: string | null;
      events: number;
      joined: string[];
      deliveries: { event_id: number; org_id: string; endpoint_id: string }[];
    }>({
      name: "conveyor-relay-events",
      text: `WITH batch AS (
         SELECT e.id, e.org_id, e.type FROM events e
          WHERE e.id > $1::bigint AND e.id < (SELECT conveyor_event_horizon())
          ORDER BY e.id
          LIMIT $2
       ), joining AS (
         SELECT w.id, w.org_id, w.events, w.created_snapshot, w.disabled_at FROM webhook_endpoints w WHERE w.relay_start IS NULL
       ), matched AS (
         SELECT b.id AS event_id, b.org_id, w.id AS endpoint_id
           FROM batch b
           JOIN webhook_endpoints w
             ON w.org_id = b.org_id AND w.disabled_at IS NULL
            AND (('*' = ANY(w.events) AND b.type <> ALL($3::text[])) OR b.type = ANY(w.events))
            AND conveyor_event_committed_after(b.id, w.created_snapshot)
         UNION ALL
         SELECT e.id, e.org_id, j.id
           FROM joining j
           JOIN events e
             ON e.org_id = j.org_id AND e.id <= $1::bigint
            AND e.id >= (pg_snapshot_xmin(j.created_snapshot)::text::bigint << 20)
            AND (('*' = ANY(j.events) AND e.type <> ALL($3::text[])) OR e.type = ANY(j.events))
            AND conveyor_event_committed_after(e.id, j.created_snapshot)
          WHERE j.disabled_at IS NULL
       )
       SELECT (SELECT max(id) FROM batch)::text AS last, (SELECT count(*) FROM batch)::int AS events,
              ARRAY(SELECT id::text FROM joining) AS joined,
              COALESCE((SELECT json_agg(json_build_object('event_id', m.event_id, 'org_id', m.org_id, 'endpoint_id', m.endpoint_id)
                                        ORDER BY m.event_id, m.endpoint_id)
                          FROM matched m), '[]'::json) AS deliveries`,
      // "*" is every status event: progress and output go only to endpoints that name them (docs/reference/events.md#progress-and-live-results).
      values: [after, options.limit, LIVE_EVENT_TYPES],
    });
    const { last, events, joined, deliveries } = rows[0]!;
    if (last === null && joined.length === 0) {
      return { events: 0, deliveries: 0 };
    }
    const now = new Date();
    await insertJobs(
      client,
      deliveries.map((d) => ({
        id: newId(),
        orgId: d.org_id,
        type: WEBHOOK_DELIVERY_TYPE,
        payloadJson: JSON.stringify({ endpoint_id: d.endpoint_id, event_id: d.event_id } satisfies WebhookDeliveryPayload),
        maxRetries: options.maxRetries,
        createdAt: now,
      })),
    );
    if (joined.length) await client.query("UPDATE webhook_endpoints SET relay_start = $2::bigint WHERE id = ANY($1::uuid[])", [joined, after]);
    // Written even when no event was read: a round that joined an endpoint must fail a concurrent idle move.
    await client.query("UPDATE event_cursors SET last_event_id = $2::bigint, updated_at = now() WHERE name = $1", [cursor, last ?? after]);
    return { events, deliveries: deliveries.length };
  });
}
