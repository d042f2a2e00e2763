// Response bodies of the event log and webhooks (docs/reference/events.md#events): an event, webhook endpoints and their deliveries. Spread
// into responseSchemas.
import Joi from "joi";
import {
  EVENT_TYPES,
  WEBHOOK_DELIVERY_OUTCOMES,
  WEBHOOK_DELIVERY_TRIGGERS,
  WEBHOOK_EVENT_CHOICES,
  WEBHOOK_SECRET_PATTERN,
  WEBHOOK_TEST_EVENT_TYPE,
} from "@conveyor/contracts";
import { anyObject, id, timestamp } from "./responses-fields";

const webhookEndpoint = Joi.object({
  id: id().required(),
  url: Joi.string().required(),
  description: Joi.string().allow(null, "").required(),
  events: Joi.array()
    .items(Joi.string().valid(...WEBHOOK_EVENT_CHOICES))
    .required(),
  created_at: timestamp().required(),
  previous_secret_expires_at: timestamp()
    .allow(null)
    .required()
    .description("Until then, deliveries are also signed with the secret before the last rotation."),
  failing_since: timestamp().allow(null).required().description("When the current run of failed deliveries began, or null."),
  disabled_at: timestamp().allow(null).required().description("When deliveries stopped because they had failed for 3 days, or null."),
  disabled_reason: Joi.string().allow(null).required().description("Why the endpoint was disabled, or null."),
});

export const eventsSchemas = {
  Event: Joi.object({
    id: Joi.number().integer().min(1).required().description("Grows within the organization; send it back as Last-Event-ID to resume."),
    type: Joi.string()
      .valid(...EVENT_TYPES)
      .required(),
    time: timestamp().required(),
    job_id: id().required(),
    data: anyObject()
      .required()
      .description(
        "The job as GET /jobs/{id} shows it, as it was after this change, without its payload, `waiting_for` (a live answer) and its place in a graph (`depends_on`, `dependents`, `on_dependency_failure`): read those from GET /jobs/{id}.",
      ),
  }).description("What each server-sent event's `data:` line holds, and the `data` of each webhook delivery's CloudEvent."),
  WebhookEndpoint: webhookEndpoint,
  CreatedWebhookEndpoint: webhookEndpoint.keys({
    secret: Joi.string()
      .pattern(WEBHOOK_SECRET_PATTERN)
      .required()
      .description("The signing secret, shown only in this response (Standard Webhooks form: whsec_ and base64)."),
  }),
  WebhookDelivery: Joi.object({
    id: Joi.number().integer().min(1).required().description("The attempt's id; newer attempts have larger ids."),
    event_id: Joi.number().integer().min(1).allow(null).required().description("The event delivered (what POST …/redeliver takes); null for a test event."),
    event_type: Joi.string()
      .valid(...EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE)
      .required(),
    job_id: id().allow(null).required().description("The job the event is about (the CloudEvent's `subject`); null for a test event."),
    trigger: Joi.string()
      .valid(...WEBHOOK_DELIVERY_TRIGGERS)
      .required()
      .description("What sent it: `event` (the event happened), `redelivery` or `test` (a person asked)."),
    attempt: Joi.number().integer().min(1).required(),
    status_code: Joi.number()
      .integer()
      .allow(null)
      .required()
      .description("The receiver's HTTP status, or null when none came (network error, timeout, refused address)."),
    duration_ms: Joi.number().integer().min(0).required(),
    error: Joi.string().allow(null).required().description("Why the attempt failed (the host is named, never the path), or null."),
    response_body: Joi.string().allow(null, "").required().description("The first KiB of the receiver's answer, as UTF-8 text; null when no answer came."),
    response_truncated: Joi.boolean().required().description("The answer went on past `response_body`."),
    at: timestamp().required(),
    outcome: Joi.string()
      .valid(...WEBHOOK_DELIVERY_OUTCOMES)
      .required()
      .description("`succeeded`: the receiver took it; `pending`: it failed and the delivery tries again; `failed`: it failed and no attempt follows."),
  }),
  QueuedWebhookDelivery: Joi.object({
    endpoint_id: id().required(),
    event_id: Joi.number().integer().min(1).allow(null).required().description("The event queued; null for a test event."),
    event_type: Joi.string()
      .valid(...EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE)
      .required(),
    trigger: Joi.string().valid("redelivery", "test").required(),
  }),
} satisfies Record<string, Joi.Schema>;
