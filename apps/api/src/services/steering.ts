// Steering jobs (docs/reference/lifecycle.md#steering): cancel, replay, and both in bulk. A pending job is cancelled at once and never runs; a
// processing job gets a cancellation request, which the worker running it hears within 2 s (Redis message, or its
// own poll of Postgres) and answers by aborting the attempt's signal. Which outcome is recorded is Postgres'
// decision, under the attempt's fence: cancelled, or done/failed if the handler finished first. A replay is a new
// job with the original's type, payload, max_retries and priority, created like any other (the JobWriter).
import { BULK_LIMIT, toJobFilter, type JobFilterInput } from "@conveyor/contracts";
import {
  BULK_ACTION_STATUSES,
  cancelJobs,
  describeActor,
  findJob,
  findOrgJobs,
  inTransaction,
  insertJobs,
  isUuid,
  jobStatuses,
  newId,
  replaySources,
  selectBulkTargets,
  type AuditChange,
  type BulkAction,
  type JobDetail,
  type NewJob,
  type ReplaySource,
} from "@conveyor/db";
import type pg from "pg";
import { cancelChannel, redisKeyPrefix } from "@conveyor/queue";
import { AppError, notFound, validationFailed } from "./infrastructure/errors";
import { checkJob, unknownJobType } from "./infrastructure/job-catalog";
import { audit } from "./infrastructure/audit";
import { currentTraceParent } from "@conveyor/tracing";
import type { Caller, ServiceDeps } from "./infrastructure/deps";
import type { Accepted } from "./job-input";

/** Cancels one job; answers with the job as it is now. 404 for another org's or no job, 409 for a final one. */
export async function cancelJob(
  options: { caller: Caller; id: string },
  deps: Pick<ServiceDeps, "db" | "redis" | "config" | "logger" | "clock">,
): Promise<JobDetail> {
  const { caller, id } = options;
  if (!isUuid(id)) throw notFound("Job");
  const by = await describeActor(deps.db.pool, { userId: caller.userId, apiKeyId: caller.apiKeyId });
  const outcome = await inTransaction(deps.db.pool, async (tx) => {
    const [outcome] = await cancelJobs(tx, { orgId: caller.orgId, ids: [id], by });
    // A job that was final, or already asked to stop, did not change: nothing to record.
    if (outcome?.changed) await audit(tx, caller, deps.clock, { action: "job.cancel", target: { type: "job", id }, changes: cancelChanges(outcome.previous) });
    return outcome;
  });
  if (!outcome) throw notFound("Job");
  if (outcome.previous !== "pending" && outcome.previous !== "processing") {
    throw new AppError("job_finished", `The job is already ${outcome.previous}; only a pending or processing job can be cancelled. Replay it to run it again.`);
  }
  // The answer is the job as this cancellation left it: read before the workers hear of it, since a worker told to stop
  // may record the attempt cancelled within milliseconds (the answer would then depend on the race).
  const job = await findJob(deps.db.pool, caller.orgId, id);
  await tellWorkers(outcome.previous === "processing" ? [id] : [], deps);
  if (!job) throw notFound("Job");
  return job;
}

/**
 * Best effort, after the commit: workers hear of running jobs to stop. With Redis away, they still find out from
 * Postgres within a second. A cancelled job still waiting in an envelope needs nothing: the claim skips it.
 */
export async function tellWorkers(running: string[], deps: Pick<ServiceDeps, "redis" | "config" | "logger">): Promise<void> {
  const warn = (error: Error) => deps.logger.warn("could not tell the workers about a cancellation; they will read it from Postgres", { error: error.message });
  if (running.length) await deps.redis.publish(cancelChannel(redisKeyPrefix(deps.config.REDIS_PREFIX)), running.join("\n")).catch(warn);
}

type SteeringDeps = Pick<ServiceDeps, "db" | "redis" | "config" | "logger" | "writer" | "clock">;

/** Payload bytes a replay reads at once (one larger payload is read alone). */
const REPLAY_PIECE_BYTES = 8 * 1024 * 1024;
/** Jobs one cancel statement takes: each statement stays short (event readers wait behind writing transactions). */
const CANCEL_CHUNK = 1000;

function replayOf(source: ReplaySource, orgId: string, now: Date): NewJob {
  return {
    id: newId(),
    orgId,
    type: source.type,
    payloadJson: source.payloadJson,
    maxRetries: source.maxRetries,
    priority: source.priority,
    createdAt: now,
    replayOf: source.id,
    traceParent: currentTraceParent(),
    concurrencyKey: source.concurrencyKey,
    concurrencyLimit: source.concurrencyLimit,
    rateLimit: source.rateLimit,
    timeoutMs: source.timeoutMs,
    dependsOn: source.dependsOn,
    runOnDependencyFailure: source.runOnDependencyFailure,
  };
}

/** Replays the org's final jobs among `ids` in `tx`; answers how many replays were created. */
async function replayMany(ids: readonly string[], caller: Caller, deps: SteeringDeps, tx: pg.PoolClient): Promise<number> {
  let created = 0;
  for await (const piece of replaySources(tx, { orgId: caller.orgId, ids, maxBytes: REPLAY_PIECE_BYTES })) {
    const now = deps.clock.now();
    await insertJobs(
      tx,
      piece.map((source) => replayOf(source, caller.orgId, now)),
    );
    created += piece.length;
  }
  return created;
}

/** Jobs the workers are told about once the cancellations commit. */
type Cancelled = { running: string[] };

/** Cancels the org's jobs among `ids` in `tx`, 1,000 per statement; answers how many this call changed. */
async function cancelMany(ids: readonly string[], caller: Caller, deps: SteeringDeps, tx: pg.PoolClient, told: Cancelled): Promise<number> {
  if (ids.length === 0) return 0;
  const by = await describeActor(deps.db.pool, { userId: caller.userId, apiKeyId: caller.apiKeyId });
  let changed = 0;
  for (let start = 0; start < ids.length; start += CANCEL_CHUNK) {
    const outcomes = await cancelJobs(tx, { orgId: caller.orgId, ids: ids.slice(start, start + CANCEL_CHUNK), by });
    changed += outcomes.filter((o) => o.changed).length;
    told.running.push(...outcomes.filter((o) => o.changed && o.previous === "processing").map((o) => o.id));
  }
  return changed;
}

/** The audit log's before/after of a cancellation (docs/reference/tenants.md#audit-log): a pending job is cancelled, a processing one asked to stop. */
function cancelChanges(previous: string): Record<string, AuditChange> {
  return previous === "pending" ? { status: { before: "pending", after: "cancelled" } } : { cancel_requested: { before: false, after: true } };
}

/**
 * Replays one final job: a new pending job whose `replay_of` names it; the original is untouched. 404 for another
 * org's or no job, 409 `job_not_finished` for one still pending or processing.
 */
export async function replayJob(
  options: { caller: Caller; id: string; payload?: Record<string, unknown> },
  deps: SteeringDeps & Pick<ServiceDeps, "catalog">,
): Promise<Accepted> {
  const { caller, id } = options;
  const [job] = isUuid(id) ? await findOrgJobs(deps.db.pool, caller.orgId, [id]) : [];
  if (!job) throw notFound("Job");
  if (!BULK_ACTION_STATUSES.replay.includes(job.status)) {
    throw new AppError(
      "job_not_finished",
      `The job is still ${job.status}; only a done, failed or cancelled job can be replayed. Cancel it first to replay it now.`,
    );
  }
  const replay = await inTransaction(deps.db.pool, async (tx) => {
    for await (const [source] of replaySources(tx, { orgId: caller.orgId, ids: [id], maxBytes: REPLAY_PIECE_BYTES })) {
      const created = replayOf(source!, caller.orgId, deps.clock.now());
      // An edited payload is checked as POST /jobs checks one, against the type's schema, and stored with its defaults.
      if (options.payload !== undefined) created.payloadJson = await checkedPayload(source!.type, options.payload, deps, caller.orgId);
      await insertJobs(tx, [created]);
      await audit(tx, caller, deps.clock, {
        action: "job.replay",
        target: { type: "job", id },
        details: { replay_id: created.id, ...(options.payload !== undefined ? { payload_edited: true } : {}) },
      });
      return created.id;
    }
    return undefined;
  });
  // Final jobs stay final; only retention, deleting it in between, gets here.
  if (!replay) throw notFound("Job");
  // Pending, or cancelled at once when it depends on a job that failed (docs/reference/lifecycle.md#dependencies).
  const [status] = await jobStatuses(deps.db.pool, [replay]);
  return { id: replay, status: status! };
}

export type ReplayInput = { payload?: Record<string, unknown> };

/** A replay's new payload as JSON text, when the type's schema accepts it; 400 naming each bad path otherwise. */
async function checkedPayload(type: string, payload: Record<string, unknown>, deps: Pick<ServiceDeps, "catalog">, orgId: string): Promise<string> {
  const checked = await checkJob(deps.catalog, type, payload, "payload", orgId);
  if (checked.ok) return JSON.stringify(checked.payload);
  if (checked.unknownType) throw await unknownJobType(deps.catalog, type, [], `The job's type "${type}" is no longer known, so its payload cannot be checked.`);
  throw validationFailed(checked.details);
}

export type BulkInput = { action: BulkAction; filter?: JobFilterInput; ids?: string[] };
export type BulkResult = { action: BulkAction; matched: number; affected: number; has_more: boolean };

/**
 * Cancels or replays many jobs: those named by `ids` (up to 1,000), or those matching `filter` that the action
 * still applies to, oldest first, at most 10,000 per call.
 *
 * - `matched`: with ids, how many name a job of the organization (whatever its status); with a filter, how many
 *   matching jobs this call took: pending or processing without a cancellation request (cancel), final without
 *   a replay yet (replay).
 * - `affected`: jobs cancelled or asked to stop, or replays created, by this call.
 * - `has_more`: with a filter, more such jobs remain; call again to act on the next 10,000.
 */
export async function bulkJobs(options: { caller: Caller; input: BulkInput }, deps: SteeringDeps): Promise<BulkResult> {
  const { caller, input } = options;
  const told: Cancelled = { running: [] };
  // One transaction with its audit entry: the whole call happens, and is recorded, or none of it does.
  const result = await inTransaction(deps.db.pool, async (tx) => {
    let targets: string[];
    let matched: number;
    let more = false;
    if (input.ids) {
      const found = await findOrgJobs(tx, caller.orgId, [...new Set(input.ids.map((id) => id.toLowerCase()))]);
      matched = found.length;
      targets = found.filter((job) => BULK_ACTION_STATUSES[input.action].includes(job.status)).map((job) => job.id);
    } else {
      const selected = await selectBulkTargets(tx, {
        orgId: caller.orgId,
        filter: toJobFilter(input.filter ?? {}),
        action: input.action,
        limit: BULK_LIMIT + 1,
      });
      more = selected.length > BULK_LIMIT;
      targets = selected.slice(0, BULK_LIMIT);
      matched = targets.length;
    }
    const affected = input.action === "cancel" ? await cancelMany(targets, caller, deps, tx, told) : await replayMany(targets, caller, deps, tx);
    const result: BulkResult = { action: input.action, matched, affected, has_more: more };
    if (affected > 0) await audit(tx, caller, deps.clock, { action: "jobs.bulk", details: { ...result, ...bulkSelection(input) } });
    return result;
  });
  await tellWorkers(told.running, deps);
  return result;
}

/** How many of a bulk action's named jobs its audit entry keeps. */
const AUDITED_BULK_IDS = 20;

/** How the audit log describes what a bulk call chose: the filter without `q` (a payload value), or how many ids (and the first of them). */
function bulkSelection(input: BulkInput): Record<string, unknown> {
  // The jobs themselves, so the audit log can open them (the first AUDITED_BULK_IDS; the count says if there were more).
  if (input.ids) return { ids: input.ids.length, job_ids: input.ids.slice(0, AUDITED_BULK_IDS) };
  const { q, ...filter } = input.filter ?? {};
  return { filter: q === undefined ? filter : { ...filter, q: "(not recorded)" } };
}
