// The workers' side of a webhook delivery (docs/reference/events.md#events): what one delivery attempt needs — the endpoint as it is now and
// the event — and the record of its attempts, which also disables an endpoint that has failed for too long. The
// endpoint's secrets are read sealed (core/secret-box.ts); the body and the URL are never recorded.
import type pg from "pg";
import type { WebhookDeliveryTrigger } from "@conveyor/contracts";
import { iso } from "../core/job-sql";

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
