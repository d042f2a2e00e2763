import { UnrecoverableError } from "bullmq";
import { AttemptTimeoutError, PermanentJobError, ProviderRateLimitedError, RetryableJobError, RETRY_DELAY_CAP_MS } from "@conveyor/contracts";
import { classifyFailure, type FailedAttempt, type FailureOutcome } from "../src/executor/outcome";

const base: FailedAttempt = {
  error: new Error("boom"),
  cancelled: false,
  shuttingDown: false,
  attempt: 1,
  maxRetries: 3,
  retryBaseMs: 1000,
  random: () => 0.5,
};

describe("classifyFailure", () => {
  const cases: [string, Partial<FailedAttempt>, FailureOutcome][] = [
    ["retries a plain error with retries left, after the backoff", {}, { kind: "retry", delayMs: 1000 }],
    ["doubles the backoff per attempt", { attempt: 3 }, { kind: "retry", delayMs: 4000 }],
    ["fails when no retries are left", { attempt: 4 }, { kind: "failed", reason: "exhausted" }],
    ["fails a job with max_retries 0 at once", { maxRetries: 0 }, { kind: "failed", reason: "exhausted" }],
    ["fails a PermanentJobError without consuming retries", { error: new PermanentJobError("bad input") }, { kind: "failed", reason: "permanent" }],
    ["fails BullMQ's UnrecoverableError permanently", { error: new UnrecoverableError("no") }, { kind: "failed", reason: "permanent" }],
    ["fails a plugin error marked permanent: true", { error: Object.assign(new Error("x"), { permanent: true }) }, { kind: "failed", reason: "permanent" }],
    ["cancels an attempt stopped by a cancellation", { cancelled: true }, { kind: "cancelled" }],
    ["cancels even on the last attempt", { cancelled: true, attempt: 4 }, { kind: "cancelled" }],
    ["releases an attempt stopped by a shutdown, without a retry", { shuttingDown: true, attempt: 4 }, { kind: "released" }],
    ["prefers the cancellation over the shutdown", { cancelled: true, shuttingDown: true }, { kind: "cancelled" }],
    ["lets a permanent error win over a cancellation", { cancelled: true, error: new PermanentJobError("bad") }, { kind: "failed", reason: "permanent" }],
    ["lets a permanent error win over a shutdown", { shuttingDown: true, error: new PermanentJobError("bad") }, { kind: "failed", reason: "permanent" }],
    ["waits as long as a provider's Retry-After asks when longer", { error: new RetryableJobError("429", 30_000) }, { kind: "retry", delayMs: 30_000 }],
    ["keeps the backoff when Retry-After is shorter", { attempt: 3, error: new RetryableJobError("429", 10) }, { kind: "retry", delayMs: 4000 }],
    ["caps any wait at one hour", { error: new RetryableJobError("429", 10 * RETRY_DELAY_CAP_MS) }, { kind: "retry", delayMs: RETRY_DELAY_CAP_MS }],
    ["ignores a Retry-After that is not a positive number", { error: Object.assign(new Error("x"), { retryAfterMs: -5 }) }, { kind: "retry", delayMs: 1000 }],
    ["treats a thrown non-Error like any failure", { error: "a string" }, { kind: "retry", delayMs: 1000 }],
    ["retries a timed-out attempt like any failure", { error: new AttemptTimeoutError(30_000) }, { kind: "retry", delayMs: 1000 }],
    ["fails a timed-out last attempt like any failure", { error: new AttemptTimeoutError(30_000), attempt: 4 }, { kind: "failed", reason: "exhausted" }],
    ["defers a provider's rate limit for its Retry-After", { error: new ProviderRateLimitedError("429", 20_000) }, { kind: "deferred", delayMs: 20_000 }],
    [
      "defers a provider's rate limit even on the last attempt",
      { error: new ProviderRateLimitedError("429", 5), attempt: 4 },
      { kind: "deferred", delayMs: 5 },
    ],
    [
      "caps a provider's wait at one hour",
      { error: new ProviderRateLimitedError("429", 2 * RETRY_DELAY_CAP_MS) },
      { kind: "deferred", delayMs: RETRY_DELAY_CAP_MS },
    ],
    ["releases a rate-limited attempt stopped by a shutdown", { error: new ProviderRateLimitedError("429", 5), shuttingDown: true }, { kind: "released" }],
  ];

  it.each(cases)("%s", (_name, given, expected) => {
    expect(classifyFailure({ ...base, ...given })).toEqual(expected);
  });
});
