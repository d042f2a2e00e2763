// What a job handler sees. Handlers are plain async functions; the worker runtime owns BullMQ, Postgres,
// retries and the fence, so a handler only does its job and says how it went.
import { ATTEMPT_TIMEOUT_CODE } from "./flow-control";
import type { LogLevel } from "./limits";

export type JobContext = {
  jobId: string;
  orgId: string;
  type: string;
  /** 1-based attempt number: attempt n runs with retries = n − 1. */
  attempt: number;
  maxRetries: number;
  /**
   * Fires when someone cancels the job (its reason is a JobCancelledError), or when the worker shuts down past its
   * grace period (the job will run again elsewhere). Stop promptly either way.
   */
  signal: AbortSignal;
  /** Adds a line to the job's logs (GET /jobs/{id}/logs). Never log secrets or payload bodies. */
  log(level: LogLevel, message: string): void;
  /**
   * Reports how far the job is (docs/reference/events.md#progress-and-live-results): `fraction` from 0 to 1 and an optional message. Cheap to call often: the
   * worker keeps the latest report and records it at most 4 times a second (the last one always lands). A fraction
   * outside 0–1 or not a number is ignored with a warning, never failing the job.
   */
  progress(fraction: number, message?: string): void;
  /**
   * Appends text to the job's output (GET /jobs/{id}/output, `job.output` events): tokens of a model, lines of an
   * import. Chunks are joined and written at most 4 times a second; the output keeps 1 MiB and is then cut with a marker.
   */
  output(chunk: string): void;
  /** Stores the file this job produced; served by GET /jobs/{id}/artifact. */
  saveArtifact(artifact: { contentType: string; filename: string; data: Buffer }): Promise<void>;
  /**
   * The jobs this one depends on (docs/reference/lifecycle.md#dependencies), each final by now: done, or failed/cancelled when the job was created
   * with on_dependency_failure "run". Empty for a job without dependencies.
   */
  dependencies: JobDependency[];
  /** The file a dependency produced (its artifact), or null when it has none or is not a dependency of this job. */
  dependencyArtifact(jobId: string): Promise<{ contentType: string; filename: string; data: Buffer } | null>;
  /**
   * A durable step (docs/reference/lifecycle.md#waitpoints-and-durable-steps): `fn` runs at most once to success per job across all its attempts. Its result (JSON,
   * ≤ 256 KiB) is stored when it succeeds; a later attempt gets the stored result without running `fn`. A step that
   * throws is retried with the job. Names are unique per job (steps, sleeps and waits together): a repeat is a
   * permanent failure naming it.
   */
  step<T>(name: string, fn: () => Promise<T> | T): Promise<T>;
  /**
   * Ends the attempt without spending a retry and frees the worker's slot; the job is started again `ms` later and
   * replays its completed steps, and this call then returns. Do not catch what it throws (JobSuspendedError).
   */
  sleep(name: string, ms: number): Promise<void>;
  /**
   * Waits for a waitpoint — one of the organization's, by id, or a new one expiring after `timeout_seconds` (it shows
   * in GET /waitpoints with this job's id) — ending the attempt as ctx.sleep does until the waitpoint ends, and
   * returns the data it was completed with. A waitpoint that expired or was cancelled throws WaitpointFailedError.
   */
  waitFor(name: string, waitpoint: string | { timeout_seconds: number }): Promise<unknown>;
};

/** What ctx.sleep and ctx.waitFor throw to end the attempt: the job is suspended, not failed (let it through). */
export class JobSuspendedError extends Error {
  override name = "JobSuspendedError";
}

/** What ctx.waitFor throws when its waitpoint expired or was cancelled instead of being completed (not retried). */
export class WaitpointFailedError extends Error {
  override name = "WaitpointFailedError";
  /** A retry would find the same waitpoint ended the same way: the job fails unless the handler catches this. */
  readonly permanent = true;
  constructor(
    readonly waitpointId: string,
    readonly status: string,
  ) {
    super(`waitpoint ${waitpointId} ${status === "expired" ? "expired" : "was cancelled"} before it was completed`);
  }
}

/** A job's dependency as its handler sees it. */
export type JobDependency = { id: string; type: string; status: string; result: Record<string, unknown> | null };

/** A handler's result is stored as the job's `result` (a JSON object) when it returns. */
export type JobResult = Record<string, unknown> | undefined | void;

export type JobHandler<P> = (payload: P, ctx: JobContext) => Promise<JobResult>;

/**
 * Thrown when running the job again cannot help: invalid input found at run time, a provider's
 * non-retryable 4xx, a missing setting. The job fails at once without consuming retries.
 */
export class PermanentJobError extends Error {
  override name = "PermanentJobError";
}

/** Thrown for a failure worth retrying; `retryAfterMs` asks for a longer wait than the backoff gives. */
export class RetryableJobError extends Error {
  override name = "RetryableJobError";
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/**
 * A provider behind a built-in type answered 429 and said how long to wait (Retry-After): the deployment's key for
 * that provider is rate limited. The runtime pauses the type's starts everywhere for that long (docs/reference/flow-control.md#flow-control) and the job
 * waits without spending a retry. A user's own endpoint (the `webhook` type) answering 429 is an ordinary retry.
 */
export class ProviderRateLimitedError extends RetryableJobError {
  override name = "ProviderRateLimitedError";
  constructor(
    message: string,
    override readonly retryAfterMs: number,
  ) {
    super(message, retryAfterMs);
  }
}

/** The reason of `ctx.signal` when an attempt ran longer than its timeout (docs/reference/flow-control.md#flow-control). */
export class AttemptTimeoutError extends Error {
  override name = "AttemptTimeoutError";
  constructor(readonly timeoutMs: number) {
    super(`${ATTEMPT_TIMEOUT_CODE}: the attempt ran longer than its timeout of ${timeoutMs} ms`);
  }
}

/** The reason of `ctx.signal` when the job was cancelled (POST /jobs/{id}/cancel). */
export class JobCancelledError extends Error {
  override name = "JobCancelledError";
  constructor(readonly cancelledBy: string) {
    super(`The job was cancelled by ${cancelledBy}`);
  }
}

/** Context given to an operator plugin: the same as a built-in handler's. */
export type PluginContext = JobContext;

/**
 * An operator plugin module (listed in WORKER_PLUGINS) exports this shape, as default or as named exports.
 * `handle` receives the payload's raw JSON bytes and returns (optionally a result object) or throws.
 */
export type JobPlugin = {
  type: string;
  handle(payload: Buffer, ctx: PluginContext): Promise<JobResult> | JobResult;
};
