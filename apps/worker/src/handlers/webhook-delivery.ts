// _webhook_delivery (internal): POSTs one event to one webhook endpoint (docs/reference/events.md#events) as a CloudEvents 1.0 structured
// JSON body with Standard Webhooks headers, through the same SSRF guard, HTTP exchange and signer as the `webhook`
// job type. Each attempt reads the endpoint again (a deleted or disabled one gets nothing more; a rotated secret
// signs at once) and is recorded with its status code and duration. Retries follow WEBHOOK_RETRY_SCHEDULE_MS.
import type pg from "pg";
import { urlPolicy, webhookSecretsKey } from "@conveyor/config";
import {
  cloudEventType,
  PermanentJobError,
  RetryableJobError,
  WEBHOOK_RESPONSE_EXCERPT_BYTES,
  WEBHOOK_TEST_EVENT_TYPE,
  webhookRetryDelayMs,
  type JobContext,
  type JobResult,
  type WebhookDeliveryPayload,
} from "@conveyor/contracts";
import { findDeliveryTarget, isUuid, openSecret, type DeliveryTarget } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import type { HandlerSettings } from "./settings";
import { createSsrfGuard, type NetOptions } from "@conveyor/net";
import { postWebhook, USER_AGENT } from "./webhook";
import { DeliveryRecorder } from "./webhook/delivery-recorder";
import { webhookSignature } from "./webhook/signature";

export type WebhookDeliveryDeps = {
  pool: pg.Pool;
  settings: Pick<HandlerSettings, "WEBHOOK_ALLOW_HTTP" | "ALLOW_PRIVATE_NETWORK" | "WEBHOOK_TIMEOUT_MS" | "WEBHOOK_SECRETS_KEY">;
  logger: Logger;
  /** Records attempts; default: one per handler, batching by itself. */
  recorder?: DeliveryRecorder;
};

/** Runs a delivery job on its raw payload text. */
export type DeliveryHandler = (payloadJson: string, ctx: JobContext) => Promise<JobResult>;

export function webhookDeliveryHandler(deps: WebhookDeliveryDeps, net: NetOptions = {}): DeliveryHandler {
  const guard = createSsrfGuard({ policy: urlPolicy(deps.settings), ...net });
  const key = webhookSecretsKey(deps.settings);
  const recorder = deps.recorder ?? new DeliveryRecorder(deps.pool);

  return async (payloadJson, ctx) => {
    const payload = parsePayload(payloadJson);
    const test = payload.trigger === "test" ? payload.test : null;
    const target = await findDeliveryTarget(deps.pool, { endpoint_id: payload.endpoint_id, event_id: "event_id" in payload ? payload.event_id : null });
    // Nothing to deliver any more: the job is done, without an attempt to record.
    if (!target) return { skipped: "the endpoint was deleted" };
    if (target.endpoint.disabled) return { skipped: "the endpoint is disabled" };
    const event: DeliveredEvent | null = test ? testEvent(target, test) : target.event;
    if (!event) return { skipped: "the event is no longer retained" };

    const record = (attempt: { statusCode: number | null; durationMs: number; error: string | null; body?: Buffer | null; truncated?: boolean }) =>
      recorder.record({
        endpointId: target.endpoint.id,
        eventId: typeof event.id === "number" ? event.id : null,
        eventType: event.type,
        jobId: ctx.jobId,
        subjectJobId: event.jobId,
        trigger: payload.trigger ?? "event",
        attempt: ctx.attempt,
        statusCode: attempt.statusCode,
        durationMs: attempt.durationMs,
        error: attempt.error,
        ...responseHead(attempt.body ?? null, attempt.truncated ?? false),
        delivered: attempt.error === null,
      });

    let url: URL;
    let secrets: string[];
    try {
      url = guard.checkUrl(target.endpoint.url);
      secrets = signingSecrets(key, target);
    } catch (error) {
      await record({ statusCode: null, durationMs: 0, error: (error as Error).message });
      throw error;
    }

    const id = String(event.id);
    const timestamp = Math.floor(Date.now() / 1000);
    const body = cloudEvent(target, event);
    const answer = await postWebhook(guard, {
      url,
      headers: {
        "content-type": "application/cloudevents+json; charset=utf-8",
        "user-agent": USER_AGENT,
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        // Standard Webhooks: space-separated signatures, any one of which verifies (both secrets during a rotation).
        "webhook-signature": secrets.map((secret) => webhookSignature(secret, id, timestamp, body)).join(" "),
      },
      body,
      signal: ctx.signal,
      timeoutMs: deps.settings.WEBHOOK_TIMEOUT_MS,
    });
    const disabled = await record({
      statusCode: answer.status,
      durationMs: answer.durationMs,
      error: answer.failure?.message ?? null,
      body: answer.body,
      truncated: answer.truncated,
    });

    if (!answer.failure) return { status: answer.status, event_id: event.id, duration_ms: answer.durationMs };
    if (disabled) {
      deps.logger.warn("webhook endpoint disabled after 3 days of failed deliveries", { webhookEndpointId: target.endpoint.id, orgId: target.endpoint.orgId });
      throw new PermanentJobError(`${answer.failure.message}; the endpoint has now been disabled after 3 days of failures`);
    }
    if (answer.failure instanceof RetryableJobError) {
      // The schedule's wait, or longer if the receiver asked for it (the runtime caps every wait at one hour).
      throw new RetryableJobError(answer.failure.message, Math.max(webhookRetryDelayMs(ctx.attempt), answer.failure.retryAfterMs ?? 0));
    }
    throw answer.failure;
  };
}

/** The event a delivery sends: one of the event log, or a test event (its id a string, about no job). */
type DeliveredEvent = { id: number | string; type: string; time: string; jobId: string | null; dataJson: string };

function parsePayload(text: string): WebhookDeliveryPayload {
  const value = JSON.parse(text) as { endpoint_id?: unknown; event_id?: unknown; trigger?: unknown; test?: { id?: unknown; time?: unknown } };
  if (typeof value.endpoint_id !== "string" || !isUuid(value.endpoint_id)) {
    throw new PermanentJobError("The payload is not a webhook delivery: it needs endpoint_id (a UUID).");
  }
  if (value.trigger === "test") {
    if (typeof value.test?.id !== "string" || typeof value.test.time !== "string") {
      throw new PermanentJobError("The payload is not a test delivery: it needs test.id and test.time.");
    }
    return { endpoint_id: value.endpoint_id, trigger: "test", test: { id: value.test.id, time: value.test.time } };
  }
  if (!Number.isSafeInteger(value.event_id)) {
    throw new PermanentJobError("The payload is not a webhook delivery: it needs endpoint_id (a UUID) and event_id (an integer).");
  }
  return { endpoint_id: value.endpoint_id, event_id: value.event_id as number, ...(value.trigger === "redelivery" ? { trigger: "redelivery" as const } : {}) };
}

/** A test event: about no job, saying which endpoint it was sent to. */
function testEvent(target: DeliveryTarget, test: { id: string; time: string }): DeliveredEvent {
  const data = {
    message: "A test event from Conveyor. Your endpoint received it; check that it verifies the webhook-signature header.",
    endpoint_id: target.endpoint.id,
  };
  return { id: test.id, type: WEBHOOK_TEST_EVENT_TYPE, time: test.time, jobId: null, dataJson: JSON.stringify(data) };
}

/**
 * The first WEBHOOK_RESPONSE_EXCERPT_BYTES of the receiver's answer as text, for its owners to read beside the
 * attempt (never logged): cut at a character boundary, NUL bytes replaced (Postgres text cannot hold them).
 */
function responseHead(body: Buffer | null, truncated: boolean): { responseBody: string | null; responseTruncated: boolean } {
  if (body === null) return { responseBody: null, responseTruncated: false };
  const head = body.subarray(0, WEBHOOK_RESPONSE_EXCERPT_BYTES);
  // stream: true holds back a character cut in two at the end instead of decoding it as U+FFFD.
  const text = new TextDecoder("utf-8").decode(head, { stream: true }).replaceAll("\u0000", "\uFFFD");
  return { responseBody: text, responseTruncated: truncated || body.length > head.length };
}

/** The current secret, and the previous one while it still signs. */
function signingSecrets(key: Buffer, target: DeliveryTarget): string[] {
  const { id, sealedSecret, sealedPreviousSecret } = target.endpoint;
  try {
    return [sealedSecret, ...(sealedPreviousSecret ? [sealedPreviousSecret] : [])].map((sealed) => openSecret(key, sealed, id));
  } catch {
    throw new PermanentJobError(
      "The endpoint's signing secret cannot be read with this WEBHOOK_SECRETS_KEY (was the key changed?); rotate the endpoint's secret.",
    );
  }
}

/** CloudEvents 1.0, structured JSON mode. `data` is Postgres' JSON text of the job, put in as it is. */
function cloudEvent(target: DeliveryTarget, event: DeliveredEvent): string {
  const envelope = JSON.stringify({
    specversion: "1.0",
    id: String(event.id),
    source: `/orgs/${target.endpoint.orgId}`,
    type: cloudEventType(event.type),
    ...(event.jobId ? { subject: event.jobId } : {}),
    time: event.time,
    datacontenttype: "application/json",
  });
  return `${envelope.slice(0, -1)},"data":${event.dataJson}}`;
}
