// Webhook endpoints (SPEC §10): owners and admins say where their org's job events go. The signing secret is made
// here, returned once (at creation and at each rotation) and stored sealed under WEBHOOK_SECRETS_KEY: the workers
// sign every delivery with it, so a hash would not do. Nothing here ever reads a secret back.
import { randomBytes } from "node:crypto";
import { urlPolicy, webhookSecretsKey } from "@conveyor/config";
import { urlRefusal, WEBHOOK_PREVIOUS_SECRET_TTL_MS, type WebhookEventChoice } from "@conveyor/contracts";
import {
  countWebhookEndpointsLocked,
  deleteWebhookEndpoint as deleteEndpoint,
  inTransaction,
  insertWebhookEndpoint,
  isUuid,
  listWebhookDeliveries as listDeliveries,
  listWebhookEndpoints as listEndpoints,
  newId,
  rotateWebhookSecret as rotateSecret,
  sealSecret,
  type WebhookDeliveryView,
  type WebhookEndpointView,
} from "@conveyor/db";
import { AppError, notFound, validationFailed } from "../http/errors";
import { audit } from "./audit";
import type { Caller, ServiceDeps } from "./deps";

export type WebhookEndpointInput = { url: string; events: WebhookEventChoice[]; description?: string };
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
    if (cap > 0 && (await countWebhookEndpointsLocked(tx, caller.orgId)) >= cap) {
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
  options: { caller: Caller; id: string; limit: number },
  { db }: Pick<ServiceDeps, "db">,
): Promise<WebhookDeliveryView[]> {
  const deliveries = isUuid(options.id) ? await listDeliveries(db.pool, { orgId: options.caller.orgId, endpointId: options.id, limit: options.limit }) : null;
  if (!deliveries) throw notFound("Webhook endpoint");
  return deliveries;
}
