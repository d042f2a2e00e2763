// What a failed attempt means for its job: one of a few named outcomes, decided by a pure function (no I/O, no
// clock), so the rules have a table of tests of their own (test/outcome.test.ts) and the attempt runner only acts.
import { UnrecoverableError } from "bullmq";
import { PermanentJobError, ProviderRateLimitedError, RETRY_DELAY_CAP_MS, retryDelayMs } from "@conveyor/contracts";

/**
 * - `cancelled`: someone cancelled the job and the attempt stopped for it.
 * - `released`: the worker is shutting down past its grace period: not the job's fault, no retry consumed.
 * - `failed`: permanently (a retry cannot help) or with no retries left.
 * - `deferred`: a provider rate-limited the deployment's key and asked for `delayMs`: back to pending without
 *   spending a retry, and the type pauses that long everywhere.
 * - `retry`: back to pending, due after `delayMs` (a timed-out attempt is a failure like any other).
 */
export type FailureOutcome =
  | { kind: "cancelled" }
  | { kind: "released" }
  | { kind: "deferred"; delayMs: number }
  | { kind: "failed"; reason: "permanent" | "exhausted" }
  | { kind: "retry"; delayMs: number };

export type FailedAttempt = {
  /** What the handler threw. */
  error: unknown;
  /** The job was cancelled while the attempt ran. */
  cancelled: boolean;
  /** The worker's shutdown grace period is over. */
  shuttingDown: boolean;
  /** 1-based attempt number. */
  attempt: number;
  maxRetries: number;
  retryBaseMs: number;
  /** For the jitter of the retry delay. */
  random?: () => number;
};

/** Permanent: our PermanentJobError (and MissingSettingError), BullMQ's UnrecoverableError, or a plugin's `permanent: true`. */
export function isPermanent(error: unknown): boolean {
  return error instanceof PermanentJobError || error instanceof UnrecoverableError || (error as { permanent?: unknown })?.permanent === true;
}

/** A longer wait the error asks for (a provider's Retry-After), if any. */
export function requestedDelayMs(error: unknown): number | undefined {
  const value = (error as { retryAfterMs?: unknown })?.retryAfterMs;
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

/**
 * Classifies a failed attempt. A permanent error wins over everything (the job is broken, whatever else happened);
 * then a cancellation, then a shutdown, then a provider's rate limit (no retry spent, even on the last attempt);
 * otherwise the job retries while it has retries left, after the backoff or the wait the error asked for (whichever
 * is longer), capped at an hour.
 */
export function classifyFailure(failed: FailedAttempt): FailureOutcome {
  const permanent = isPermanent(failed.error);
  if (!permanent && failed.cancelled) return { kind: "cancelled" };
  if (!permanent && failed.shuttingDown) return { kind: "released" };
  if (permanent) return { kind: "failed", reason: "permanent" };
  if (failed.error instanceof ProviderRateLimitedError) return { kind: "deferred", delayMs: Math.min(RETRY_DELAY_CAP_MS, failed.error.retryAfterMs) };
  if (failed.attempt > failed.maxRetries) return { kind: "failed", reason: "exhausted" };
  const backoff = retryDelayMs(failed.attempt, failed.retryBaseMs, failed.random);
  return { kind: "retry", delayMs: Math.min(RETRY_DELAY_CAP_MS, Math.max(backoff, requestedDelayMs(failed.error) ?? 0)) };
}
