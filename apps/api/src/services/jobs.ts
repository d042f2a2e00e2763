// Creating one job (POST /jobs, docs/reference/lifecycle.md#lifecycle): with an Idempotency-Key, a dedupe key, a debounce key or dependencies, each
// its own write path. Postgres is the only thing a 202 promises: the API never touches Redis for a job; the workers'
// dispatcher hands a due job to BullMQ.
import { createHash } from "node:crypto";
import stringify from "safe-stable-stringify";
import { IDEMPOTENCY_TTL_MS, PRIORITY_DEFAULT } from "@conveyor/contracts";
import { dedupeHolder, UnknownDependencyError, type NewJob } from "@conveyor/db";
import { AppError, validationFailed } from "./infrastructure/errors";
import type { Caller, ServiceDeps } from "./infrastructure/deps";
import { bindAttachments, insertGraph, resolveDependencies } from "./job-graph";
import { prepareJobs, type Accepted, type JobInput } from "./job-input";

function requestHash(job: NewJob): Buffer {
  const payload: unknown = JSON.parse(job.payloadJson);
  return (
    createHash("sha256")
      // run_at and priority only when set, so a request hashes as it did before they existed.
      .update(
        stringify({
          type: job.type,
          payload,
          max_retries: job.maxRetries,
          ...(job.runAt ? { run_at: job.runAt.toISOString() } : {}),
          ...(job.priority !== undefined && job.priority !== PRIORITY_DEFAULT ? { priority: job.priority } : {}),
          ...(job.concurrencyKey ? { concurrency_key: job.concurrencyKey, concurrency_limit: job.concurrencyLimit } : {}),
          ...(job.rateLimit ? { rate_limit: job.rateLimit } : {}),
          ...(job.timeoutMs ? { timeout_ms: job.timeoutMs } : {}),
          ...(job.dedupe ? { dedupe_key: job.dedupe.key, dedupe_seconds: job.dedupe.seconds } : {}),
          ...(job.dependsOn?.length ? { depends_on: [...job.dependsOn].sort(), on_dependency_failure: job.runOnDependencyFailure ? "run" : "cancel" } : {}),
        }) ?? "",
      )
      .digest()
  );
}

/**
 * Creates one job. With an idempotency key, a repeat of the same request within 24 h returns the first job
 * (`created: false`), and a different request with the same key is a 409. A held dedupe key answers its job
 * (`deduplicated`); a debounce key replaces the waiting job holding it (`debounced`).
 */
export async function createJob(
  options: { caller: Caller; input: JobInput; idempotencyKey?: string },
  deps: Pick<ServiceDeps, "catalog" | "clock" | "db" | "admission">,
): Promise<{ created: boolean; job: Accepted }> {
  const { input } = options;
  if (input.debounce_key && options.idempotencyKey) {
    throw validationFailed([{ path: "debounce_key", message: "cannot be combined with an Idempotency-Key: a debounced post is already safe to repeat" }]);
  }
  if (input.ref !== undefined) throw validationFailed([{ path: "ref", message: "is supported on POST /jobs/batch only" }]);
  const [job] = await prepareJobs([input], [""], options.caller.orgId, deps);
  if (!job) throw new Error("prepare returned no job for a valid input");
  const writer = await deps.admission.admit(options.caller.orgId, job.createdAt);
  if (input.depends_on) job.dependsOn = (await resolveDependencies([input], [job], [""], options.caller.orgId, deps))[0];
  bindAttachments([input], [job], [""]);
  if (input.depends_on) {
    if (!options.idempotencyKey) {
      const [accepted] = await insertGraph([job], [""], writer);
      return { created: true, job: accepted! };
    }
  }
  if (input.debounce_key) {
    const debounced = await writer.debounce({ ...job, debounceKey: input.debounce_key }, input.debounce_ms!);
    return debounced.replaced
      ? { created: false, job: { id: debounced.id, status: "pending", debounced: true } }
      : { created: true, job: { id: debounced.id, status: "pending" } };
  }
  if (!options.idempotencyKey) {
    const refused = await writer.insert([job]);
    if (!refused.has(job.id)) return { created: true, job: { id: job.id, status: "pending" } };
    return { created: false, job: { ...(await dedupeHolder(deps.db.pool, job.orgId, job.dedupe!.key)), deduplicated: true } };
  }
  const hash = requestHash(job);
  const outcome = await writer
    .insertIdempotently(job, { key: options.idempotencyKey, requestHash: hash, ttlMs: IDEMPOTENCY_TTL_MS })
    .catch((error: unknown) => {
      if (error instanceof UnknownDependencyError) throw validationFailed([{ path: "depends_on", message: "names a job that is no longer there" }]);
      throw error;
    });
  if (outcome.created) return { created: true, job: { id: job.id, status: outcome.status } };
  if (!outcome.existing.requestHash.equals(hash)) {
    throw new AppError("idempotency_conflict", "This Idempotency-Key was already used with a different request body in the last 24 hours.");
  }
  const existing = { id: outcome.existing.id, status: outcome.existing.status };
  return { created: false, job: outcome.deduplicated ? { ...existing, deduplicated: true } : existing };
}
