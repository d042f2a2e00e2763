// Webhook endpoints and their deliveries as the API manages them (docs/reference/events.md#events): every query names the org. Events reach
// the endpoints through the relay (webhook-relay.ts); each delivery job reads its endpoint and event and records its
// attempt (webhook-delivery.ts). Secrets are stored sealed (core/secret-box.ts) and never read by the API after they
// are written.
import type pg from "pg";
import {
  WEBHOOK_DELIVERY_TYPE,
  WEBHOOK_TEST_EVENT_TYPE,
  type WebhookDeliveryOutcome,
  type WebhookDeliveryPayload,
  type WebhookDeliveryTrigger,
} from "@conveyor/contracts";
import { newId } from "../core/ids";
import { iso } from "../core/job-sql";
import { insertJobs } from "../job-machine";
import { deliveryConditions, deliveryOutcome, type DeliveryFilter } from "./webhook-redelivery";

/** An endpoint as its org sees it: never its secrets. */
export type WebhookEndpointView = {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  created_at: string;
  /** When the previous secret (before the last rotation) stops signing; null when there is none. */
  previous_secret_expires_at: string | null;
  failing_since: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
};

const VIEW = `w.id, w.url, w.description, w.events, ${iso("w.created_at")} AS created_at,
  CASE WHEN w.previous_secret_expires_at > now() THEN ${iso("w.previous_secret_expires_at")} END AS previous_secret_expires_at,
  ${iso("w.failing_since")} AS failing_since, ${iso("w.disabled_at")} AS disabled_at, w.disabled_reason`;

export type NewWebhookEndpoint = {
  id: string;
  orgId: string;
  url: string;
  description: string | null;
  events: readonly string[];
  /** The secret, sealed for this endpoint's id. */
  sealedSecret: Buffer;
  createdBy: string;
};

export async function insertWebhookEndpoint(db: pg.Pool | pg.PoolClient, endpoint: NewWebhookEndpoint): Promise<WebhookEndpointView> {
  const { rows } = await db.query<WebhookEndpointView>(
    `INSERT INTO webhook_endpoints AS w (id, org_id, url, description, events, secret, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     RETURNING ${VIEW}`,
    [endpoint.id, endpoint.orgId, endpoint.url, endpoint.description, endpoint.events, endpoint.sealedSecret, endpoint.createdBy],
  );
  return rows[0]!;
}

/**
 * The org's endpoints now (id and URL), read after taking the org's endpoint lock for the rest of the transaction: of
 * concurrent creations and edits, each sees what the ones before it committed, so a cap and "one endpoint per URL"
 * hold however many arrive at once.
 */
export async function webhookEndpointUrlsLocked(tx: pg.PoolClient, orgId: string): Promise<{ id: string; url: string }[]> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`webhook-endpoints:${orgId}`]);
  const { rows } = await tx.query<{ id: string; url: string }>("SELECT id, url FROM webhook_endpoints WHERE org_id = $1", [orgId]);
  return rows;
}

/** What an edit may change; absent fields stay. `enabled: true` clears a disabling and the run of failures. */
export type WebhookEndpointChanges = {
  url?: string;
  events?: readonly string[];
  description?: string | null;
  enabled?: boolean;
  /** Why, when `enabled` is false. */
  disabledReason?: string;
};

/** Edits the org's endpoint; answers it before and after, or null when the org has no such endpoint. */
export async function updateWebhookEndpoint(
  tx: pg.PoolClient,
  options: { orgId: string; id: string; changes: WebhookEndpointChanges },
): Promise<{ before: WebhookEndpointView; after: WebhookEndpointView } | null> {
  const { orgId, id, changes } = options;
  const found = await tx.query<WebhookEndpointView>(`SELECT ${VIEW} FROM webhook_endpoints w WHERE w.id = $1 AND w.org_id = $2 FOR UPDATE`, [id, orgId]);
  const before = found.rows[0];
  if (!before) return null;
  const { rows } = await tx.query<WebhookEndpointView>(
    `UPDATE webhook_endpoints w
        SET url = COALESCE($3, w.url),
            events = COALESCE($4::text[], w.events),
            description = CASE WHEN $5::boolean THEN $6 ELSE w.description END,
            disabled_at = CASE WHEN $7::boolean IS NULL THEN w.disabled_at WHEN $7 THEN NULL ELSE COALESCE(w.disabled_at, now()) END,
            disabled_reason = CASE WHEN $7::boolean IS NULL THEN w.disabled_reason WHEN $7 THEN NULL
                                   WHEN w.disabled_at IS NULL THEN $8 ELSE w.disabled_reason END,
            failing_since = CASE WHEN $7::boolean THEN NULL ELSE w.failing_since END
      WHERE w.id = $1 AND w.org_id = $2
      RETURNING ${VIEW}`,
    [
      id,
      orgId,
      changes.url ?? null,
      changes.events ?? null,
      "description" in changes,
      changes.description ?? null,
      changes.enabled ?? null,
      changes.disabledReason ?? "Turned off by an owner or an admin.",
    ],
  );
  return { before, after: rows[0]! };
}

export type QueuedDelivery = { endpoint: WebhookEndpointView; eventId: number | null; eventType: string };

/**
 * Queues one delivery a person asked for: the event again (`eventId`) or a test event (`test`), to the org's endpoint
 * whatever it subscribes to, as a delivery job with `maxRetries` (through insertJobs, like the relay's). Answers what
 * was queued, or why nothing was: no such endpoint in the org, the endpoint is disabled, or the event is not the
 * org's or no longer retained.
 */
export async function queueWebhookDelivery(
  tx: pg.PoolClient,
  options: { orgId: string; endpointId: string; maxRetries: number } & ({ eventId: number } | { test: { id: string; time: string } }),
): Promise<QueuedDelivery | "no_endpoint" | "disabled" | "no_event"> {
  const { rows } = await tx.query<WebhookEndpointView & { event_type: string | null }>(
    `SELECT ${VIEW}, e.type AS event_type
       FROM webhook_endpoints w
       LEFT JOIN events e ON e.id = $3::bigint AND e.org_id = w.org_id
      WHERE w.id = $1 AND w.org_id = $2`,
    [options.endpointId, options.orgId, "eventId" in options ? String(options.eventId) : null],
  );
  const row = rows[0];
  if (!row) return "no_endpoint";
  const { event_type: eventType, ...endpoint } = row;
  if (endpoint.disabled_at) return "disabled";
  let payload: WebhookDeliveryPayload;
  if ("eventId" in options) {
    if (eventType === null) return "no_event";
    payload = { endpoint_id: options.endpointId, event_id: options.eventId, trigger: "redelivery" };
  } else {
    payload = { endpoint_id: options.endpointId, trigger: "test", test: options.test };
  }
  await insertJobs(tx, [
    {
      id: newId(),
      orgId: options.orgId,
      type: WEBHOOK_DELIVERY_TYPE,
      payloadJson: JSON.stringify(payload),
      maxRetries: options.maxRetries,
      createdAt: new Date(),
    },
  ]);
  return "eventId" in options ? { endpoint, eventId: options.eventId, eventType: eventType! } : { endpoint, eventId: null, eventType: WEBHOOK_TEST_EVENT_TYPE };
}

/** The org's endpoints, oldest first. */
export async function listWebhookEndpoints(db: pg.Pool | pg.PoolClient, orgId: string): Promise<WebhookEndpointView[]> {
  const { rows } = await db.query<WebhookEndpointView>(`SELECT ${VIEW} FROM webhook_endpoints w WHERE w.org_id = $1 ORDER BY w.id`, [orgId]);
  return rows;
}

/** Deletes the org's endpoint (its delivery records go with it) and answers it as it was; null when the org has no such endpoint. */
export async function deleteWebhookEndpoint(db: pg.Pool | pg.PoolClient, orgId: string, id: string): Promise<WebhookEndpointView | null> {
  const { rows } = await db.query<WebhookEndpointView>(`DELETE FROM webhook_endpoints w WHERE w.id = $1 AND w.org_id = $2 RETURNING ${VIEW}`, [id, orgId]);
  return rows[0] ?? null;
}

/**
 * Makes `sealedSecret` the endpoint's secret; the current one keeps signing beside it for `previousTtlMs`. A secret
 * rotated out earlier is forgotten. Null when the org has no such endpoint.
 */
export async function rotateWebhookSecret(
  db: pg.Pool | pg.PoolClient,
  options: { orgId: string; id: string; sealedSecret: Buffer; previousTtlMs: number },
): Promise<WebhookEndpointView | null> {
  const { rows } = await db.query<WebhookEndpointView>(
    `UPDATE webhook_endpoints w
        SET previous_secret = w.secret, secret = $3, previous_secret_expires_at = now() + $4 * interval '1 millisecond'
      WHERE w.id = $1 AND w.org_id = $2
      RETURNING ${VIEW}`,
    [options.id, options.orgId, options.sealedSecret, options.previousTtlMs],
  );
  return rows[0] ?? null;
}

export type WebhookDeliveryView = {
  id: number;
  /** Null for a test event. */
  event_id: number | null;
  event_type: string;
  /** The job the event is about; null for a test event. */
  job_id: string | null;
  trigger: WebhookDeliveryTrigger;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  /** The first KiB of the receiver's answer; null when none came. */
  response_body: string | null;
  response_truncated: boolean;
  at: string;
  outcome: WebhookDeliveryOutcome;
};

/**
 * The endpoint's most recent delivery attempts matching `filter` (webhook-redelivery.ts), newest first; null when the
 * org has no such endpoint.
 */
export async function listWebhookDeliveries(
  db: pg.Pool | pg.PoolClient,
  options: { orgId: string; endpointId: string; limit: number; filter?: DeliveryFilter },
): Promise<WebhookDeliveryView[] | null> {
  const values: unknown[] = [options.endpointId, options.orgId, options.limit];
  const matching = deliveryConditions(options.filter ?? {}, "d", "j", values);
  const { rows } = await db.query<Omit<WebhookDeliveryView, "id" | "event_id"> & { id: string | null; event_id: string | null }>(
    `SELECT d.id::text AS id, d.event_id::text AS event_id, d.event_type, d.subject_job_id AS job_id, d.trigger, d.attempt, d.status_code,
            d.duration_ms, d.error, d.response_body, d.response_truncated, ${iso("d.at")} AS at, d.outcome
       FROM webhook_endpoints w
       LEFT JOIN LATERAL (SELECT d.*, ${deliveryOutcome("d", "j")} AS outcome
                            FROM webhook_deliveries d LEFT JOIN jobs j ON j.id = d.job_id
                           WHERE d.endpoint_id = w.id AND ${matching} ORDER BY d.id DESC LIMIT $3) d ON true
      WHERE w.id = $1 AND w.org_id = $2`,
    values,
  );
  if (rows.length === 0) return null;
  return rows
    .filter((r) => r.id !== null)
    .map((r) => ({
      id: Number(r.id),
      event_id: r.event_id === null ? null : Number(r.event_id),
      event_type: r.event_type,
      job_id: r.job_id,
      trigger: r.trigger,
      attempt: r.attempt,
      status_code: r.status_code,
      duration_ms: r.duration_ms,
      error: r.error,
      response_body: r.response_body,
      response_truncated: r.response_truncated,
      at: r.at,
      outcome: r.outcome,
    }));
}
