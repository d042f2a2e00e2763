// Progress and live results for front ends (docs/reference/events.md#progress-and-live-results): a job's output, and the public tokens that let a browser read
// one job — the job, its output and its events — without any other credential.
import { findJobOutput, insertPublicToken, isUuid, livePublicTokens, newId, revokePublicToken } from "@conveyor/db";
import { notFound } from "./infrastructure/errors";
import type { Caller, ServiceDeps } from "./infrastructure/deps";
import type { EventSink, EventStream } from "./infrastructure/event-stream";
import { generatePublicToken } from "./infrastructure/public-token-secrets";

/** How often open streams read with public tokens check that their tokens are still live (revocation). */
export const PUBLIC_TOKEN_RECHECK_MS = 3_000;

/**
 * Refuses (404, like an unknown job) a caller whose public token belongs to another job than `jobId`: a public token
 * reads its own job only. Every endpoint of access `job_read` calls this before reading anything.
 */
export function assertReadable(caller: Caller, jobId: string): void {
  if (caller.publicToken && caller.publicToken.jobId !== jobId) throw notFound("Job");
}

export type JobOutput = { job_id: string; output: string; bytes: number };

/** The job's whole output (empty when it wrote none). */
export async function getJobOutput(options: { caller: Caller; id: string }, deps: Pick<ServiceDeps, "db">): Promise<JobOutput> {
  assertReadable(options.caller, options.id);
  const found = isUuid(options.id) ? await findJobOutput(deps.db.pool, options.caller.orgId, options.id) : null;
  if (!found) throw notFound("Job");
  return { job_id: options.id, output: found.output, bytes: found.bytes };
}

export type PublicToken = { id: string; job_id: string; token: string; expires_at: string; created_at: string };

/** A token that reads the job for `ttlSeconds`; only its hash is stored, so it is shown only here. */
export async function createPublicToken(
  options: { caller: Caller; id: string; ttlSeconds: number },
  deps: Pick<ServiceDeps, "db" | "clock">,
): Promise<PublicToken> {
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + options.ttlSeconds * 1000);
  const { token, hash } = generatePublicToken();
  const id = newId();
  const stored =
    isUuid(options.id) &&
    (await insertPublicToken(deps.db.pool, {
      id,
      orgId: options.caller.orgId,
      jobId: options.id,
      tokenHash: hash,
      createdBy: options.caller.userId,
      at: now,
      expiresAt,
    }));
  if (!stored) throw notFound("Job");
  return { id, job_id: options.id, token, expires_at: expiresAt.toISOString(), created_at: now.toISOString() };
}

/** Revokes one of the job's tokens at once (open streams read with it end within PUBLIC_TOKEN_RECHECK_MS). */
export async function deletePublicToken(options: { caller: Caller; jobId: string; tokenId: string }, deps: Pick<ServiceDeps, "db" | "clock">): Promise<void> {
  const revoked =
    isUuid(options.jobId) &&
    isUuid(options.tokenId) &&
    (await revokePublicToken(deps.db.pool, { orgId: options.caller.orgId, jobId: options.jobId, id: options.tokenId, at: deps.clock.now() }));
  if (!revoked) throw notFound("Public token");
}

type TokenWatch = { timer: NodeJS.Timeout; streams: Map<string, Set<() => void>> };
const watches = new WeakMap<object, TokenWatch>();

/**
 * Ends `end` when token `id` stops being live. Every stream of a process is checked by one query per
 * PUBLIC_TOKEN_RECHECK_MS (a thousand open pages are one query, not a thousand); the returned function stops watching.
 */
function watchToken(id: string, end: () => void, deps: Pick<ServiceDeps, "db" | "clock">): () => void {
  let watch = watches.get(deps.db.pool);
  if (!watch) {
    const streams = new Map<string, Set<() => void>>();
    const timer = setInterval(() => {
      livePublicTokens(deps.db.pool, [...streams.keys()], deps.clock.now()).then(
        (live) => {
          for (const [token, ends] of streams) if (!live.has(token)) for (const stop of [...ends]) stop();
        },
        () => undefined, // Postgres away: the next check decides.
      );
    }, PUBLIC_TOKEN_RECHECK_MS).unref();
    watches.set(deps.db.pool, (watch = { timer, streams }));
  }
  const { streams, timer } = watch;
  let ends = streams.get(id);
  if (!ends) streams.set(id, (ends = new Set()));
  ends.add(end);
  return () => {
    ends.delete(end);
    if (ends.size === 0) streams.delete(id);
    if (streams.size === 0 && watches.get(deps.db.pool) === watch) {
      clearInterval(timer);
      watches.delete(deps.db.pool);
    }
  };
}

/**
 * A stream read with a public token ends when the token expires or is revoked (the client's reconnection is then
 * refused with 401); any other caller's stream is returned as it is.
 */
export function boundToCredential(stream: EventStream, caller: Caller, deps: Pick<ServiceDeps, "db" | "clock">): EventStream {
  const grant = caller.publicToken;
  if (!grant) return stream;
  return {
    async run(sink: EventSink) {
      const end = () => sink.end();
      const expiry = setTimeout(end, Math.max(0, grant.expiresAt.getTime() - deps.clock.now().getTime())).unref();
      const unwatch = watchToken(grant.id, end, deps);
      try {
        await stream.run(sink);
      } finally {
        clearTimeout(expiry);
        unwatch();
      }
    },
  };
}
