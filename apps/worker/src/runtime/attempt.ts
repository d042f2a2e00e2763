// One attempt of one job, from BullMQ delivery to recorded outcome. Handlers only do their job; this
// wrapper claims the job (taking the fence), logs the attempt, classifies what happened (done, retry,
// permanent failure, released at shutdown) and records it under the fence.
import os from "node:os";
import { UnrecoverableError, WaitingError, type Job } from "bullmq";
import { PermanentJobError, RETRY_DELAY_CAP_MS, retryDelayMs, type JobContext, type JobResult, type LogLevel } from "@conveyor/contracts";
import { saveJobArtifact, type ClaimedJob } from "@conveyor/db";
import { redactText, type Logger } from "@conveyor/logger";
import type { Bookkeeper } from "./bookkeeper";

/** Runs a job's handler on its raw payload text; built-ins parse and validate it, plugins get the bytes. */
export type RunHandler = (payloadJson: string, ctx: JobContext) => Promise<JobResult>;

export type AttemptOutcome = "done" | "retry" | "failed" | "released" | "discarded" | "skipped";

export type AttemptDeps = {
  bookkeeper: Bookkeeper;
  pool: import("pg").Pool;
  logger: Logger;
  retryBaseMs: number;
  /** Fires when the worker's shutdown grace period is over. */
  shutdownSignal: AbortSignal;
  /** Interruptions (lost attempts) tolerated before a job is failed as a probable crash. */
  maxInterruptions: number;
  /** Called after every attempt, for metrics. */
  onAttempt?(event: { type: string; outcome: AttemptOutcome; durationMs: number }): void;
};

/** Thrown to BullMQ for a retry: the backoff strategy reads the delay we computed. */
export class RetryLater extends Error {
  override name = "RetryLater";
  constructor(
    message: string,
    readonly retryDelayMs: number,
  ) {
    super(message);
  }
}

const MAX_MESSAGE_LENGTH = 8_000;
/** Interruptions tolerated before a job that keeps losing its worker is failed. */
export const MAX_INTERRUPTIONS = 2;
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

/** Permanent: our PermanentJobError (and MissingSettingError), BullMQ's UnrecoverableError, or a plugin's `permanent: true`. */
function isPermanent(error: unknown): boolean {
  return error instanceof PermanentJobError || error instanceof UnrecoverableError || (error as { permanent?: unknown })?.permanent === true;
}

function requestedDelay(error: unknown): number | undefined {
  const value = (error as { retryAfterMs?: unknown })?.retryAfterMs;
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

function serialiseResult(result: JobResult): string | null {
  if (result === undefined || result === null) return null;
  const value = typeof result === "object" && !Array.isArray(result) ? result : { value: result };
  return JSON.stringify(value);
}

export function createProcessor(type: string, run: RunHandler, deps: AttemptDeps) {
  // Two parameters: BullMQ then skips creating an AbortController per job (we never cancel through BullMQ;
  // shutdown aborts through our own signal).
  return async function processJob(job: Job, token?: string): Promise<void> {
    const started = Date.now();
    const fence = token ?? `${WORKER_NAME}/${job.id}/${started}`;
    const report = (outcome: AttemptOutcome) => deps.onAttempt?.({ type, outcome, durationMs: Date.now() - started });

    const claimed = await deps.bookkeeper.claim(job.id!, fence);
    if (!claimed) {
      deps.logger.debug("skipping a delivery of a job that is finished or unknown in Postgres", { jobId: job.id });
      return report("skipped");
    }
    const attempt = claimed.retries + 1;
    // The runtime's own lines are known to be clean; handler lines go through `clean` (ctx.log below).
    const log = (level: LogLevel, message: string) => deps.bookkeeper.log({ jobId: claimed.id, attempt, level, message, timestamp: new Date() });
    const finish = (outcome: Omit<Parameters<Bookkeeper["finish"]>[0], "id" | "fence">) => deps.bookkeeper.finish({ id: claimed.id, fence, ...outcome });

    // The claim itself logged "interrupted" (if it took over) and "started" (unless this is one time too many).
    if (claimed.interruptions > deps.maxInterruptions) {
      const reason = `Attempt ${attempt} was interrupted ${claimed.interruptions} times; giving up, as the job probably crashes its worker.`;
      log("error", reason);
      await finish({ status: "failed", retries: claimed.retries, result: null, error: reason, runAt: null });
      report("failed");
      throw new UnrecoverableError(reason);
    }

    let signal: AbortSignal | undefined;
    const ctx: JobContext = {
      jobId: claimed.id,
      orgId: claimed.orgId,
      type,
      attempt,
      maxRetries: claimed.maxRetries,
      // Fires when the shutdown grace period is over. Made on first use: most handlers never look, and an
      // AbortSignal per attempt is a measurable cost at thousands of jobs per second. It is the attempt's own
      // (not the shared shutdown signal) so listeners a handler adds go away with the attempt.
      get signal() {
        return (signal ??= AbortSignal.any([deps.shutdownSignal]));
      },
      log: (level, message) => log(level, clean(message)),
      async saveArtifact(artifact) {
        const saved = await saveJobArtifact(deps.pool, { jobId: claimed.id, fence, ...artifact });
        if (!saved) throw new PermanentJobError("this attempt no longer owns the job; its artifact was not stored");
        log("info", `Stored artifact ${artifact.filename} (${artifact.contentType}, ${artifact.data.length} bytes).`);
      },
    };

    let result: string | null;
    try {
      result = serialiseResult(await run(claimed.payload, ctx));
    } catch (error) {
      return handleFailure(error);
    }

    const succeeded = { attempt, level: "info" as const, message: `Attempt ${attempt} succeeded in ${Date.now() - started} ms.`, timestamp: new Date() };
    // Recorded without holding the slot: BullMQ completes the job and hands over the next one while Postgres
    // commits this outcome with the next batch. A worker that dies in between leaves the job 'processing' in
    // Postgres and absent from Redis, which the reconciler re-enqueues: the same at-least-once recovery as
    // dying just before the write. (Failures and retries do wait: their next delivery must find them recorded.)
    void finish({ status: "done", retries: claimed.retries, result, error: null, runAt: null, appliedLine: succeeded }).then(
      (applied) => (applied ? report("done") : discarded()),
      (error: Error) => deps.logger.error("could not record a job's success; the reconciler will run it again", { jobId: claimed.id, error: error.message }),
    );

    async function discarded(): Promise<void> {
      log("warn", `Attempt ${attempt}'s outcome was discarded: a newer attempt owns this job.`);
      report("discarded");
    }

    async function handleFailure(error: unknown): Promise<void> {
      const message = clean(errorMessage(error));

      if (deps.shutdownSignal.aborted && !isPermanent(error)) {
        // Not the job's fault: give it back without consuming a retry.
        log("warn", `Attempt ${attempt} was stopped by a worker shutdown; the job goes back to the queue.`);
        if (!(await finish({ status: "pending", retries: claimed!.retries, result: null, error: null, runAt: null }))) return discarded();
        report("released");
        // If this fails the job stays active in Redis and is recovered as stalled once its lock expires.
        await job
          .moveToWait(token)
          .catch((moveError: Error) => deps.logger.warn("could not hand a job back to its queue", { jobId: job.id, error: moveError.message }));
        throw new WaitingError();
      }

      if (isPermanent(error) || attempt > claimed!.maxRetries) {
        const why = isPermanent(error) ? "failed permanently" : `failed; no retries left (max_retries ${claimed!.maxRetries})`;
        log("error", `Attempt ${attempt} ${why}: ${message}`);
        if (!(await finish({ status: "failed", retries: claimed!.retries, result: null, error: message, runAt: null }))) return discarded();
        report("failed");
        throw new UnrecoverableError(message);
      }

      const delay = Math.min(RETRY_DELAY_CAP_MS, Math.max(retryDelayMs(attempt, deps.retryBaseMs), requestedDelay(error) ?? 0));
      const runAt = new Date(Date.now() + delay);
      log(
        "warn",
        `Attempt ${attempt} failed: ${message}. Retry ${attempt} of ${claimed!.maxRetries} at ${runAt.toISOString()} (in ${(delay / 1000).toFixed(delay < 10_000 ? 1 : 0)} s).`,
      );
      if (!(await finish({ status: "pending", retries: attempt, result: null, error: message, runAt }))) return discarded();
      report("retry");
      throw new RetryLater(message, delay);
    }
  };
}

/** The BullMQ backoff strategy: the delay the attempt computed (exponential, jittered, Retry-After aware). */
export function backoffStrategy(_attemptsMade: number, _type?: string, error?: Error): number {
  return error instanceof RetryLater ? error.retryDelayMs : 1_000;
}

export type { ClaimedJob };
