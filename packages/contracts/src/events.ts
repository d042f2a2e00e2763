// Events and webhook endpoints (docs/reference/events.md#events): what streams and endpoints accept, what the workers send, and how long
// they keep trying. Pure values and functions, shared by the API (validation, documentation) and the worker.
import { EVENT_TYPES, type EventType } from "./job-states";

/** Largest event id a client may send back (ids are below 2^53). */
export const EVENT_ID_MAX = Number.MAX_SAFE_INTEGER;

/** The internal job type that delivers one event to one endpoint (internal types start with `_`). */
export const WEBHOOK_DELIVERY_TYPE = "_webhook_delivery";

/** Why a delivery was sent: the relay matched an event, a person asked for it again, or a person sent a test event. */
export const WEBHOOK_DELIVERY_TRIGGERS = ["event", "redelivery", "test"] as const;
export type WebhookDeliveryTrigger = (typeof WEBHOOK_DELIVERY_TRIGGERS)[number];

/** How a delivery attempt ended: the receiver took it, it failed and its delivery tries again, or it failed for good. */
export const WEBHOOK_DELIVERY_OUTCOMES = ["succeeded", "failed", "pending"] as const;
export type WebhookDeliveryOutcome = (typeof WEBHOOK_DELIVERY_OUTCOMES)[number];

/** The event type of a test delivery (never in the event log; CloudEvents type conveyor.webhook.test). */
export const WEBHOOK_TEST_EVENT_TYPE = "webhook.test";

/**
 * What a delivery job carries: which endpoint, which event (both read again at each attempt), and what asked for it
 * (absent: the relay). A test delivery names no event: it carries its own id and time.
 */
export type WebhookDeliveryPayload =
  { endpoint_id: string; event_id: number; trigger?: "event" | "redelivery" } | { endpoint_id: string; trigger: "test"; test: { id: string; time: string } };

/** Bytes of a receiver's answer kept with a delivery attempt (shown to the endpoint's owners, never logged). */
export const WEBHOOK_RESPONSE_EXCERPT_BYTES = 1024;

/** What an endpoint subscribes to: event types, or "*" for all of them. */
export const WEBHOOK_EVENT_CHOICES = ["*", ...EVENT_TYPES] as const;
export type WebhookEventChoice = "*" | EventType;

/** CloudEvents `type` of an event: job.succeeded → conveyor.job.succeeded. */
export const cloudEventType = (type: string): string => `conveyor.${type}`;

/** `whsec_` + base64 of 32 random bytes, as Standard Webhooks secrets are written. */
export const WEBHOOK_SECRET_PATTERN = /^whsec_[A-Za-z0-9+/]{43}=$/;

/** How long the secret before a rotation still signs deliveries (beside the new one). */
export const WEBHOOK_PREVIOUS_SECRET_TTL_MS = 24 * 60 * 60 * 1000;

/** An endpoint whose deliveries have failed, without a success in between, for this long is disabled. */
export const WEBHOOK_DISABLE_AFTER_MS = 3 * 24 * 60 * 60 * 1000;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * The wait after each failed delivery attempt: Svix's first steps (5 s, 5 min, 30 min), then hourly, because the
 * worker runtime caps every retry delay at one hour (docs/reference/lifecycle.md#lifecycle). 27 retries: the last attempt comes 24 h 35 min after
 * the first, so an endpoint that is down for a day still gets every event.
 */
export const WEBHOOK_RETRY_SCHEDULE_MS: readonly number[] = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, ...Array<number>(24).fill(HOUR)];

/** max_retries of a delivery job. */
export const WEBHOOK_DELIVERY_MAX_RETRIES = WEBHOOK_RETRY_SCHEDULE_MS.length;

/** The wait after failed attempt `attempt` (1-based), from the schedule. */
export function webhookRetryDelayMs(attempt: number): number {
  return WEBHOOK_RETRY_SCHEDULE_MS[Math.min(Math.max(attempt, 1), WEBHOOK_RETRY_SCHEDULE_MS.length) - 1]!;
}
