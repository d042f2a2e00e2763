// Webhook endpoints (SPEC §10): owners and admins, with a user token (like the team endpoints: an API key acts as a
// member and is refused). The secret is in the responses of creation and rotation only.
import Joi from "joi";
import { EVENT_TYPES, WEBHOOK_EVENT_CHOICES } from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, endpoint, idParam } from "../http/endpoint";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  rotateWebhookSecret,
  type WebhookEndpointInput,
} from "../services/webhook-endpoints";

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

const deliveriesQuery = Joi.object<{ limit: number }>({ limit: Joi.number().integer().min(1).max(1000).default(100) });

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
    description: "Newest first: each attempt's event, the receiver's status code (null when none came), how long it took, and why it failed.",
    access: "user",
    roles: ["owner", "admin"],
    params: { id: idParam("webhook endpoint") },
    query: deliveriesQuery,
    queryDescriptions: { limit: "How many attempts (1 to 1000, default 100)." },
    responses: {
      200: {
        description: "The attempts.",
        json: {
          component: "WebhookDelivery",
          array: true,
          example: [
            { event_id: 251658241, event_type: "job.succeeded", attempt: 2, status_code: 200, duration_ms: 84, error: null, at: "2026-11-21T09:30:06.400Z" },
            {
              event_id: 251658241,
              event_type: "job.succeeded",
              attempt: 1,
              status_code: 503,
              duration_ms: 31,
              error: "hooks.example.com answered 503",
              at: "2026-11-21T09:30:01.300Z",
            },
          ],
        },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 403, 404],
    async handle({ caller, params, query }, deps) {
      return { json: await listWebhookDeliveries({ caller, id: params.id, limit: query.limit }, deps) };
    },
  }),
];
