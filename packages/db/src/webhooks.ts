// Webhook endpoints and their deliveries (SPEC §10). The API manages endpoints (every query names the org); the
// workers' leader relays events to delivery jobs, and each delivery job reads its endpoint and event and records
// its attempt. Secrets are stored sealed (secret-box.ts) and never read by the API after they are written.
import type pg from "pg";
import {
  LIVE_EVENT_TYPES,
  WEBHOOK_DELIVERY_TYPE,
  WEBHOOK_TEST_EVENT_TYPE,
  type WebhookDeliveryPayload,
  type WebhookDeliveryOutcome,
  type WebhookDeliveryTrigger,
} from "@conveyor/contracts";
import { newId } from "./ids";
import { iso } from "./job-sql";
import { insertJobs } from "./job-machine";
import { inTransaction } from "./transaction";
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

// ---- the workers' side ------------------------------------------------------------------------------------------

/** What one delivery attempt needs: the endpoint as it is now, and the event (null once retention deleted it). */
export type DeliveryTarget = {
  endpoint: {
    id: string;
    orgId: string;
    url: string;
    sealedSecret: Buffer;
    /** The secret before the last rotation, while it still signs. */
    sealedPreviousSecret: Buffer | null;
    disabled: boolean;
  };
  event: { id: number; type: string; time: string; jobId: string; dataJson: string } | null;
};

/**
 * The endpoint and the event of a delivery (the event only if it is the endpoint's org's; none for a test delivery);
 * null when the endpoint is gone.
 */
export async function findDeliveryTarget(
  db: pg.Pool | pg.PoolClient,
  payload: { endpoint_id: string; event_id: number | null },
): Promise<DeliveryTarget | null> {
  const { rows } = await db.query<{
    org_id: string;
    url: string;
    secret: Buffer;
    previous_secret: Buffer | null;
    disabled: boolean;
    event_id: string | null;
    type: string;
    time: string;
    job_id: string;
    data: string;
  }>({
    name: "conveyor-find-delivery-target",
    text: `SELECT w.org_id, w.url, w.secret, CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END AS previous_secret,
                  w.disabled_at IS NOT NULL AS disabled,
                  e.id::text AS event_id, e.type, ${iso("e.time")} AS time, e.job_id, e.data::text AS data
             FROM webhook_endpoints w
             LEFT JOIN events e ON e.id = $2::bigint AND e.org_id = w.org_id
            WHERE w.id = $1`,
    values: [payload.endpoint_id, payload.event_id === null ? null : String(payload.event_id)],
  });
  const row = rows[0];
  if (!row) return null;
  return {
    endpoint: {
      id: payload.endpoint_id,
      orgId: row.org_id,
      url: row.url,
      sealedSecret: row.secret,
      sealedPreviousSecret: row.previous_secret,
      disabled: row.disabled,
    },
    event: row.event_id === null ? null : { id: Number(row.event_id), type: row.type, time: row.time, jobId: row.job_id, dataJson: row.data },
  };
}

/** One delivery attempt, as recorded (never the secret, the body or the URL). */
export type DeliveryAttempt = {
  endpointId: string;
  /** Null for a test event. */
  eventId: number | null;
  eventType: string;
  /** The internal job that made the attempt. */
  jobId: string;
  /** The job the event is about; null for a test event. */
  subjectJobId?: string | null;
  /** What sent it; default "event" (the relay). */
  trigger?: WebhookDeliveryTrigger;
  attempt: number;
  /** The receiver's status, or null when none came (network error, timeout, refused address). */
  statusCode: number | null;
  durationMs: number;
  /** Why it failed (host only, never the path), or null for a 2xx. */
  error: string | null;
  /** The start of the receiver's answer (WEBHOOK_RESPONSE_EXCERPT_BYTES at most), or null when none came. */
  responseBody?: string | null;
  responseTruncated?: boolean;
  delivered: boolean;
};

/**
 * Records attempts in one statement and keeps each endpoint's health: a success ends its run of failures; the first
 * failure starts one (`failing_since`); a failure once the run is older than `disableAfterMs` disables the endpoint
 * with the reason its owners see. Rows are written only when that state changes, so a busy endpoint's row is not
 * rewritten by every delivery. Attempts of endpoints already deleted are dropped; one deleted while this statement runs
 * fails it with a foreign-key violation (23503), and a second call drops that one too. Returns the endpoints disabled now.
 */
export async function recordDeliveryAttempts(db: pg.Pool | pg.PoolClient, attempts: readonly DeliveryAttempt[], disableAfterMs: number): Promise<string[]> {
  if (attempts.length === 0) return [];
  const { rows } = await db.query<{ id: string }>({
    name: "conveyor-record-delivery-attempts",
    text: `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::uuid[], $5::int[], $6::int[], $7::int[], $8::text[], $9::boolean[],
                            $11::uuid[], $12::text[], $13::text[], $14::boolean[])
         WITH ORDINALITY AS t(endpoint_id, event_id, event_type, job_id, attempt, status_code, duration_ms, error, delivered,
                              subject_job_id, trigger, response_body, response_truncated, n)
     ), recorded AS (
       -- Not locked here: a row lock would skip the endpoints this statement updates below. An endpoint deleted in
       -- the meantime fails the statement's foreign key instead (the caller tries again without it).
       INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, job_id, attempt, status_code, duration_ms, error,
                                       subject_job_id, trigger, response_body, response_truncated)
       SELECT i.endpoint_id, i.event_id, i.event_type, i.job_id, i.attempt, i.status_code, i.duration_ms, i.error,
              i.subject_job_id, i.trigger, i.response_body, i.response_truncated
         FROM input i JOIN webhook_endpoints w ON w.id = i.endpoint_id
        ORDER BY i.n
     ), health AS (
       SELECT endpoint_id, bool_or(delivered) AS delivered,
              (array_agg(COALESCE(error, 'HTTP ' || status_code) ORDER BY n DESC))[1] AS last_error
         FROM input GROUP BY endpoint_id
     ), recovered AS (
       UPDATE webhook_endpoints w SET failing_since = NULL
         FROM health h WHERE w.id = h.endpoint_id AND h.delivered AND w.failing_since IS NOT NULL
     ), failing AS (
       UPDATE webhook_endpoints w
          SET failing_since = COALESCE(w.failing_since, now()),
              disabled_at = CASE WHEN w.failing_since IS NOT NULL THEN now() END,
              disabled_reason = CASE WHEN w.failing_since IS NOT NULL THEN
                'Disabled: every delivery has failed since ' || ${iso("w.failing_since")} || ', for more than ' || $10::bigint / 3600000 ||
                ' hours. Last error: ' || left(h.last_error, 500) END
         FROM health h
        WHERE w.id = h.endpoint_id AND NOT h.delivered AND w.disabled_at IS NULL
          AND (w.failing_since IS NULL OR w.failing_since <= now() - $10::bigint * interval '1 millisecond')
       RETURNING w.id, w.disabled_at
     )
     SELECT id FROM failing WHERE disabled_at IS NOT NULL`,
    values: [
      attempts.map((a) => a.endpointId),
      attempts.map((a) => (a.eventId === null ? null : String(a.eventId))),
      attempts.map((a) => a.eventType),
      attempts.map((a) => a.jobId),
      attempts.map((a) => a.attempt),
      attempts.map((a) => a.statusCode),
      attempts.map((a) => a.durationMs),
      attempts.map((a) => a.error),
      attempts.map((a) => a.delivered),
      disableAfterMs,
      attempts.map((a) => a.subjectJobId ?? null),
      attempts.map((a) => a.trigger ?? "event"),
      attempts.map((a) => a.responseBody ?? null),
      attempts.map((a) => a.responseTruncated ?? false),
    ],
  });
  return rows.map((r) => r.id);
}

/** Name of the relay's row in event_cursors. */
export const WEBHOOK_RELAY_CURSOR = "webhook-relay";

export type RelayOptions = {
  /** Events read per round at most. */
  limit: number;
  /** max_retries of each delivery job. */
  maxRetries: number;
};

// Which events an endpoint receives: those committed after it was created, exactly, as Stripe and Svix do. "After"
// is decided by the snapshot of the statement that created it (`created_snapshot`, taken by the column's default):
// an event whose transaction that snapshot sees committed before the endpoint; any other committed after it began
// (conveyor_event_committed_after). Clocks play no part.
//
// The relay cannot simply match each event to the endpoints it sees: an endpoint whose creating transaction commits
// after a round's snapshot is invisible to that round, although that round may read events committed after the
// endpoint's snapshot: a transaction that was running when the endpoint was created and committed before it (one
// that takes its id after the creation's stays above the horizon until the creation ends). So the first round that
// sees an endpoint catches it up: it also queues the endpoint's events at or below the cursor it locked (they can
// only have ids from the endpoint's snapshot's xmin on), and records that cursor as the endpoint's `relay_start`.
// Exactly once, because:
//  - Rounds are serialised by the cursor's row lock, and each reads with a snapshot taken after it locked, so it
//    sees every earlier round's commit. Every event at or below the cursor was below the horizon of the round that
//    passed it, so it is visible to every later round (packages/db/src/events.ts).
//  - For an endpoint E, no round before the first one that sees E (R) matches it; R queues E's events up to R's
//    locked cursor L (catch-up) and in (L, last] (its batch), and sets relay_start, so no later round catches E up
//    again; later rounds queue E's events in their batches, which follow each other without overlap.
//  - The idle path (no enabled endpoint visible) moves the cursor without reading events, but only if the cursor row
//    is still the version its snapshot saw (compare-and-set on xmin): a round that joined an endpoint always writes
//    the cursor row, so an idle move on a snapshot that did not see that endpoint cannot follow it. An idle move
//    before the endpoint is joined is covered by the catch-up, whose range reaches the cursor wherever it is.

/**
 * One round of the webhook relay: the events after the relay's cursor (below the horizon, so none is skipped), each
 * matched to the enabled endpoints of its org that subscribe to its type and were created before it committed; the
 * catch-up of endpoints this relay sees for the first time (above); a delivery job per match (through insertJobs:
 * the dispatcher, retries, the fence and the reconciler apply); and the cursor moved past them — all in one
 * transaction, with the cursor's row locked, so two leaders can never relay an event twice. The first round ever
 * starts at the horizon.
 */
export async function relayEventsToWebhooks(pool: pg.Pool, options: RelayOptions): Promise<{ events: number; deliveries: number }> {
  const cursor = WEBHOOK_RELAY_CURSOR;
  // No enabled endpoint anywhere (the usual case for many installations): the events need no reading, the cursor
  // moves to the horizon in one statement — written only when events lie between them (every transaction moves the
  // horizon, this one's too), so ticks without events write nothing; and only if no round wrote the row since this
  // statement's snapshot (see above).
  const { rows: idle } = await pool.query<{ idle: boolean }>(
    `WITH idle AS (
       SELECT NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE disabled_at IS NULL) AS idle,
              (SELECT xmin FROM event_cursors WHERE name = $1) AS version
     ), moved AS (
       UPDATE event_cursors c SET last_event_id = h.horizon, updated_at = now()
         FROM idle, (SELECT conveyor_event_horizon() - 1 AS horizon) h
        WHERE c.name = $1 AND idle.idle AND c.xmin = idle.version
          AND EXISTS (SELECT 1 FROM events e WHERE e.id > c.last_event_id AND e.id <= h.horizon)
     )
     SELECT idle AND version IS NOT NULL AS idle FROM idle`,
    [cursor],
  );
  if (idle[0]!.idle) return { events: 0, deliveries: 0 };
  return inTransaction(pool, async (client) => {
    // The horizon is only worked out when the row is missing (the first round ever).
    await client.query(
      `INSERT INTO event_cursors (name, last_event_id)
       SELECT $1, conveyor_event_horizon() - 1 WHERE NOT EXISTS (SELECT 1 FROM event_cursors WHERE name = $1)
       ON CONFLICT (name) DO NOTHING`,
      [cursor],
    );
    const locked = await client.query<{ after: string }>("SELECT last_event_id::text AS after FROM event_cursors WHERE name = $1 FOR UPDATE", [cursor]);
    const after = locked.rows[0]!.after;
    const { rows } = await client.query<{
      last: string | null;
      events: number;
      joined: string[];
      deliveries: { event_id: number; org_id: string; endpoint_id: string }[];
    }>({
      name: "conveyor-relay-events",
      text: `WITH batch AS (
         SELECT e.id, e.org_id, e.type FROM events e
          WHERE e.id > $1::bigint AND e.id < (SELECT conveyor_event_horizon())
          ORDER BY e.id
          LIMIT $2
       ), joining AS (
         SELECT w.id, w.org_id, w.events, w.created_snapshot, w.disabled_at FROM webhook_endpoints w WHERE w.relay_start IS NULL
       ), matched AS (
         SELECT b.id AS event_id, b.org_id, w.id AS endpoint_id
           FROM batch b
           JOIN webhook_endpoints w
             ON w.org_id = b.org_id AND w.disabled_at IS NULL
            AND (('*' = ANY(w.events) AND b.type <> ALL($3::text[])) OR b.type = ANY(w.events))
            AND conveyor_event_committed_after(b.id, w.created_snapshot)
         UNION ALL
         SELECT e.id, e.org_id, j.id
           FROM joining j
           JOIN events e
             ON e.org_id = j.org_id AND e.id <= $1::bigint
            AND e.id >= (pg_snapshot_xmin(j.created_snapshot)::text::bigint << 20)
            AND (('*' = ANY(j.events) AND e.type <> ALL($3::text[])) OR e.type = ANY(j.events))
            AND conveyor_event_committed_after(e.id, j.created_snapshot)
          WHERE j.disabled_at IS NULL
       )
       SELECT (SELECT max(id) FROM batch)::text AS last, (SELECT count(*) FROM batch)::int AS events,
              ARRAY(SELECT id::text FROM joining) AS joined,
              COALESCE((SELECT json_agg(json_build_object('event_id', m.event_id, 'org_id', m.org_id, 'endpoint_id', m.endpoint_id)
                                        ORDER BY m.event_id, m.endpoint_id)
                          FROM matched m), '[]'::json) AS deliveries`,
      // "*" is every status event: progress and output go only to endpoints that name them (SPEC §21).
      values: [after, options.limit, LIVE_EVENT_TYPES],
    });
    const { last, events, joined, deliveries } = rows[0]!;
    if (last === null && joined.length === 0) {
      return { events: 0, deliveries: 0 };
    }
    const now = new Date();
    await insertJobs(
      client,
      deliveries.map((d) => ({
        id: newId(),
        orgId: d.org_id,
        type: WEBHOOK_DELIVERY_TYPE,
        payloadJson: JSON.stringify({ endpoint_id: d.endpoint_id, event_id: d.event_id } satisfies WebhookDeliveryPayload),
        maxRetries: options.maxRetries,
        createdAt: now,
      })),
    );
    if (joined.length) await client.query("UPDATE webhook_endpoints SET relay_start = $2::bigint WHERE id = ANY($1::uuid[])", [joined, after]);
    // Written even when no event was read: a round that joined an endpoint must fail a concurrent idle move.
    await client.query("UPDATE event_cursors SET last_event_id = $2::bigint, updated_at = now() WHERE name = $1", [cursor, last ?? after]);
    return { events, deliveries: deliveries.length };
  });
}
