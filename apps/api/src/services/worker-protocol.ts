// The worker protocol (docs/reference/lifecycle.md#your-own-workers): an organization's own workers, in any language, lease its jobs over HTTP and report
// on them. Every call after the lease names its lease token, the attempt's fence: a lapsed or superseded token answers
// 409 lease_lost and changes nothing. Each report is a transition of the job machine under that fence — outcomes
// (writeOutcomes), progress and output (recordProgress, appendOutput), steps (recordStep, finishStep), sleeps and waits
// (suspendForSleep, suspendForWait) — exactly as the built-in workers' attempt wrapper makes them.
import { createHash, randomBytes } from "node:crypto";
import {
  RETRY_DELAY_CAP_MS,
  SLEEP_MAX_MS,
  STEP_RESULT_MAX_BYTES,
  WAITPOINT_TIMEOUT_MAX_SECONDS,
  WAITPOINT_TIMEOUT_MIN_SECONDS,
  retryDelayMs,
  type JobStatus,
  type LogLevel,
} from "@conveyor/contracts";
import {
  appendOutput,
  dropLeases,
  finishStep,
  isUuid,
  jobDependencies,
  leasableOrgTypes,
  liveLease,
  newId,
  readSteps,
  recordProgress,
  recordStep,
  storedOutputBytes,
  suspendForSleep,
  suspendForWait,
  touchProtocolWorker,
  forgetProtocolWorker,
  writeOutcomes,
  type LeasedJob,
  type LiveLease,
  type LogRow,
} from "@conveyor/db";
import { redactText } from "@conveyor/logger";
import { AppError, notFound, validationFailed } from "./infrastructure/errors";
import type { Caller, ServiceDeps } from "./infrastructure/deps";
import type { LeaseHub } from "./infrastructure/worker-leases";
import type { Report } from "./infrastructure/worker-outcomes";

/** A lease's length unless the worker asks for another. */
export const LEASE_MS_DEFAULT = 30_000;
/** A worker's row is refreshed at most this often by its lease calls. */
const TOUCH_EVERY_MS = 2_000;

export type WorkerDeps = Pick<ServiceDeps, "db" | "config"> & { leases: LeaseHub };

export type LeaseInput = {
  types: string[];
  max: number;
  wait_seconds: number;
  lease_seconds?: number;
  worker_id?: string;
  worker_name?: string;
  worker_version?: string;
  concurrency?: number;
};

export type LeasedJobJson = {
  id: string;
  type: string;
  payload: unknown;
  attempt: number;
  max_retries: number;
  lease_token: string;
  lease_expires_at: string;
  steps: { name: string; kind: string; status: string; result?: unknown; waitpoint_id: string | null }[];
  dependencies: { id: string; type: string; status: string; result: unknown }[];
};

const lastTouched = new Map<string, number>();
/** An organization's own types, as lease calls check them: cached briefly (a new type is leasable within this). */
const OWN_TYPES_TTL_MS = 2_000;
const ownTypes = new Map<string, { types: Set<string>; until: number }>();

async function ownTypesOf(orgId: string, wanted: string[], deps: WorkerDeps): Promise<Set<string>> {
  const cached = ownTypes.get(orgId);
  if (cached && cached.until > Date.now() && wanted.every((t) => cached.types.has(t))) return cached.types;
  const types = new Set(await leasableOrgTypes(deps.db.pool, orgId, wanted));
  if (ownTypes.size > 10_000) ownTypes.clear();
  ownTypes.set(orgId, { types: new Set([...(cached?.types ?? []), ...types]), until: Date.now() + OWN_TYPES_TTL_MS });
  return types;
}

/** POST /worker/lease: the jobs leased to this worker (possibly none, after waiting up to wait_seconds). */
export async function leaseForWorker(options: { caller: Caller; input: LeaseInput; signal: AbortSignal }, deps: WorkerDeps): Promise<LeasedJobJson[]> {
  const { caller, input } = options;
  const types = [...new Set(input.types)];
  const own = await ownTypesOf(caller.orgId, types, deps);
  const foreign = types.filter((t) => !own.has(t));
  if (foreign.length) {
    throw validationFailed(foreign.map((t) => ({ path: "types", message: `"${t}" is not a job type of your organization (POST /job-types registers one)` })));
  }
  const leaseMs = (input.lease_seconds ?? LEASE_MS_DEFAULT / 1000) * 1000;
  const workerId = input.worker_id?.toLowerCase() ?? caller.apiKeyId!;
  // A call on its way while the worker stopped: it leases nothing, and does not list the worker again.
  if (deps.leases.hasStopped(caller.orgId, workerId)) return [];
  const touched = lastTouched.get(workerId);
  if (touched === undefined || Date.now() - touched > TOUCH_EVERY_MS) {
    lastTouched.set(workerId, Date.now());
    if (lastTouched.size > 100_000) lastTouched.clear();
    await touchProtocolWorker(deps.db.pool, {
      id: workerId,
      orgId: caller.orgId,
      apiKeyId: caller.apiKeyId!,
      name: input.worker_name ?? "worker",
      version: input.worker_version ?? "unknown",
      types,
      concurrency: input.concurrency ?? input.max,
      // Its lease calls are its heartbeats: at most wait_seconds apart, plus one lease of work.
      heartbeatMs: Math.max(TOUCH_EVERY_MS, input.wait_seconds * 1000 + leaseMs),
    });
  }
  const jobs = await deps.leases.lease({ orgId: caller.orgId, types, max: input.max, workerId, leaseMs }, input.wait_seconds * 1000, options.signal);
  return describe(jobs, deps);
}

/**
 * POST /worker/stop: a worker stopping says so — when it stops leasing, and again once it has handed back what it
 * ran. Its waiting long-poll on this process answers [] at once, its lease calls for a minute lease nothing, and it
 * leaves GET /workers and the types it served at once instead of after three missed lease calls. Unknown ids are not
 * an error: a worker that never leased, or was reaped, has nothing to remove.
 */
export async function stopWorker(options: { caller: Caller; workerId: string | undefined }, deps: WorkerDeps): Promise<void> {
  const workerId = options.workerId?.toLowerCase() ?? options.caller.apiKeyId!;
  deps.leases.workerStopped(options.caller.orgId, workerId);
  lastTouched.delete(workerId);
  await forgetProtocolWorker(deps.db.pool, options.caller.orgId, workerId);
}

async function describe(jobs: LeasedJob[], deps: WorkerDeps): Promise<LeasedJobJson[]> {
  return Promise.all(
    jobs.map(async (job) => ({
      id: job.id,
      type: job.type,
      payload: JSON.parse(job.payload) as unknown,
      attempt: job.retries + 1,
      max_retries: job.maxRetries,
      lease_token: job.leaseToken,
      lease_expires_at: job.leaseExpiresAt.toISOString(),
      steps: job.steps.map((s) => ({ name: s.name, kind: s.kind, status: s.status, result: s.result ?? null, waitpoint_id: s.waitpoint_id })),
      dependencies: job.dependencies > 0 ? await jobDependencies(deps.db.pool, job.id) : [],
    })),
  );
}

const lost = () =>
  new AppError(
    "lease_lost",
    "This lease token is not the job's live lease (it lapsed, a newer lease took the job over, or the attempt has ended); stop working on it.",
  );

/** The live lease named by a call, or 409 (404 for a job id that is malformed). */
async function leaseOf(caller: Caller, jobId: string, token: string, deps: WorkerDeps, extendMs?: number): Promise<LiveLease> {
  if (!isUuid(jobId)) throw notFound("Job");
  const lease = await liveLease(deps.db.pool, { orgId: caller.orgId, jobId, token, extendMs });
  if (!lease) throw lost();
  return lease;
}

const logRow = (lease: LiveLease, level: LogLevel, message: string): LogRow => ({
  jobId: lease.jobId,
  attempt: lease.retries + 1,
  level,
  message: redactText(message).slice(0, 8_000),
  timestamp: new Date(),
});

export type HeartbeatInput = {
  lease_token: string;
  lease_seconds?: number;
  progress?: { fraction: number; message?: string | null };
  output?: string;
  logs?: { level: LogLevel; message: string }[];
};

/** POST /worker/jobs/{id}/heartbeat: extends the lease; records progress, output and log lines sent with it. */
export async function heartbeat(
  options: { caller: Caller; id: string; input: HeartbeatInput },
  deps: WorkerDeps,
): Promise<{ lease_expires_at: string; cancel_requested: boolean }> {
  const { caller, id, input } = options;
  const lease = await leaseOf(caller, id, input.lease_token, deps, (input.lease_seconds ?? LEASE_MS_DEFAULT / 1000) * 1000);
  const fence = input.lease_token;
  if (input.progress) {
    await recordProgress(deps.db.pool, [
      { jobId: id, fence, progress: { fraction: input.progress.fraction, message: input.progress.message ?? null, at: new Date().toISOString() } },
    ]);
  }
  if (input.output) {
    const offset = (await storedOutputBytes(deps.db.pool, [id])).get(id) ?? 0;
    await appendOutput(deps.db.pool, [{ jobId: id, fence, offset, chunk: input.output }]);
  }
  if (input.logs?.length) {
    await writeOutcomes(
      deps.db.pool,
      input.logs.map((l) => logRow(lease, l.level, l.message)),
      [],
    );
  }
  return { lease_expires_at: lease.expiresAt.toISOString(), cancel_requested: lease.cancelRequested };
}

/** An outcome report under the caller's lease, checked and written with the others arriving with it (OutcomeWriter). */
async function report(caller: Caller, id: string, token: string, build: Report["build"], deps: WorkerDeps): Promise<{ status: JobStatus }> {
  if (!isUuid(id)) throw notFound("Job");
  const status = await deps.leases.outcomes.write({ orgId: caller.orgId, jobId: id, token, build });
  if (status === undefined) throw lost();
  return { status };
}

/** The "done" outcome of a complete report. */
const completeOutcome =
  (id: string, input: { lease_token: string; result?: unknown }): Report["build"] =>
  (lease) => ({
    logs: [],
    outcome: { id, fence: input.lease_token, status: "done", retries: lease.retries, result: JSON.stringify(input.result ?? null), error: null, runAt: null },
  });

/** POST /worker/jobs/{id}/complete: the attempt succeeded with `result`. */
export async function completeJob(
  options: { caller: Caller; id: string; input: { lease_token: string; result?: unknown } },
  deps: WorkerDeps,
): Promise<{ status: JobStatus }> {
  const { caller, id, input } = options;
  return report(caller, id, input.lease_token, completeOutcome(id, input), deps);
}

export type FailInput = { lease_token: string; error: string; retryable?: boolean; retry_after_ms?: number };

/**
 * The outcome of a fail report. As the built-in workers classify a failure: a job someone asked to cancel ends
 * cancelled; `retryable: false` fails it at once without spending retries; otherwise it retries after the backoff (or
 * `retry_after_ms`, if longer, capped at an hour) while it has retries left.
 */
const failOutcome =
  (id: string, input: FailInput, deps: WorkerDeps): Report["build"] =>
  (lease) => {
    const message = redactText(input.error).slice(0, 8_000) || "The worker reported a failure without a message.";
    const attempt = lease.retries + 1;
    const base = { id, fence: input.lease_token, retries: lease.retries, result: null, error: message, runAt: null };
    if (lease.cancelRequested) {
      return { outcome: { ...base, status: "cancelled" }, logs: [logRow(lease, "warn", `Attempt ${attempt} stopped for a cancellation: ${message}`)] };
    }
    if (input.retryable === false || attempt > lease.maxRetries) {
      const why = input.retryable === false ? "failed permanently" : `failed; no retries left (max_retries ${lease.maxRetries})`;
      return { outcome: { ...base, status: "failed" }, logs: [logRow(lease, "error", `Attempt ${attempt} ${why}: ${message}`)] };
    }
    const delay = Math.min(RETRY_DELAY_CAP_MS, Math.max(retryDelayMs(attempt, deps.config.RETRY_BASE_MS), input.retry_after_ms ?? 0));
    const runAt = new Date(Date.now() + delay);
    return {
      outcome: { ...base, status: "pending", retries: attempt, runAt },
      logs: [logRow(lease, "warn", `Attempt ${attempt} failed: ${message}. Retry ${attempt} of ${lease.maxRetries} at ${runAt.toISOString()}.`)],
    };
  };

/** POST /worker/jobs/{id}/fail: the attempt failed (see failOutcome). */
export async function failJob(options: { caller: Caller; id: string; input: FailInput }, deps: WorkerDeps): Promise<{ status: JobStatus }> {
  const { caller, id, input } = options;
  return report(caller, id, input.lease_token, failOutcome(id, input, deps), deps);
}

/**
 * POST /worker/jobs/{id}/release: hands a leased job back unstarted or unfinished (the worker is shutting down): back to
 * pending at once, no retry spent — the "released" transition a built-in worker makes on SIGTERM.
 */
export async function releaseJob(options: { caller: Caller; id: string; input: { lease_token: string } }, deps: WorkerDeps): Promise<{ status: JobStatus }> {
  const { caller, id, input } = options;
  return report(caller, id, input.lease_token, releaseOutcome(id, input), deps);
}

const releaseOutcome =
  (id: string, input: { lease_token: string }): Report["build"] =>
  (lease) => ({
    logs: [logRow(lease, "warn", `Attempt ${lease.retries + 1} was handed back by its worker (shutting down); the job goes back to the queue.`)],
    outcome: { id, fence: input.lease_token, status: "pending", retries: lease.retries, result: null, error: null, runAt: null },
  });

export type OutcomeInput = {
  job_id: string;
  lease_token: string;
  outcome: "complete" | "fail" | "release";
  result?: unknown;
  error?: string;
  retryable?: boolean;
  retry_after_ms?: number;
};
export type OutcomeResultJson = { job_id: string; status: JobStatus | null; lease_lost: boolean };

/**
 * POST /worker/outcomes: several reports in one call (a worker sends what finished since its last call), each as its
 * own endpoint would make it, all joining the same group commit. Each answers on its own: a lapsed lease is that
 * report's `lease_lost`, not the call's 409.
 */
export async function reportOutcomes(
  options: { caller: Caller; input: { outcomes: OutcomeInput[] } },
  deps: WorkerDeps,
): Promise<{ results: OutcomeResultJson[] }> {
  const { caller, input } = options;
  const results = await Promise.all(
    input.outcomes.map(async (item): Promise<OutcomeResultJson> => {
      const id = item.job_id.toLowerCase();
      const build =
        item.outcome === "complete"
          ? completeOutcome(id, item)
          : item.outcome === "fail"
            ? failOutcome(id, { lease_token: item.lease_token, error: item.error ?? "", retryable: item.retryable, retry_after_ms: item.retry_after_ms }, deps)
            : releaseOutcome(id, item);
      const status = await deps.leases.outcomes.write({ orgId: caller.orgId, jobId: id, token: item.lease_token, build });
      return { job_id: id, status: status ?? null, lease_lost: status === undefined };
    }),
  );
  return { results };
}

/** POST /worker/jobs/{id}/steps/{name}: a durable step's result, stored once; a repeat answers the stored one. */
export async function recordWorkerStep(
  options: { caller: Caller; id: string; name: string; input: { lease_token: string; result?: unknown } },
  deps: WorkerDeps,
): Promise<{ name: string; recorded: boolean; result: unknown }> {
  const { caller, id, name, input } = options;
  const lease = await leaseOf(caller, id, input.lease_token, deps);
  const json = input.result === undefined ? null : JSON.stringify(input.result);
  if (json !== null && Buffer.byteLength(json) > STEP_RESULT_MAX_BYTES) {
    throw validationFailed([{ path: "result", message: `is larger than ${STEP_RESULT_MAX_BYTES} bytes of JSON` }]);
  }
  if (await recordStep(deps.db.pool, { jobId: id, fence: input.lease_token, name, attempt: lease.retries + 1, resultJson: json, startedAt: new Date() })) {
    return { name, recorded: true, result: input.result ?? null };
  }
  const stored = (await readSteps(deps.db.pool, id)).get(name);
  if (!stored) throw lost();
  if (stored.kind !== "step") throw new AppError("conflict", `The step name "${name}" is already used by a ${stored.kind}; step names are unique per job.`);
  return { name, recorded: false, result: stored.resultJson === null ? null : (JSON.parse(stored.resultJson) as unknown) };
}

export type WaitOutcomeJson = { outcome: "suspended" | "ended"; waitpoint_id?: string; wake_at?: string; status?: string; data?: unknown };

/**
 * POST /worker/jobs/{id}/sleep: ends the attempt without spending a retry until `duration_ms` from now (the job is
 * pending, its slot free); replayed by a later attempt (the same name), it answers `ended` and the worker goes on.
 */
export async function sleepJob(
  options: { caller: Caller; id: string; input: { lease_token: string; name: string; duration_ms: number } },
  deps: WorkerDeps,
): Promise<WaitOutcomeJson> {
  const { caller, id, input } = options;
  const lease = await leaseOf(caller, id, input.lease_token, deps);
  const stored = (await readSteps(deps.db.pool, id)).get(input.name);
  if (stored && stored.kind !== "sleep")
    throw new AppError("conflict", `The step name "${input.name}" is already used by a ${stored.kind}; step names are unique per job.`);
  if (stored?.status === "completed") return { outcome: "ended" };
  const wakeAt = stored?.wakeAt ?? new Date(Date.now() + Math.min(SLEEP_MAX_MS, input.duration_ms));
  if (wakeAt.getTime() <= Date.now()) {
    if (!(await finishStep(deps.db.pool, { jobId: id, fence: input.lease_token, name: input.name, status: "completed" }))) throw lost();
    return { outcome: "ended" };
  }
  if (!(await suspendForSleep(deps.db.pool, { jobId: id, fence: input.lease_token, name: input.name, attempt: lease.retries + 1, wakeAt }))) throw lost();
  await writeOutcomes(deps.db.pool, [logRow(lease, "info", `Attempt ${lease.retries + 1} sleeps (${input.name}) until ${wakeAt.toISOString()}.`)], []);
  await dropLeases(deps.db.pool, [id], [input.lease_token]);
  return { outcome: "suspended", wake_at: wakeAt.toISOString() };
}

export type WaitForInput = { lease_token: string; name: string; waitpoint_id?: string; timeout_seconds?: number };

/**
 * POST /worker/jobs/{id}/wait-for: ends the attempt until a waitpoint ends — one of the organization's, or a new one
 * made here (`timeout_seconds`; completed by id with POST /waitpoints/{id}/complete). When the waitpoint has already
 * ended (a replay, or it was quick), answers `ended` with its status and data, and the worker goes on.
 */
export async function waitForWaitpoint(options: { caller: Caller; id: string; input: WaitForInput }, deps: WorkerDeps): Promise<WaitOutcomeJson> {
  const { caller, id, input } = options;
  const lease = await leaseOf(caller, id, input.lease_token, deps);
  const stored = (await readSteps(deps.db.pool, id)).get(input.name);
  if (stored && stored.kind !== "wait")
    throw new AppError("conflict", `The step name "${input.name}" is already used by a ${stored.kind}; step names are unique per job.`);
  let waitpointId = stored?.waitpointId ?? input.waitpoint_id?.toLowerCase() ?? null;
  let create: { orgId: string; tokenHash: Buffer; timeoutSeconds: number } | undefined;
  if (waitpointId === null) {
    const seconds = input.timeout_seconds ?? 86_400;
    if (seconds < WAITPOINT_TIMEOUT_MIN_SECONDS || seconds > WAITPOINT_TIMEOUT_MAX_SECONDS) {
      throw validationFailed([{ path: "timeout_seconds", message: `must be ${WAITPOINT_TIMEOUT_MIN_SECONDS} to ${WAITPOINT_TIMEOUT_MAX_SECONDS}` }]);
    }
    // As a built-in handler's ctx.waitFor: nobody is given the token; the waitpoint is completed by id.
    create = { orgId: caller.orgId, tokenHash: createHash("sha256").update(randomBytes(32)).digest(), timeoutSeconds: seconds };
    waitpointId = newId();
  } else if (!isUuid(waitpointId)) {
    throw validationFailed([{ path: "waitpoint_id", message: "is not a waitpoint of your organization" }]);
  }
  const outcome = await suspendForWait(deps.db.pool, {
    jobId: id,
    fence: input.lease_token,
    name: input.name,
    attempt: lease.retries + 1,
    waitpointId,
    create,
  });
  if (outcome.outcome === "lost") {
    if (!stored && !create) throw validationFailed([{ path: "waitpoint_id", message: "is not a waitpoint of your organization" }]);
    throw lost();
  }
  if (outcome.outcome === "suspended") {
    await writeOutcomes(deps.db.pool, [logRow(lease, "info", `Attempt ${lease.retries + 1} waits (${input.name}) for waitpoint ${waitpointId}.`)], []);
    await dropLeases(deps.db.pool, [id], [input.lease_token]);
    return { outcome: "suspended", waitpoint_id: waitpointId };
  }
  const completed = outcome.status === "completed";
  await finishStep(deps.db.pool, { jobId: id, fence: input.lease_token, name: input.name, status: completed ? "completed" : "failed" });
  return { outcome: "ended", waitpoint_id: outcome.waitpointId, status: outcome.status, data: outcome.data ?? null };
}
