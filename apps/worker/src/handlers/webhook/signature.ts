// Standard Webhooks v1 headers (docs/reference/providers.md#standard-webhooks). The `standardwebhooks` package is the reference the tests
// verify against; signing is a few lines of node:crypto, so production needs nothing more.
import { createHmac } from "node:crypto";

/**
 * The delivery's `webhook-id`: derived from the job id only, so every attempt of one job sends the same id
 * and receivers can deduplicate on it. The spec forbids "." in it; anything outside [A-Za-z0-9_-] goes.
 */
export function webhookId(jobId: string): string {
  return `msg_${jobId.replace(/[^A-Za-z0-9_-]/g, "")}`;
}

/** `v1,` + base64 HMAC-SHA256 over `${id}.${timestamp}.${body}`, keyed by the bytes after `whsec_`. */
export function webhookSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

/** The headers of one attempt; `timestamp` is this attempt's Unix seconds, so it changes on each retry. */
export function webhookHeaders(options: { id: string; timestamp: number; body: string; secret?: string }): Record<string, string> {
  const headers: Record<string, string> = { "webhook-id": options.id, "webhook-timestamp": String(options.timestamp) };
  if (options.secret) headers["webhook-signature"] = webhookSignature(options.secret, options.id, options.timestamp, options.body);
  return headers;
}
