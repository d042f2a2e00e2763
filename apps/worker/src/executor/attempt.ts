// One attempt of one job, from BullMQ delivery to recorded outcome. Handlers only do their job; this
// wrapper starts the attempt (taking the fence), logs it, has what happened classified (outcome.ts: done, retry,
// permanent failure, cancelled, released at shutdown) and records it under the fence.
import os from "node:os";
import {
  AttemptTimeoutError,
  PermanentJobError,
  TIMEOUT_MS_DEFAULT,
  type JobCancelledError,
  type JobContext,
  type JobResult,
  type JobStatus,
  type LogLevel,
} from "@conveyor/contracts";
import { dependencyArtifact, jobDependencies, pauseType, saveJobArtifact, type ClaimedJob } from "@conveyor/db";
import { redactText, type Logger } from "@conveyor/logger";
import type { Bookkeeper } from "./bookkeeper";
import type { CancelWatch } from "./cancellations";
import { startAttemptSpan } from "./attempt-span";
import { classifyFailure } from "./outcome";
import { liveRecorderFor, type LiveReporter } from "./live";
import { durableSteps, JobSuspendedError } from "./steps";

/** Runs a job's handler on its raw payload text; built-ins parse and validate it, plugins get the bytes. */
export type RunHandler = (payloadJson: string, ctx: JobContext) => Promise<JobResult>;

export type AttemptOutcome = "done" | "retry" | "failed" | "cancelled" | "released" | "discarded" | "skipped" | "suspended";

export type AttemptDeps = {
  bookkeeper: Bookkeeper;
  pool: import("pg").Pool;
  logger: Logger;
  retryBaseMs: number;
  /** Fires when the worker's shutdown grace period is over. */
  shutdownSignal: AbortSignal;
  /** Tells a running attempt that someone cancelled its job. */
  cancellations: CancelWatch;
  /** TYPE_TIMEOUTS: each attempt's timeout per type, unless the job sets timeout_ms (default 15 minutes). */
  typeTimeouts?: Map<string, number>;
  /** Called after every attempt, for metrics. */
  onAttempt?(event: { type: string; outcome: AttemptOutcome; durationMs: number }): void;
};

const MAX_MESSAGE_LENGTH = 8_000;
export const WORKER_NAME = `${os.hostname()}/${process.pid}`;

/** One line, bounded, without credentials: what goes into job logs and the job's error. */
function clean(message: string): string {
  const line = redactText(message)
    .replace(/[\r\n]+/g, " ")
    .trim();
  return line.length > MAX_MESSAGE_LENGTH ? `${line.slice(0, MAX_MESSAGE_LENGTH)}…` : line;
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === "string" ? error : JSON.stringify(error);
}

function serialiseResult(result: JobResult): string | null {
  if (result === undefined || result === null) return null;
  const value = typeof result === "object" && !Array.isArray(result) ? result : { value: result };
  return JSON.stringify(value);
}

/**
 * Runs one claimed job's attempt: `claimed` was started for the attempt holding `fence` (the envelope's delivery,
 * envelope-runner.ts). Resolves when the handler has returned and, for anything but success, its outcome has been
 * handed to the bookkeeper; `settled` resolves once the outcome is recorded (the envelope completes after that).
 */
export type AttemptRunner = (claimed: ClaimedJob, fence: string) => Promise<{ settled: Promise<unknown> }>;

export function createProcessor(type: string, run: RunHandler, deps: AttemptDeps): AttemptRunner {
  return async function runAttempt(claimed: ClaimedJob, fence: string): Promise<{ settled: Promise<unknown> }> {
    const started = Date.now();
    const report = (outcome: AttemptOutcome) => deps.onAttempt?.({ type, outcome, durationMs: Date.now() - started });
    const attempt = claimed.retries + 1;
    // The runtime's own lines are known to be clean; handler lines go through `clean` (ctx.log below).
    const log = (level: LogLevel, message: string) => deps.bookkeeper.log({ jobId: claimed.id, attempt, level, message, timestamp: new Date() });
    const finish = (outcome: Omit<Parameters<Bookkeeper["finish"]>[0], "id" | "fence">) => deps.bookkeeper.finish({ id: claimed.id, fence, ...outcome });
    /** Reports what the job's row says now (a retry of a job someone cancelled is recorded as cancelled). */
    const recorded = (status: JobStatus | null, otherwise: AttemptOutcome) =>
      report(status === null ? "discarded" : status === "cancelled" ? "cancelled" : otherwise);

    // The claim's job.started event is the attempt's "started" line (and, after a lost attempt, its "interrupted" one).

    // Made on first use: most handlers never look at their signal, and an AbortSignal per attempt is a measurable
    // cost at thousands of jobs per second. It is the attempt's own, so listeners a handler adds go away with it.
    let stopped: JobCancelledError | AttemptTimeoutError | undefined;
    let cancelled: JobCancelledError | undefined;
    let timedOut: AttemptTimeoutError | undefined;
    let abort: AbortController | undefined;
    let signal: AbortSignal | undefined;
    const stop = (reason: JobCancelledError | AttemptTimeoutError) => {
      stopped ??= reason;
      abort?.abort(reason);
    };
    const stopWatching = deps.cancellations.watch(claimed.id, (error) => {
      cancelled ??= error;
      stop(error);
    });
    // The live reporter and the durable steps are made on first use too: most handlers report no progress and take
    // no steps, and making both for every attempt was about a third of what an attempt allocated (docs/performance.md).
    let live: LiveReporter | undefined;
    const reporter = () => (live ??= liveRecorderFor(deps).attempt(claimed.id, fence, (message) => log("warn", message)));
    let steps: ReturnType<typeof durableSteps> | undefined;
    const stepper = () => (steps ??= durableSteps({ pool: deps.pool, job: claimed, fence, attempt, log, flush: async () => live?.flush() }));
    const ctx: JobContext = {
      dependencies: [],
      dependencyArtifact: (dependencyId) => dependencyArtifact(deps.pool, claimed.id, dependencyId),
      jobId: claimed.id,
      orgId: claimed.orgId,
      type,
      attempt,
      maxRetries: claimed.maxRetries,
      get signal() {
        if (!signal) {
          abort = new AbortController();
          if (stopped) abort.abort(stopped);
          signal = AbortSignal.any([deps.shutdownSignal, abort.signal]);
        }
        return signal;
      },
      log: (level, message) => log(level, clean(message)),
      progress: (fraction, message) => reporter().progress(fraction, message),
      output: (chunk) => reporter().output(chunk),
      async saveArtifact(artifact) {
        const saved = await saveJobArtifact(deps.pool, { jobId: claimed.id, fence, ...artifact });
        if (!saved) throw new PermanentJobError("this attempt no longer owns the job; its artifact was not stored");
        log("info", `Stored artifact ${artifact.filename} (${artifact.contentType}, ${artifact.data.length} bytes).`);
      },
      step: (name, fn) => stepper().step(name, fn),
      sleep: (name, ms) => stepper().sleep(name, ms),
      waitFor: (name, waitpoint) => stepper().waitFor(name, waitpoint),
    };

    // The timeout (docs/reference/flow-control.md#flow-control): the signal is aborted and the attempt's failure recorded at once; a handler that ignores
    // the signal keeps its slot until it returns, and whatever it returns then is discarded (the fence is gone).
    const timeoutMs = claimed.timeoutMs ?? deps.typeTimeouts?.get(type) ?? TIMEOUT_MS_DEFAULT;
    const span = startAttemptSpan(claimed, type, attempt);
    let recordedAtTimeout: Promise<void> | undefined;
    const timer = setTimeout(() => {
      timedOut = new AttemptTimeoutError(timeoutMs);
      stop(timedOut);
      recordedAtTimeout = handleFailure(timedOut);
    }, timeoutMs);

    let result: string | null;
    try {
      // Read before the handler runs: every dependency is final by now, so they no longer change (docs/reference/lifecycle.md#dependencies).
      if (claimed.dependencies > 0) ctx.dependencies = await jobDependencies(deps.pool, claimed.id);
      // Its last progress and output are written before its outcome (live.ts).
      const handled = () => run(claimed.payload, ctx).finally(() => live?.flush());
      result = serialiseResult(await (span ? span.run(handled) : handled()));
    } catch (error) {
      if (timedOut) return { settled: recordedAtTimeout! };
      // A sleep or a wait (docs/reference/lifecycle.md#waitpoints-and-durable-steps): the job is pending again already (steps.ts); nothing to record.
      if (error instanceof JobSuspendedError) {
        span?.end("suspended");
        report("suspended");
        return { settled: Promise.resolve() };
      }
      await handleFailure(error);
      return { settled: Promise.resolve() };
    } finally {
      clearTimeout(timer);
      stopWatching();
    }
    if (timedOut) {
      log("warn", `Attempt ${attempt}'s handler returned after its timeout; what it returned was discarded.`);
      return { settled: recordedAtTimeout! };
    }

    // A handler that finished despite a cancellation finished: the truth wins. Its "succeeded" line is the
    // job.succeeded event, written only if the outcome is applied. Recorded without holding the slot: the next job
    // starts while Postgres commits this outcome with the next batch; the envelope completes once it is recorded. A
    // worker that dies in between leaves the job 'processing' in Postgres and its envelope active in Redis, which
    // BullMQ's stalled check gives to another worker: its claim takes the attempt over (at least once).
    span?.end("done");
    const settled = finish({ status: "done", retries: claimed.retries, result, error: null, runAt: null }).then(
      (status) => (status ? report("done") : discarded()),
      (error: Error) => deps.logger.error("could not record a job's success; the reconciler will run it again", { jobId: claimed.id, error: error.message }),
    );
    return { settled };

    function discarded(): void {
      log("warn", `Attempt ${attempt}'s outcome was discarded: a newer attempt owns this job.`);
      report("discarded");
    }

    // Every outcome is Postgres' to act on: a retry or a released attempt goes back to the dispatcher's queue, so
    // BullMQ's job is done either way (it runs each hand-over once).
    async function handleFailure(error: unknown): Promise<void> {
      const message = clean(errorMessage(error));
      const outcome = classifyFailure({
        error,
        cancelled: cancelled !== undefined,
        shuttingDown: deps.shutdownSignal.aborted,
        attempt,
        maxRetries: claimed!.maxRetries,
        retryBaseMs: deps.retryBaseMs,
      });
      span?.end(outcome.kind, message);
      const retries = claimed!.retries;
      let status: JobStatus | null;
      switch (outcome.kind) {
        case "cancelled":
          log("warn", `Attempt ${attempt} stopped: ${cancelled!.message}.`);
          status = await finish({ status: "cancelled", retries, result: null, error: `${cancelled!.message}.`, runAt: null });
          break;
        case "released":
          log("warn", `Attempt ${attempt} was stopped by a worker shutdown; the job goes back to the queue.`);
          status = await finish({ status: "pending", retries, result: null, error: null, runAt: null });
          break;
        case "deferred": {
          const runAt = new Date(Date.now() + outcome.delayMs);
          // Every worker's starts of this type wait too: the deployment's key is what is limited.
          await pauseType(deps.pool, type, runAt).catch((e: Error) => deps.logger.warn(`could not pause ${type} after a provider's 429`, { error: e.message }));
          log("warn", `Attempt ${attempt} was rate limited by the provider: ${message}. Jobs of ${type} wait until ${runAt.toISOString()}; no retry is spent.`);
          status = await finish({ status: "pending", retries, result: null, error: message, runAt });
          break;
        }
        case "failed": {
          const why = outcome.reason === "permanent" ? "failed permanently" : `failed; no retries left (max_retries ${claimed!.maxRetries})`;
          log("error", `Attempt ${attempt} ${why}: ${message}`);
          status = await finish({ status: "failed", retries, result: null, error: message, runAt: null });
          break;
        }
        case "retry": {
          const runAt = new Date(Date.now() + outcome.delayMs);
          const inSeconds = (outcome.delayMs / 1000).toFixed(outcome.delayMs < 10_000 ? 1 : 0);
          log("warn", `Attempt ${attempt} failed: ${message}. Retry ${attempt} of ${claimed!.maxRetries} at ${runAt.toISOString()} (in ${inSeconds} s).`);
          status = await finish({ status: "pending", retries: attempt, result: null, error: message, runAt });
          break;
        }
      }
      if (status === null) return discarded();
      return recorded(status, outcome.kind === "deferred" ? "retry" : outcome.kind);
    }
  };
}

export type { ClaimedJob };
