// Bulk redelivery of a webhook endpoint's failed deliveries (issue 38): the failed deliveries matching a filter, or
// the deliveries a person picked, sent again in one action — each event once (one attempt, without retries, trigger
// "redelivery"), and one audit entry naming how many. With `dry_run` it only counts, for the console's confirmation.
import { findRedeliverableEvents, inTransaction, isUuid, queueRedeliveries, type RedeliverySelection } from "@conveyor/db";
import { AppError, notFound } from "./infrastructure/errors";
import { audit } from "./infrastructure/audit";
import type { Caller, ServiceDeps } from "./infrastructure/deps";

/** Events one bulk redelivery sends at most; `has_more` says to press again. */
export const BULK_REDELIVERY_LIMIT = 1000;

export type BulkRedeliveryInput = {
  filter?: { event_type?: string; after?: string; before?: string };
  delivery_ids?: number[];
  dry_run?: boolean;
};
export type BulkRedelivery = { events: number; event_ids: number[]; has_more: boolean; dry_run: boolean };

export async function redeliverFailed(
  options: { caller: Caller; id: string; input: BulkRedeliveryInput },
  { db, clock }: Pick<ServiceDeps, "db" | "clock">,
): Promise<BulkRedelivery> {
  const { caller, id, input } = options;
  if (!isUuid(id)) throw notFound("Webhook endpoint");
  const selection: RedeliverySelection = input.delivery_ids
    ? { deliveryIds: input.delivery_ids }
    : {
        filter: {
          eventType: input.filter?.event_type,
          after: input.filter?.after ? new Date(input.filter.after) : undefined,
          before: input.filter?.before ? new Date(input.filter.before) : undefined,
        },
      };
  const dryRun = input.dry_run === true;
  const found = await inTransaction(db.pool, async (tx) => {
    const found = await findRedeliverableEvents(tx, { orgId: caller.orgId, endpointId: id, selection, limit: BULK_REDELIVERY_LIMIT });
    if (!found || found.endpoint.disabled || dryRun || found.eventIds.length === 0) return found;
    await queueRedeliveries(tx, { orgId: caller.orgId, endpointId: id, eventIds: found.eventIds });
    await audit(tx, caller, clock, {
      action: "webhook_endpoint.bulk_redeliver",
      // Named like the endpoint's other entries: its description, or its host (never its URL, whose path may be a secret).
      target: { type: "webhook_endpoint", id, label: found.endpoint.description || new URL(found.endpoint.url).host },
      details: { events: found.eventIds.length, ...(input.delivery_ids ? { deliveries: input.delivery_ids.length } : { filter: input.filter ?? {} }) },
    });
    return found;
  });
  if (!found) throw notFound("Webhook endpoint");
  if (found.endpoint.disabled) {
    throw new AppError("webhook_endpoint_disabled", "This endpoint is disabled. Enable it (PATCH with enabled: true) before sending to it again.");
  }
  return { events: found.eventIds.length, event_ids: found.eventIds, has_more: found.hasMore, dry_run: dryRun };
}
