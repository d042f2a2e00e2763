// Filtering a webhook endpoint's deliveries and sending the failed ones again in one action (issue 38: the console's
// webhooks page). An attempt's outcome is read from the attempt and its delivery job: `succeeded` (the receiver took
// it), `pending` (it failed and the delivery job will try again) or `failed` (it failed and no attempt of that delivery
// follows). A bulk redelivery sends each event at most once; by filter, only events this endpoint has neither received
// nor still retries nor has a redelivery queued for: two presses of the button queue the second time only what failed again.
import type pg from "pg";
import { WEBHOOK_DELIVERY_TYPE, type WebhookDeliveryOutcome, type WebhookDeliveryPayload } from "@conveyor/contracts";
import { newId } from "../core/ids";
import { insertJobs } from "../job-machine";

/** The filters of an endpoint's deliveries; every one set narrows them. */
export type DeliveryFilter = { outcome?: WebhookDeliveryOutcome; eventType?: string; after?: Date; before?: Date };

/**
 * The outcome of attempt `d`, whose delivery job is `j` (LEFT JOINed on d.job_id: retention may have removed the job,
 * and a delivery whose job is gone is over).
 */
export const deliveryOutcome = (d: string, j: string) =>
  `CASE WHEN ${d}.error IS NULL THEN 'succeeded' WHEN ${j}.status IN ('pending', 'processing') THEN 'pending' ELSE 'failed' END`;

/** Attempt `d`'s event has no delivery to its endpoint that succeeded or still retries (test deliveries have no event). */
const notDeliveredSince = (d: string) =>
  `(${d}.event_id IS NULL OR NOT EXISTS (
      SELECT 1 FROM webhook_deliveries s LEFT JOIN jobs sj ON sj.id = s.job_id
       WHERE s.endpoint_id = ${d}.endpoint_id AND s.event_id = ${d}.event_id AND ${deliveryOutcome("s", "sj")} <> 'failed'))`;

/**
 * The SQL conditions of `filter` on attempt `d` (delivery job `j`), numbering its parameters after `values`' (which it
 * extends). "true" when no filter is set.
 */
export function deliveryConditions(filter: DeliveryFilter, d: string, j: string, values: unknown[]): string {
  const conditions: string[] = [];
  const param = (value: unknown) => `$${values.push(value)}`;
  if (filter.outcome) conditions.push(`${deliveryOutcome(d, j)} = ${param(filter.outcome)}`);
  // Failed means not delivered (issue 48 #7): a failed attempt whose event the endpoint received since (the delivery's
  // next try, a redelivery) or still retries is not one — the same events "Redeliver failed" would send.
  if (filter.outcome === "failed") conditions.push(notDeliveredSince(d));
  if (filter.eventType) conditions.push(`${d}.event_type = ${param(filter.eventType)}`);
  if (filter.after) conditions.push(`${d}.at >= ${param(filter.after)}::timestamptz`);
  if (filter.before) conditions.push(`${d}.at < ${param(filter.before)}::timestamptz`);
  return conditions.length ? conditions.join(" AND ") : "true";
}

/** What a bulk redelivery is about: failed deliveries matching a filter, or the deliveries a person picked. */
export type RedeliverySelection = { filter: Omit<DeliveryFilter, "outcome"> } | { deliveryIds: number[] };

/**
 * The events a bulk redelivery would send, oldest first, at most `limit` (and whether more remain); null when the org
 * has no such endpoint. A filter gives the events of its failed deliveries, less those the endpoint has received since,
 * still retries, or has a redelivery queued for (so a second press sends only what failed again); picked deliveries
 * give their events whatever happened since (a person chose them, as with a single redelivery). Test deliveries (no
 * event) and events no longer retained (they cannot be sent again) are left out either way.
 */
export async function findRedeliverableEvents(
  db: pg.Pool | pg.PoolClient,
  options: { orgId: string; endpointId: string; selection: RedeliverySelection; limit: number },
): Promise<{ endpoint: { disabled: boolean; description: string | null; url: string }; eventIds: number[]; hasMore: boolean } | null> {
  // FOR SHARE: the endpoint is not deleted or disabled between this read and the redeliveries queued after it.
  const { rows: endpoints } = await db.query<{ disabled: boolean; description: string | null; url: string }>(
    `SELECT disabled_at IS NOT NULL AS disabled, description, url FROM webhook_endpoints WHERE id = $1 AND org_id = $2 FOR SHARE`,
    [options.endpointId, options.orgId],
  );
  if (!endpoints[0]) return null;
  const values: unknown[] = [options.endpointId, options.orgId, options.limit + 1];
  const { selection } = options;
  const chosen =
    "deliveryIds" in selection
      ? `d.id = ANY($${values.push(selection.deliveryIds.map(String))}::bigint[])`
      : `${deliveryOutcome("d", "j")} = 'failed' AND ${deliveryConditions(selection.filter, "d", "j", values)}
         AND ${notDeliveredSince("d")}
         AND NOT EXISTS (
               SELECT 1 FROM jobs q
                WHERE q.org_id = $2 AND q.status IN ('pending', 'processing') AND q.type = $${values.push(WEBHOOK_DELIVERY_TYPE)}
                  AND q.payload->>'endpoint_id' = $1::text AND (q.payload->>'event_id')::bigint = d.event_id)`;
  const { rows } = await db.query<{ event_id: string }>(
    `SELECT DISTINCT d.event_id
       FROM webhook_deliveries d
       LEFT JOIN jobs j ON j.id = d.job_id
       JOIN events e ON e.id = d.event_id AND e.org_id = $2
      WHERE d.endpoint_id = $1 AND d.event_id IS NOT NULL AND ${chosen}
      ORDER BY d.event_id
      LIMIT $3`,
    values,
  );
  const eventIds = rows.map((r) => Number(r.event_id));
  return { endpoint: endpoints[0], eventIds: eventIds.slice(0, options.limit), hasMore: eventIds.length > options.limit };
}

/**
 * Queues one redelivery per event (each attempted once, without retries, listed with trigger "redelivery"), in the
 * caller's transaction.
 */
export async function queueRedeliveries(tx: pg.PoolClient, options: { orgId: string; endpointId: string; eventIds: number[] }): Promise<void> {
  const createdAt = new Date();
  await insertJobs(
    tx,
    options.eventIds.map((eventId) => {
      const payload: WebhookDeliveryPayload = { endpoint_id: options.endpointId, event_id: eventId, trigger: "redelivery" };
      return { id: newId(), orgId: options.orgId, type: WEBHOOK_DELIVERY_TYPE, payloadJson: JSON.stringify(payload), maxRetries: 0, createdAt };
    }),
  );
}
