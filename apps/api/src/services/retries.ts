// The Retries view's service (issue 38): the org's jobs waiting to retry, and "run now" — a pending job due later
// (a delayed job, or one waiting out a retry's backoff) made due at once through the job machine's bringForward.
// Giving a retry up is POST /jobs/{id}/cancel: a job waiting to retry is cancelled and never runs again.
import { bringForward, describeActor, findJob, findRetrying, inTransaction, isUuid, type JobDetail, type RetryingJob } from "@conveyor/db";
import { AppError, notFound } from "./infrastructure/errors";
import { audit } from "./infrastructure/audit";
import type { Caller, ServiceDeps } from "./infrastructure/deps";

export async function listRetrying(
  options: { caller: Caller; limit: number },
  deps: Pick<ServiceDeps, "db">,
): Promise<{ items: RetryingJob[]; has_more: boolean }> {
  const { items, hasMore } = await findRetrying(deps.db.pool, { orgId: options.caller.orgId, limit: options.limit });
  return { items, has_more: hasMore };
}

/** Makes the job due now; 404 for another org's or no job, 409 `job_not_delayed` for one that is not due later. */
export async function runJobNow(options: { caller: Caller; id: string }, deps: Pick<ServiceDeps, "db" | "clock">): Promise<JobDetail> {
  const { caller, id } = options;
  if (!isUuid(id)) throw notFound("Job");
  const by = await describeActor(deps.db.pool, { userId: caller.userId, apiKeyId: caller.apiKeyId });
  const outcome = await inTransaction(deps.db.pool, async (tx) => {
    const outcome = await bringForward(tx, { orgId: caller.orgId, jobId: id, by });
    if (outcome.changed) await audit(tx, caller, deps.clock, { action: "job.run_now", target: { type: "job", id }, changes: {} });
    return outcome;
  });
  if (!outcome.found) throw notFound("Job");
  if (!outcome.changed) {
    throw new AppError(
      "job_not_delayed",
      outcome.status === "pending"
        ? "The job is already due: it starts as soon as a worker, its limits and its dependencies allow."
        : `The job is ${outcome.status}; only a pending job that is due later (its run_at or a retry's wait ahead) can be run now.`,
    );
  }
  const job = await findJob(deps.db.pool, caller.orgId, id);
  if (!job) throw notFound("Job");
  return job;
}
