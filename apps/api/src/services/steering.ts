// Steering jobs (SPEC §8): cancel. A pending job is cancelled at once and never runs; a processing job gets a
// cancellation request, which the worker running it hears within 2 s (Redis message, or its own poll of
// Postgres) and answers by aborting the attempt's signal. Which outcome is recorded is Postgres' decision, under
// the attempt's fence: cancelled, or done/failed if the handler finished first.
import { cancelJobs, describeActor, findJob, isUuid, type JobDetail } from "@conveyor/db";
import { AppError, notFound } from "../http/errors";
import type { Caller, ServiceDeps } from "./deps";

/** The channel workers listen on for cancelled job ids (apps/worker/src/runtime/cancellations.ts). */
const cancelChannel = (prefix: string) => `${prefix}:cancel`;

/** Cancels one job; answers with the job as it is now. 404 for another org's or no job, 409 for a final one. */
export async function cancelJob(
  options: { caller: Caller; id: string },
  deps: Pick<ServiceDeps, "db" | "queues" | "redis" | "config" | "logger">,
): Promise<JobDetail> {
  const { caller, id } = options;
  if (!isUuid(id)) throw notFound("Job");
  const by = await describeActor(deps.db.pool, { userId: caller.userId, apiKeyId: caller.apiKeyId });
  const [outcome] = await cancelJobs(deps.db.pool, { orgId: caller.orgId, ids: [id], by });
  if (!outcome) throw notFound("Job");
  if (outcome.previous !== "pending" && outcome.previous !== "processing") {
    throw new AppError("job_finished", `The job is already ${outcome.previous}; only a pending or processing job can be cancelled. Replay it to run it again.`);
  }
  await tellWorkers(outcome.previous === "processing" ? [id] : [], outcome.dispatched ? [id] : [], deps);
  const job = await findJob(deps.db.pool, caller.orgId, id);
  if (!job) throw notFound("Job");
  return job;
}

/**
 * Best effort, after the commit: a cancelled job BullMQ still holds is taken off its queue (a delivery that slips
 * through is skipped by the claim), and workers hear of running jobs to stop. With Redis away, workers still find
 * out from Postgres within a second.
 */
export async function tellWorkers(
  running: string[],
  handedOver: string[],
  deps: Pick<ServiceDeps, "db" | "queues" | "redis" | "config" | "logger">,
): Promise<void> {
  const warn = (error: Error) => deps.logger.warn("could not tell the workers about a cancellation; they will read it from Postgres", { error: error.message });
  if (running.length) await deps.redis.publish(cancelChannel(deps.config.REDIS_PREFIX), running.join("\n")).catch(warn);
  if (handedOver.length === 0) return;
  const { rows } = await deps.db.pool.query<{ id: string; type: string }>("SELECT id, type FROM jobs WHERE id = ANY($1::uuid[])", [handedOver]);
  await Promise.all(rows.map((job) => deps.queues.remove(job.type, job.id).catch(warn)));
}
