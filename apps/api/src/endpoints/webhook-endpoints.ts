// Webhook endpoints (docs/reference/events.md#events): owners and admins, with a user token (like the team endpoints: an API key acts as a
// member and is refused). The secret is in the responses of creation and rotation only.
import Joi from "joi";
import { EVENT_ID_MAX, EVENT_TYPES, WEBHOOK_EVENT_CHOICES } from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, endpoint, idParam } from "../declarations/endpoint";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  redeliverWebhookEvent,
  rotateWebhookSecret,
  sendWebhookTestEvent,
  updateWebhookEndpoint,
  type WebhookEndpointInput,
  type WebhookEndpointPatch,
} from "../services/webhook-endpoints";
import { deliveriesFilterDescriptions, deliveriesFilterFields, type DeliveriesFilterQuery } from "./webhook-redelivery";

const ENDPOINT_ID = "0193a5c4-5555-7c1d-9f3a-2b8e4d6f1a01";
const AT = "2026-11-21T09:30:00.000Z";
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwbFMXfGqxM6g=";
const endpointExample = {
  id: ENDPOINT_ID,
  url: "https://hooks.example.com/conveyor",
  description: "Billing service",
  events: ["job.succeeded", "job.failed"],
  created_at: AT,
  previous_secret_expires_at: null,
  failing_since: null,
  disabled_at: null,
  disabled_reason: null,
};

const createBody = Joi.object<WebhookEndpointInput>({
  url: Joi.string()
    .trim()
    .max(2048)
    .prefs({ convert: true })
    .required()
    .description("Where events are POSTed: https (http only with WEBHOOK_ALLOW_HTTP), a public host."),
  events: Joi.array()
    .items(Joi.string().valid(...WEBHOOK_EVENT_CHOICES))
    .min(1)
    .max(WEBHOOK_EVENT_CHOICES.length)
    .unique()
    .required()
    .description(`Event types to receive (${EVENT_TYPES.join(", ")}), or "*" for all.`),
  description: Joi.string().trim().max(500).allow("").prefs({ convert: true }),
});

const patchBody = Joi.object<WebhookEndpointPatch>({
  url: Joi.string().trim().max(2048).prefs({ convert: true }).description("A new address, under the same rules as at creation."),
  events: Joi.array()
    .items(Joi.string().valid(...WEBHOOK_EVENT_CHOICES))
    .min(1)
    .max(WEBHOOK_EVENT_CHOICES.length)
    .unique()
    .description("The event types it receives from now on."),
  description: Joi.string().trim().max(500).allow("").prefs({ convert: true }).description("An empty string removes it."),
  enabled: Joi.boolean().description("false stops deliveries; true starts them again (also after a disabling for failures)."),
})
  .min(1)
  .messages({ "object.min": "needs at least one of url, events, description, enabled" });

const redeliverBody = Joi.object<{ event_id: number }>({
  event_id: Joi.number().integer().min(1).max(EVENT_ID_MAX).required().description("The event to send again (a delivery's `event_id`)."),
});

const queuedExample = { endpoint_id: ENDPOINT_ID, event_id: 251658241, event_type: "job.succeeded", trigger: "redelivery" };

const deliveriesQuery = Joi.object<{ limit: number } & DeliveriesFilterQuery>({
  limit: Joi.number().integer().min(1).max(1000).default(100),
  ...deliveriesFilterFields,
});

const withSecret = (what: string) =>
  `${what} \`secret\` (\`whsec_…\`) is shown only in this response: the receiver verifies the \`webhook-signature\` header with it.`;

export const webhookEndpointEndpoints = [
  endpoint({
    method: "post",
    path: "/webhook-endpoints",
    operationId: "createWebhookEndpoint",
    tag: "Webhooks",
    summary: "Add a webhook endpoint",
    description:
      "Each event of the chosen types is POSTed to `url` as a CloudEvents 1.0 structured JSON body (`application/cloudevents+json`) " +
      "with Standard Webhooks headers (`webhook-id` = the event id, `webhook-timestamp`, `webhook-signature`). Answers other than " +
      "2xx are retried (5xx, 429 and network errors, for more than 24 hours); an endpoint whose deliveries fail for 3 days is " +
      `disabled. An organization has at most WEBHOOK_ENDPOINTS_PER_ORG endpoints (default 25; 409 \`webhook_endpoint_limit\` beyond). ${withSecret("The")}`,
    access: "user",
    roles: ["owner", "admin"],
    body: {
      schema: createBody,
      examples: {
        finished: {
          summary: "Finished jobs",
          value: { url: "https://hooks.example.com/conveyor", events: ["job.succeeded", "job.failed"], description: "Billing service" },
        },
        everything: { summary: "Every event", value: { url: "https://hooks.example.com/all", events: ["*"] } },
      },
    },
    responses: {
      201: { description: "The endpoint, with its secret.", json: { component: "CreatedWebhookEndpoint", example: { ...endpointExample, secret: SECRET } } },
    },
    errors: [...BODY_ERRORS, 401, 403, 409, 503],
    async handle({ caller, body, req }, deps) {
      const created = await createWebhookEndpoint({ caller, input: body }, deps);
      req.log.info("webhook endpoint created", { webhookEndpointId: created.id });
      return { status: 201, json: created, headers: { "Cache-Control": "no-store" } };
    },
  }),
  endpoint({
    method: "get",
    path: "/webhook-endpoints",
    operationId: "listWebhookEndpoints",
    tag: "Webhooks",
    summary: "List webhook endpoints",
    description:
      "Oldest first, without secrets. `disabled_reason` says why an endpoint was disabled; `failing_since` when its current run of failed deliveries began.",
    access: "user",
    roles: ["owner", "admin"],
    responses: { 200: { description: "The endpoints.", json: { component: "WebhookEndpoint", array: true, example: [endpointExample] } } },
    errors: [...AUTHENTICATED_ERRORS, 403],
    async handle({ caller }, deps) {
      return { json: await listWebhookEndpoints({ caller }, deps) };
    },
  }),
  endpoint({
    method: "patch",
    path: "/webhook-endpoints/:id",
    operationId: "updateWebhookEndpoint",
    tag: "Webhooks",
    summary: "Edit a webhook endpoint",
    description:
      "Changes its URL (the same rules as at creation; an organization has one endpoint per URL: 409 `webhook_url_taken`), the event " +
      "types it receives, its description, or whether it is enabled. Re-enabling an endpoint disabled after days of failures ends its run " +
      "of failures. Each delivery reads the endpoint when it is attempted, so retries already planned go to the new URL. The secret is unchanged.",
    access: "user",
    roles: ["owner", "admin"],
    params: { id: idParam("webhook endpoint") },
    body: {
      schema: patchBody,
      examples: {
        events: { summary: "Receive failures only", value: { events: ["job.failed"] } },
        move: { summary: "A new address", value: { url: "https://hooks.example.com/conveyor/v2" } },
        enable: { summary: "Start again after a disabling", value: { enabled: true } },
      },
    },
    responses: { 200: { description: "The endpoint as it is now.", json: { component: "WebhookEndpoint", example: endpointExample } } },
    errors: [...BODY_ERRORS, 401, 403, 404, 409, 503],
    async handle({ caller, params, body, req }, deps) {
      const updated = await updateWebhookEndpoint({ caller, id: params.id, patch: body }, deps);
      req.log.info("webhook endpoint updated", { webhookEndpointId: updated.id });
      return { json: updated };
    },
  }),
  endpoint({
    method: "post",
    path: "/webhook-endpoints/:id/redeliver",
    operationId: "redeliverWebhookEvent",
    tag: "Webhooks",
    summary: "Send an event to a webhook endpoint again",
    description:
      "Queues one more delivery of the event, with the same `webhook-id` (receivers that deduplicate on it see it once), whatever the " +
      'endpoint subscribes to now. It is attempted once, without retries, and listed among the deliveries with `trigger` "redelivery". ' +
      "409 `webhook_endpoint_disabled` while the endpoint is disabled; 410 `event_expired` once the event is no longer retained.",
    access: "user",
    roles: ["owner", "admin"],
    params: { id: idParam("webhook endpoint") },
    body: { schema: redeliverBody, examples: { again: { summary: "One event again", value: { event_id: 251658241 } } } },
    responses: { 202: { description: "Queued.", json: { component: "QueuedWebhookDelivery", example: queuedExample } } },
    errors: [...BODY_ERRORS, 401, 403, 404, 409, 410, 503],
    async handle({ caller, params, body, req }, deps) {
      const queued = await redeliverWebhookEvent({ caller, id: params.id, eventId: body.event_id }, deps);
      req.log.info("webhook event redelivery queued", { webhookEndpointId: params.id, eventId: body.event_id });
      return { status: 202, json: queued };
    },
  }),
  endpoint({
    method: "post",
    path: "/webhook-endpoints/:id/test",
    operationId: "sendWebhookTestEvent",
    tag: "Webhooks",
    summary: "Send a test event to a webhook endpoint",
    description:
      "Queues a CloudEvent of type `conveyor.webhook.test` (its `id` starts with `test_`; `data` says which endpoint it is for), signed " +
      "like every delivery, so a receiver can be checked before real events arrive. It is attempted once, without retries, and listed " +
      'among the deliveries with `trigger` "test" and `event_id` null. Nothing is written to the event log. 409 ' +
      "`webhook_endpoint_disabled` while the endpoint is disabled.",
    access: "user",
    roles: ["owner", "admin"],
    params: { id: idParam("webhook endpoint") },
    responses: {
      202: {
        description: "Queued.",
        json: { component: "QueuedWebhookDelivery", example: { ...queuedExample, event_id: null, event_type: "webhook.test", trigger: "test" } },
      },
    },
    errors: [...AUTHENTICATED_ERRORS, 403, 404, 409],
    async handle({ caller, params, req }, deps) {
      const queued = await sendWebhookTestEvent({ caller, id: params.id }, deps);
      req.log.info("webhook test event queued", { webhookEndpointId: params.id });
      return { status: 202, json: queued };
    },
  }),
  endpoint({
    method: "delete",
    path: "/webhook-endpoints/:id",
    operationId: "deleteWebhookEndpoint",
    tag: "Webhooks",
    summary: "Delete a webhook endpoint",
    description: "Nothing more is sent to it, including retries already planned; its delivery records go with it.",
    access: "user",
    roles: ["owner", "admin"],
    params: { id: idParam("webhook endpoint") },
    responses: { 204: { description: "Deleted." } },
    errors: [...AUTHENTICATED_ERRORS, 403, 404],
    async handle({ caller, params, req }, deps) {
      await deleteWebhookEndpoint({ caller, id: params.id }, deps);
      req.log.info("webhook endpoint deleted", { webhookEndpointId: params.id });
      return { status: 204 };
    },
  }),
  endpoint({
    method: "post",
    path: "/webhook-endpoints/:id/rotate-secret",
    operationId: "rotateWebhookSecret",
    tag: "Webhooks",
    summary: "Rotate a webhook endpoint's secret",
    description:
      "For 24 hours every delivery carries two signatures, one with the new secret and one with the previous one, so the " +
      `receiver can switch at its own pace. A secret rotated out earlier stops signing at once. ${withSecret("The new")}`,
    access: "user",
    roles: ["owner", "admin"],
    params: { id: idParam("webhook endpoint") },
    responses: {
      200: {
        description: "The endpoint, with its new secret.",
        json: { component: "CreatedWebhookEndpoint", example: { ...endpointExample, previous_secret_expires_at: "2026-11-22T09:30:00.000Z", secret: SECRET } },
      },
    },
    errors: [...AUTHENTICATED_ERRORS, 403, 404],
    async handle({ caller, params, req }, deps) {
      const rotated = await rotateWebhookSecret({ caller, id: params.id }, deps);
      req.log.info("webhook endpoint secret rotated", { webhookEndpointId: rotated.id });
      return { json: rotated, headers: { "Cache-Control": "no-store" } };
    },
  }),
  endpoint({
    method: "get",
    path: "/webhook-endpoints/:id/deliveries",
    operationId: "listWebhookDeliveries",
    tag: "Webhooks",
    summary: "Recent delivery attempts of a webhook endpoint",
    description:
      "Newest first: each attempt's event and the job it is about (`job_id`), what sent it (`trigger`: the event itself, a redelivery or " +
      "a test), the receiver's status code (null when none came) and the first KiB of its answer (`response_body`; " +
      "`response_truncated` when it went on), how long it took, why it failed, and its `outcome`. Filters (`outcome`, `event_type`, " +
      "`after`, `before`) combine; the limit counts matching attempts.",
    access: "user",
    roles: ["owner", "admin"],
    params: { id: idParam("webhook endpoint") },
    query: deliveriesQuery,
    queryDescriptions: { limit: "How many attempts (1 to 1000, default 100).", ...deliveriesFilterDescriptions },
    responses: {
      200: {
        description: "The attempts.",
        json: {
          component: "WebhookDelivery",
          array: true,
          example: [
            {
              id: 4021,
              event_id: 251658241,
              event_type: "job.succeeded",
              job_id: "0193a5c4-1f2e-7a6b-8c9d-0e1f2a3b4c5d",
              trigger: "event",
              attempt: 2,
              status_code: 200,
              duration_ms: 84,
              error: null,
              response_body: '{"received":true}',
              response_truncated: false,
              at: "2026-11-21T09:30:06.400Z",
              outcome: "succeeded",
            },
            {
              id: 4017,
              event_id: 251658241,
              event_type: "job.succeeded",
              job_id: "0193a5c4-1f2e-7a6b-8c9d-0e1f2a3b4c5d",
              trigger: "event",
              attempt: 1,
              status_code: 503,
              duration_ms: 31,
              error: "hooks.example.com answered 503",
              response_body: "Service Unavailable",
              response_truncated: false,
              at: "2026-11-21T09:30:01.300Z",
              outcome: "failed",
            },
          ],
        },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 403, 404],
    async handle({ caller, params, query }, deps) {
      const { limit, ...filter } = query;
      return { json: await listWebhookDeliveries({ caller, id: params.id, limit, filter }, deps) };
    },
  }),
];
