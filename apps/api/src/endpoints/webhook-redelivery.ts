// Delivery filters and bulk redelivery of a webhook endpoint (issue 38): the filters of GET
// /webhook-endpoints/{id}/deliveries, and POST /webhook-endpoints/{id}/redeliver-failed, which sends the failed
// deliveries matching them (or the picked ones) again in one action. Owners and admins, with a user token.
import Joi from "joi";
import { EVENT_TYPES, jobFilterFields, WEBHOOK_DELIVERY_OUTCOMES, WEBHOOK_TEST_EVENT_TYPE, type WebhookDeliveryOutcome } from "@conveyor/contracts";
import { BODY_ERRORS, endpoint, idParam } from "../declarations/endpoint";
import { BULK_REDELIVERY_LIMIT, redeliverFailed, type BulkRedeliveryInput } from "../services/webhook-redelivery";

export type DeliveriesFilterQuery = { outcome?: WebhookDeliveryOutcome; event_type?: string; after?: string; before?: string };

const eventType = () => Joi.string().valid(...EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE);
// The same instants as the jobs list's filters: an ISO 8601 date (midnight UTC) or a date-time with a zone.
const after = () => jobFilterFields.created_after.description("ISO 8601 date, or date-time with a zone: attempts at or after it.");
const before = () => jobFilterFields.created_before.description("ISO 8601 date, or date-time with a zone: attempts before it.");

/** The deliveries list's filters (GET /webhook-endpoints/{id}/deliveries). */
export const deliveriesFilterFields = {
  outcome: Joi.string().valid(...WEBHOOK_DELIVERY_OUTCOMES),
  event_type: eventType(),
  after: after(),
  before: before(),
};

export const deliveriesFilterDescriptions = {
  outcome:
    "Only attempts that `succeeded`, `failed` (no attempt of that delivery follows, and the endpoint has not received the event since nor still retries it: what redeliver-failed sends) or are `pending` (failed; the delivery tries again).",
  event_type: `Only deliveries of this event type (${EVENT_TYPES.join(", ")}, or ${WEBHOOK_TEST_EVENT_TYPE}).`,
  after: "Only attempts made at or after this time: an ISO 8601 date (midnight UTC) or date-time with a zone.",
  before: "Only attempts made before this time: an ISO 8601 date (midnight UTC) or date-time with a zone.",
};

const bulkBody = Joi.object<BulkRedeliveryInput>({
  filter: Joi.object({ event_type: eventType(), after: after(), before: before() }).description(
    "Which failed deliveries: of this event type, made in this time (each optional; `{}` is every failed delivery).",
  ),
  delivery_ids: Joi.array()
    .items(Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER))
    .min(1)
    .max(BULK_REDELIVERY_LIMIT)
    .unique()
    .description(`Or the deliveries picked (their \`id\`), up to ${BULK_REDELIVERY_LIMIT}: their events are sent again whatever their outcome.`),
  dry_run: Joi.boolean().description("true: only count what would be sent (for a confirmation); nothing is queued or audited."),
})
  .xor("filter", "delivery_ids")
  .messages({ "object.missing": "needs a filter or delivery_ids", "object.xor": "takes a filter or delivery_ids, not both" });

export const webhookRedeliveryEndpoints = [
  endpoint({
    method: "post",
    path: "/webhook-endpoints/:id/redeliver-failed",
    operationId: "redeliverFailedWebhookDeliveries",
    tag: "Webhooks",
    summary: "Send failed deliveries of a webhook endpoint again, in bulk",
    description:
      'Each event once, with the same `webhook-id`, attempted once without retries and listed with `trigger` "redelivery": the events ' +
      "of the failed deliveries matching `filter`, or of the deliveries picked in `delivery_ids`. An event the endpoint has received " +
      "since, or still retries, is left out, and so are test deliveries and events no longer retained. At most " +
      `${BULK_REDELIVERY_LIMIT} events a call (\`has_more\` says to call again); one audit entry names how many. \`dry_run\` only ` +
      "counts. 409 `webhook_endpoint_disabled` while the endpoint is disabled.",
    access: "user",
    roles: ["owner", "admin"],
    params: { id: idParam("webhook endpoint") },
    body: {
      schema: bulkBody,
      examples: {
        failedToday: { summary: "Every failed job.failed delivery since a date", value: { filter: { event_type: "job.failed", after: "2026-11-21" } } },
        picked: { summary: "Two picked deliveries", value: { delivery_ids: [4017, 4019] } },
        count: { summary: "Count first", value: { filter: {}, dry_run: true } },
      },
    },
    responses: {
      202: {
        description: "Queued (or, with dry_run, counted).",
        json: { component: "BulkWebhookRedelivery", example: { events: 2, event_ids: [251658241, 251658245], has_more: false, dry_run: false } },
      },
    },
    errors: [...BODY_ERRORS, 401, 403, 404, 409, 503],
    async handle({ caller, params, body, req }, deps) {
      const done = await redeliverFailed({ caller, id: params.id, input: body }, deps);
      if (!done.dry_run) req.log.info("webhook bulk redelivery queued", { webhookEndpointId: params.id, events: done.events });
      return { status: 202, json: done };
    },
  }),
];
