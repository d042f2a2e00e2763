// Webhook endpoints (docs/reference/events.md#events): owners and admins say where their org's job events go. The signing secret is made
// here, returned once (at creation and at each rotation) and stored sealed under WEBHOOK_SECRETS_KEY: the workers
// sign every delivery with it, so a hash would not do. Nothing here ever reads a secret back.
import { randomBytes } from "node:crypto";
import { urlPolicy, webhookSecretsKey } from "@conveyor/config";
import { urlRefusal, WEBHOOK_PREVIOUS_SECRET_TTL_MS, type WebhookDeliveryOutcome, type WebhookEventChoice } from "@conveyor/contracts";
import {
  deleteWebhookEndpoint as deleteEndpoint,
  inTransaction,
  insertWebhookEndpoint,
  isUuid,
  listWebhookDeliveries as listDeliveries,
  listWebhookEndpoints as listEndpoints,
  newId,
  queueWebhookDelivery,
  rotateWebhookSecret as rotateSecret,
  sealSecret,
  updateWebhookEndpoint as updateEndpoint,
  webhookEndpointUrlsLocked,
  type WebhookDeliveryView,
  type WebhookEndpointView,
} from "@conveyor/db";
import type pg from "pg";
import { AppError, notFound, validationFailed } from "./infrastructure/errors";
import { audit, changedFields } from "./infrastructure/audit";
import type { Caller, ServiceDeps } from "./infrastructure/deps";

export type WebhookEndpointInput = { url: string; events: WebhookEventChoice[]; description?: string };
export type WebhookEndpointPatch = { url?: string; events?: WebhookEventChoice[]; description?: string; enabled?: boolean };
/** A delivery a person asked for, as queued (it runs once, without retries; its attempt shows among the deliveries). */
export type QueuedWebhookDelivery = { endpoint_id: string; event_id: number | null; event_type: string; trigger: "redelivery" | "test" };
export type WebhookEndpointJson = WebhookEndpointView;
export type WebhookEndpointWithSecret = WebhookEndpointView & { secret: string };

type Deps = Pick<ServiceDeps, "db" | "config" | "clock">;

/**
 * How the audit log names an endpoint: its description, or its host. Never its URL: a receiver's path or query often
 * is its secret (Slack's incoming webhooks).
 */
const endpointLabel = (endpoint: Pick<WebhookEndpointView, "description" | "url">) => endpoint.description || new URL(endpoint.url).host;

/** `whsec_` + 32 random bytes in base64: the Standard Webhooks form, which receivers' libraries take as it is. */
const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

export async function createWebhookEndpoint(
  options: { caller: Caller; input: WebhookEndpointInput },
  { db, config, clock }: Deps,
): Promise<WebhookEndpointWithSecret> {
  const { caller, input } = options;
  // The same rule the workers apply again to every address the host resolves to, at every delivery.
  const refusal = urlRefusal(input.url, urlPolicy(config));
  if (refusal) throw validationFailed([{ path: "url", message: refusal }]);
  const id = newId();
  const secret = newSecret();
  const endpoint = await inTransaction(db.pool, async (tx) => {
    const cap = config.WEBHOOK_ENDPOINTS_PER_ORG;
    const existing = await refuseTakenUrl(tx, caller.orgId, input.url, null);
    if (cap > 0 && existing >= cap) {
      throw new AppError(
        "webhook_endpoint_limit",
        `Your organization has ${cap} webhook endpoints, the most it may (WEBHOOK_ENDPOINTS_PER_ORG). Delete one first, or send several event types to one endpoint.`,
      );
    }
    const endpoint = await insertWebhookEndpoint(tx, {
      id,
      orgId: caller.orgId,
      url: input.url,
      description: input.description || null,
      events: input.events,
      sealedSecret: sealSecret(webhookSecretsKey(config), secret, id),
      createdBy: caller.userId,
    });
    await audit(tx, caller, clock, {
      action: "webhook_endpoint.create",
      target: { type: "webhook_endpoint", id, label: endpointLabel(endpoint) },
      changes: {
        host: { before: null, after: new URL(endpoint.url).host },
        events: { before: null, after: endpoint.events },
        ...(endpoint.description ? { description: { before: null, after: endpoint.description } } : {}),
      },
    });
    return endpoint;
  });
  return { ...endpoint, secret };
}

/** The same address written the same way: scheme and host in lower case, default port and an empty path dropped. */
function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return a === b;
  }
}

/**
 * Takes the org's endpoint lock and refuses `url` when another endpoint of the org (not `exceptId`) has it: one
 * receiver would get every event twice. Answers how many endpoints the org has.
 */
async function refuseTakenUrl(tx: pg.PoolClient, orgId: string, url: string, exceptId: string | null): Promise<number> {
  const endpoints = await webhookEndpointUrlsLocked(tx, orgId);
  if (endpoints.some((e) => e.id !== exceptId && sameUrl(e.url, url))) {
    throw new AppError(
      "webhook_url_taken",
      "Your organization already has an endpoint with this URL. One endpoint can receive several event types, so each event is sent to it once.",
      [{ path: "url", message: "is already an endpoint of your organization" }],
    );
  }
  return endpoints.length;
}

/**
 * Edits an endpoint: its URL (checked as at creation, and unique in the org), events, description, or whether it is
 * enabled (re-enabling one disabled after days of failures ends its run of failures). Deliveries read the endpoint at
 * each attempt, so retries already planned go to the new URL.
 */
export async function updateWebhookEndpoint(
  options: { caller: Caller; id: string; patch: WebhookEndpointPatch },
  { db, config, clock }: Deps,
): Promise<WebhookEndpointJson> {
  const { caller, id, patch } = options;
  if (patch.url !== undefined) {
    const refusal = urlRefusal(patch.url, urlPolicy(config));
    if (refusal) throw validationFailed([{ path: "url", message: refusal }]);
  }
  const updated =
    isUuid(id) &&
    (await inTransaction(db.pool, async (tx) => {
      if (patch.url !== undefined) await refuseTakenUrl(tx, caller.orgId, patch.url, id);
      const updated = await updateEndpoint(tx, {
        orgId: caller.orgId,
        id,
        changes: {
          ...(patch.url !== undefined ? { url: patch.url } : {}),
          ...(patch.events !== undefined ? { events: patch.events } : {}),
          ...(patch.description !== undefined ? { description: patch.description || null } : {}),
          ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
        },
      });
      if (!updated) return null;
      const { before, after } = updated;
      // The host, never the whole URL (its path or query is often the receiver's secret): whether it changed is a detail.
      const view = (e: WebhookEndpointView) => ({ host: new URL(e.url).host, events: e.events, description: e.description, enabled: e.disabled_at === null });
      await audit(tx, caller, clock, {
        action: "webhook_endpoint.update",
        target: { type: "webhook_endpoint", id, label: endpointLabel(after) },
        changes: changedFields(view(before), view(after)),
        ...(before.url !== after.url ? { details: { url_changed: true } } : {}),
      });
      return after;
    }));
  if (!updated) throw notFound("Webhook endpoint");
  return updated;
}

/** Why a person's delivery could not be queued, as the API says it. */
function refusedDelivery(outcome: "no_endpoint" | "disabled" | "no_event"): AppError {
  if (outcome === "no_endpoint") return notFound("Webhook endpoint");
  if (outcome === "disabled") {
    return new AppError("webhook_endpoint_disabled", "This endpoint is disabled. Enable it (PATCH with enabled: true) before sending to it again.");
  }
  return new AppError(
    "event_expired",
    "That event is not in your organization's event log any more (events are kept for a limited time), so it cannot be sent again.",
  );
}

/**
 * Sends one event to the endpoint again, whatever the endpoint subscribes to now: one attempt, recorded among its
 * deliveries with trigger "redelivery" (a person who wants another presses again).
 */
export async function redeliverWebhookEvent(
  options: { caller: Caller; id: string; eventId: number },
  { db, clock }: Pick<ServiceDeps, "db" | "clock">,
): Promise<QueuedWebhookDelivery> {
  const { caller, id, eventId } = options;
  if (!isUuid(id)) throw notFound("Webhook endpoint");
  const outcome = await inTransaction(db.pool, async (tx) => {
    const queued = await queueWebhookDelivery(tx, { orgId: caller.orgId, endpointId: id, eventId, maxRetries: 0 });
    if (typeof queued === "string") return queued;
    await audit(tx, caller, clock, {
      action: "webhook_endpoint.redeliver",
      target: { type: "webhook_endpoint", id, label: endpointLabel(queued.endpoint) },
      details: { event_id: eventId, event_type: queued.eventType },
    });
    return queued;
  });
  if (typeof outcome === "string") throw refusedDelivery(outcome);
  return { endpoint_id: id, event_id: eventId, event_type: outcome.eventType, trigger: "redelivery" };
}

/**
 * Sends a test event (CloudEvents type conveyor.webhook.test, signed like any delivery) to the endpoint: one attempt,
 * recorded among its deliveries with trigger "test". Nothing is written to the event log.
 */
export async function sendWebhookTestEvent(
  options: { caller: Caller; id: string },
  { db, clock }: Pick<ServiceDeps, "db" | "clock">,
): Promise<QueuedWebhookDelivery> {
  const { caller, id } = options;
  if (!isUuid(id)) throw notFound("Webhook endpoint");
  const test = { id: `test_${newId()}`, time: clock.now().toISOString() };
  const outcome = await inTransaction(db.pool, async (tx) => {
    const queued = await queueWebhookDelivery(tx, { orgId: caller.orgId, endpointId: id, test, maxRetries: 0 });
    if (typeof queued === "string") return queued;
    await audit(tx, caller, clock, {
      action: "webhook_endpoint.test",
      target: { type: "webhook_endpoint", id, label: endpointLabel(queued.endpoint) },
    });
    return queued;
  });
  if (typeof outcome === "string") throw refusedDelivery(outcome);
  return { endpoint_id: id, event_id: null, event_type: outcome.eventType, trigger: "test" };
}

export async function listWebhookEndpoints(options: { caller: Caller }, { db }: Pick<ServiceDeps, "db">): Promise<WebhookEndpointJson[]> {
  return listEndpoints(db.pool, options.caller.orgId);
}

export async function deleteWebhookEndpoint(options: { caller: Caller; id: string }, { db, clock }: Pick<ServiceDeps, "db" | "clock">): Promise<void> {
  const { caller, id } = options;
  const deleted =
    isUuid(id) &&
    (await inTransaction(db.pool, async (tx) => {
      const deleted = await deleteEndpoint(tx, caller.orgId, id);
      if (deleted)
        await audit(tx, caller, clock, {
          action: "webhook_endpoint.delete",
          target: { type: "webhook_endpoint", id: deleted.id, label: endpointLabel(deleted) },
        });
      return deleted;
    }));
  if (!deleted) throw notFound("Webhook endpoint");
}

/** A new secret, returned once; the one it replaces keeps signing beside it for 24 hours. */
export async function rotateWebhookSecret(options: { caller: Caller; id: string }, { db, config, clock }: Deps): Promise<WebhookEndpointWithSecret> {
  const { caller, id } = options;
  const secret = newSecret();
  const endpoint = isUuid(id)
    ? await inTransaction(db.pool, async (tx) => {
        const endpoint = await rotateSecret(tx, {
          orgId: caller.orgId,
          id,
          sealedSecret: sealSecret(webhookSecretsKey(config), secret, id),
          previousTtlMs: WEBHOOK_PREVIOUS_SECRET_TTL_MS,
        });
        if (endpoint) {
          await audit(tx, caller, clock, {
            action: "webhook_endpoint.rotate_secret",
            target: { type: "webhook_endpoint", id: endpoint.id, label: endpointLabel(endpoint) },
            details: { previous_secret_expires_at: endpoint.previous_secret_expires_at },
          });
        }
        return endpoint;
      })
    : null;
  if (!endpoint) throw notFound("Webhook endpoint");
  return { ...endpoint, secret };
}

export async function listWebhookDeliveries(
  options: { caller: Caller; id: string; limit: number; filter?: { outcome?: WebhookDeliveryOutcome; event_type?: string; after?: string; before?: string } },
  { db }: Pick<ServiceDeps, "db">,
): Promise<WebhookDeliveryView[]> {
  const { outcome, event_type: eventType, after, before } = options.filter ?? {};
  const filter = { outcome, eventType, after: after ? new Date(after) : undefined, before: before ? new Date(before) : undefined };
  const deliveries = isUuid(options.id)
    ? await listDeliveries(db.pool, { orgId: options.caller.orgId, endpointId: options.id, limit: options.limit, filter })
    : null;
  if (!deliveries) throw notFound("Webhook endpoint");
  return deliveries;
}
