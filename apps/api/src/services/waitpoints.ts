// Waitpoints (docs/reference/lifecycle.md#waitpoints-and-durable-steps): points jobs wait on (depends_on, ctx.waitFor) until someone completes them — a caller of
// the organization, a member in the console, or a third party holding the one-time capability URL. The token in
// that URL is shown once, in the answer that created it; only its SHA-256 is stored.
import { createHash, randomBytes } from "node:crypto";
import stringify from "safe-stable-stringify";
import { IDEMPOTENCY_TTL_MS, WAITPOINT_COMPLETE_PATH, WAITPOINT_DATA_MAX_BYTES, type WaitpointStatus } from "@conveyor/contracts";
import {
  cancelWaitpoint as cancelRow,
  completeWaitpoint as completeRow,
  findWaitpoint,
  insertWaitpoint,
  isUuid,
  listWaitpoints as listRows,
  newId,
  type NewWaitpoint,
  type WaitpointActor,
  type WaitpointJson,
} from "@conveyor/db";
import { AppError, notFound, validationFailed } from "./infrastructure/errors";
import { decodeIdCursor, encodeIdCursor } from "./infrastructure/id-cursor";
import { audit } from "./infrastructure/audit";
import type { Caller, ServiceDeps } from "./infrastructure/deps";

export type WaitpointInput = { timeout_seconds: number; description?: string; tags?: string[] };
export type CompletionInput = { data?: unknown };
export type WaitpointListQuery = { status?: WaitpointStatus; tag?: string; limit?: number; cursor?: string };

/** A created waitpoint: the waitpoint and, once only, the URL that completes it without an API key. */
export type CreatedWaitpoint = WaitpointJson & { complete_url: string | null };

/** Who completed or cancelled it, as the waitpoint records it. */
const actorOf = (caller: Caller): WaitpointActor => (caller.apiKeyId ? { type: "api_key", id: caller.apiKeyId } : { type: "user", id: caller.userId });

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const hashToken = (token: string) => createHash("sha256").update(token, "utf8").digest();

/** The completion's data as JSON text, or 400 naming `data` when it is larger than a waitpoint keeps. */
function dataJson(input: CompletionInput): string {
  const json = JSON.stringify(input.data ?? null);
  if (Buffer.byteLength(json, "utf8") > WAITPOINT_DATA_MAX_BYTES) {
    throw validationFailed([{ path: "data", message: `must be at most ${WAITPOINT_DATA_MAX_BYTES} bytes of JSON (it is ${Buffer.byteLength(json, "utf8")})` }]);
  }
  return json;
}

/**
 * Creates a waitpoint. With an Idempotency-Key, a repeat of the same request within 24 h answers the first
 * waitpoint (created: false) without its complete_url — the token was shown once — and another body is 409.
 */
export async function createWaitpoint(
  options: { caller: Caller; input: WaitpointInput; idempotencyKey?: string },
  deps: Pick<ServiceDeps, "db" | "config">,
): Promise<{ created: boolean; waitpoint: CreatedWaitpoint }> {
  const { caller, input } = options;
  const { row, token } = newWaitpoint(caller.orgId, input);
  const requestHash = createHash("sha256")
    .update(stringify({ timeout_seconds: input.timeout_seconds, description: input.description ?? null, tags: [...row.tags].sort() }) ?? "")
    .digest();
  const outcome = await insertWaitpoint(
    deps.db.pool,
    row,
    options.idempotencyKey ? { key: options.idempotencyKey, requestHash, ttlMs: IDEMPOTENCY_TTL_MS } : undefined,
  );
  if (outcome.created) return { created: true, waitpoint: { ...outcome.waitpoint, complete_url: completeUrl(deps, token) } };
  if (!outcome.requestHash?.equals(requestHash)) {
    throw new AppError("idempotency_conflict", "This Idempotency-Key was already used with a different request body in the last 24 hours.");
  }
  return { created: false, waitpoint: { ...outcome.waitpoint, complete_url: null } };
}

/** A new waitpoint's row and the token of its capability URL (only its hash is in the row). */
export function newWaitpoint(orgId: string, input: WaitpointInput): { row: NewWaitpoint; token: string } {
  const token = randomBytes(32).toString("base64url");
  const row = {
    id: newId(),
    orgId,
    tokenHash: hashToken(token),
    timeoutSeconds: input.timeout_seconds,
    description: input.description ?? null,
    tags: [...new Set(input.tags ?? [])],
  };
  return { row, token };
}

/** The capability URL of a waitpoint's token: shown once, in the answer that created it. */
export const completeUrl = (deps: Pick<ServiceDeps, "config">, token: string) => `${deps.config.PUBLIC_URL}${WAITPOINT_COMPLETE_PATH}${token}`;

export async function getWaitpoint(options: { caller: Caller; id: string }, deps: Pick<ServiceDeps, "db">): Promise<WaitpointJson> {
  const waitpoint = isUuid(options.id) ? await findWaitpoint(deps.db.pool, options.caller.orgId, options.id.toLowerCase()) : null;
  if (!waitpoint) throw notFound("Waitpoint");
  return waitpoint;
}

/** One page of the org's waitpoints, newest first, and the query of the next page while more remain. */
export async function listWaitpoints(
  options: { caller: Caller; query: WaitpointListQuery },
  deps: Pick<ServiceDeps, "db">,
): Promise<{ items: WaitpointJson[]; next: URLSearchParams | null }> {
  const { query } = options;
  const limit = query.limit ?? 100;
  const rows = await listRows(deps.db.pool, options.caller.orgId, {
    status: query.status,
    tag: query.tag,
    before: query.cursor === undefined ? undefined : decodeIdCursor(query.cursor),
    limit: limit + 1,
  });
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  const next =
    rows.length > limit && last
      ? new URLSearchParams({
          limit: String(limit),
          ...(query.status ? { status: query.status } : {}),
          ...(query.tag ? { tag: query.tag } : {}),
          cursor: encodeIdCursor(last.id),
        })
      : null;
  return { items, next };
}

function conflict(waitpoint: WaitpointJson): AppError {
  return new AppError(
    "conflict",
    waitpoint.status === "completed"
      ? "This waitpoint was already completed with other data: the first completion wins."
      : `This waitpoint has ${waitpoint.status === "expired" ? "expired" : "been cancelled"}; it can no longer be completed.`,
  );
}

/**
 * Completes the org's waitpoint (a caller of the org: API key, user token or console session). The first
 * completion wins: a repeat with the same data answers the same waitpoint (completed: false); other data, or a
 * waitpoint that expired or was cancelled, is 409 conflict. A completion is in the audit log with who made it.
 */
export async function completeWaitpoint(
  options: { caller: Caller; id: string; input: CompletionInput },
  deps: Pick<ServiceDeps, "db" | "clock">,
): Promise<{ completed: boolean; waitpoint: WaitpointJson }> {
  const { caller } = options;
  const json = dataJson(options.input);
  if (!isUuid(options.id)) throw notFound("Waitpoint");
  const outcome = await completeRow(deps.db.pool, { orgId: caller.orgId, id: options.id.toLowerCase() }, json, actorOf(caller), (tx, waitpoint) =>
    audit(tx, caller, deps.clock, { action: "waitpoint.complete", target: { type: "waitpoint", id: waitpoint.id, label: waitpoint.description } }),
  );
  switch (outcome.outcome) {
    case "not_found":
      throw notFound("Waitpoint");
    case "conflict":
      throw conflict(outcome.waitpoint);
    default:
      return { completed: outcome.outcome === "completed", waitpoint: outcome.waitpoint };
  }
}

/**
 * Completes a waitpoint through its capability URL (no credential: the token is the authority). As by id (docs/reference/lifecycle.md#waitpoints-and-durable-steps):
 * a repeat with the same data answers the same waitpoint, other data or an ended waitpoint is 409 — a third party
 * retrying after a lost answer must not be told "not found". A wrong token is 404: the token is 256 random bits, so a
 * 409 for a known one tells a guesser nothing.
 */
export async function completeWaitpointByToken(
  options: { token: string; input: CompletionInput },
  deps: Pick<ServiceDeps, "db">,
): Promise<{ completed: boolean; waitpoint: WaitpointJson }> {
  const json = dataJson(options.input);
  if (!TOKEN_SHAPE.test(options.token)) throw notFound("Waitpoint");
  const outcome = await completeRow(deps.db.pool, { tokenHash: hashToken(options.token) }, json, { type: "token" });
  switch (outcome.outcome) {
    case "not_found":
      throw notFound("Waitpoint");
    case "conflict":
      throw conflict(outcome.waitpoint);
    default:
      return { completed: outcome.outcome === "completed", waitpoint: outcome.waitpoint };
  }
}

/** Cancels the org's waiting waitpoint: jobs waiting on it count it as a failed dependency. A final one is 409. */
export async function cancelWaitpoint(options: { caller: Caller; id: string }, deps: Pick<ServiceDeps, "db" | "clock">): Promise<WaitpointJson> {
  const { caller } = options;
  if (!isUuid(options.id)) throw notFound("Waitpoint");
  const outcome = await cancelRow(deps.db.pool, caller.orgId, options.id.toLowerCase(), actorOf(caller), (tx, waitpoint) =>
    audit(tx, caller, deps.clock, { action: "waitpoint.cancel", target: { type: "waitpoint", id: waitpoint.id, label: waitpoint.description } }),
  );
  if (outcome.outcome === "not_found") throw notFound("Waitpoint");
  if (outcome.outcome === "conflict") throw conflict(outcome.waitpoint);
  return outcome.waitpoint;
}
