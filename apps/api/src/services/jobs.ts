// Creating and reading jobs (SPEC §5). Postgres is written first and is the only thing a 202 promises;
// Redis gets the job id afterwards (or from the reconciler).
import { createHash } from "node:crypto";
import stringify from "safe-stable-stringify";
import { IDEMPOTENCY_TTL_MS, type JobStatus } from "@conveyor/contracts";
import { findJob, findJobArtifact, findJobLogs, insertJobIdempotently, isUuid, newId, type JobDetail, type NewJob } from "@conveyor/db";
import type { AppDeps } from "../context";
import { AppError, notFound, validationFailed, type ErrorDetail } from "../http/errors";
import type { Principal } from "../middleware/authenticate";
import type { JobCatalog } from "./job-catalog";
import type { JobWriter } from "./job-writer";

export type JobInput = { type: string; payload: Record<string, unknown>; max_retries: number };
export type JobsDeps = Pick<AppDeps, "db" | "clock"> & { catalog: JobCatalog; writer: JobWriter };
export type Accepted = { id: string; status: JobStatus };

/** Checks each input (type known, payload valid), all before anything is stored. Paths start with `prefixes[i]`. */
async function prepare(deps: JobsDeps, orgId: string, inputs: JobInput[], prefixes: string[]): Promise<NewJob[]> {
  const details: ErrorDetail[] = [];
  const unknown: AppError[] = [];
  const now = deps.clock.now();
  const jobs: NewJob[] = [];
  for (const [i, input] of inputs.entries()) {
    try {
      await deps.catalog.assertKnownType(input.type);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      unknown.push(new AppError(error.code, error.message, [{ path: `${prefixes[i]}type`, message: "is not a known job type" }]));
      continue;
    }
    const checked = deps.catalog.checkPayload(input.type, input.payload);
    if (!checked.ok) {
      details.push(...checked.details.map((d) => ({ path: `${prefixes[i]}payload.${d.path}`, message: d.message })));
      continue;
    }
    jobs.push({ id: newId(), orgId, type: input.type, payloadJson: JSON.stringify(checked.value), maxRetries: input.max_retries, createdAt: now });
  }
  if (unknown.length) {
    const first = unknown[0]!;
    throw new AppError("unknown_job_type", first.message, unknown.flatMap((e) => e.details ?? []));
  }
  if (details.length) throw validationFailed(details);
  return jobs;
}

function requestHash(job: NewJob): Buffer {
  return createHash("sha256")
    .update(stringify({ type: job.type, payload: JSON.parse(job.payloadJson), max_retries: job.maxRetries }) ?? "")
    .digest();
}

/**
 * Creates one job. With an idempotency key, a repeat of the same request within 24 h returns the first job
 * (`created: false`), and a different request with the same key is a 409.
 */
export async function createJob(deps: JobsDeps, options: { principal: Principal; input: JobInput; idempotencyKey?: string }): Promise<{ created: boolean; job: Accepted }> {
  const [job] = await prepare(deps, options.principal.orgId, [options.input], [""]);
  if (!options.idempotencyKey) {
    await deps.writer.insert([job!]);
    return { created: true, job: { id: job!.id, status: "pending" } };
  }
  const hash = requestHash(job!);
  const outcome = await insertJobIdempotently(deps.db.pool, job!, options.idempotencyKey, hash, IDEMPOTENCY_TTL_MS);
  if (outcome.created) {
    deps.writer.enqueue([job!]);
    return { created: true, job: { id: job!.id, status: "pending" } };
  }
  if (!outcome.existing.requestHash.equals(hash)) {
    throw new AppError("idempotency_conflict", "This Idempotency-Key was already used with a different request body in the last 24 hours.");
  }
  return { created: false, job: { id: outcome.existing.id, status: outcome.existing.status } };
}

/** Creates 1..1000 jobs, all or none: one invalid job refuses the whole batch. */
export async function createJobs(deps: JobsDeps, options: { principal: Principal; inputs: JobInput[] }): Promise<Accepted[]> {
  const jobs = await prepare(deps, options.principal.orgId, options.inputs, options.inputs.map((_, i) => `jobs.${i}.`));
  await deps.writer.insert(jobs);
  return jobs.map((j) => ({ id: j.id, status: "pending" as const }));
}

export async function getJob(deps: Pick<AppDeps, "db">, options: { principal: Principal; id: string }): Promise<JobDetail> {
  const job = isUuid(options.id) ? await findJob(deps.db.pool, options.principal.orgId, options.id) : null;
  if (!job) throw notFound("Job");
  return job;
}

export async function getJobLogs(deps: Pick<AppDeps, "db">, options: { principal: Principal; id: string }) {
  const logs = isUuid(options.id) ? await findJobLogs(deps.db.pool, options.principal.orgId, options.id) : null;
  if (!logs) throw notFound("Job");
  return logs;
}

export async function getJobArtifact(deps: Pick<AppDeps, "db">, options: { principal: Principal; id: string }) {
  const artifact = isUuid(options.id) ? await findJobArtifact(deps.db.pool, options.principal.orgId, options.id) : null;
  if (!artifact) throw notFound("Artifact");
  return artifact;
}
