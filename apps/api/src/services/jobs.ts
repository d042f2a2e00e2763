// Creating, listing (with SPEC §8's filters) and reading jobs (SPEC §5). Postgres is written first and is the only
// thing a 202 promises; Redis gets the job id afterwards (or from the reconciler).
import { createHash } from "node:crypto";
import stringify from "safe-stable-stringify";
import {
  IDEMPOTENCY_TTL_MS,
  jobFilterParams,
  PRIORITY_DEFAULT,
  RUN_AT_MAX_AHEAD_MS,
  toJobFilter,
  type JobFilter,
  type JobFilterInput,
  type JobStatus,
} from "@conveyor/contracts";
import { findJob, findJobArtifact, findJobLogs, isUuid, listJobsPage, newId, streamJobs, type JobDetail, type NewJob } from "@conveyor/db";
import { AppError, notFound, validationFailed, type ErrorDetail } from "../http/errors";
import type { Caller, ServiceDeps } from "./deps";

export type JobInput = { type: string; payload: Record<string, unknown>; max_retries: number; run_at?: string; priority: number };
export type Accepted = { id: string; status: JobStatus };

/** Checks each input (type known, payload valid), all before anything is stored. Paths start with `prefixes[i]`. */
async function prepare(inputs: JobInput[], prefixes: string[], orgId: string, deps: Pick<ServiceDeps, "catalog" | "clock">): Promise<NewJob[]> {
  const invalid: ErrorDetail[] = [];
  const unknownTypes: ErrorDetail[] = [];
  let firstUnknown: string | undefined;
  const now = deps.clock.now();
  const jobs: NewJob[] = [];
  for (const [i, input] of inputs.entries()) {
    if (!(await deps.catalog.isKnownType(input.type))) {
      unknownTypes.push({ path: `${prefixes[i]}type`, message: "is not a known job type" });
      firstUnknown ??= input.type;
      continue;
    }
    const checked = deps.catalog.checkPayload(input.type, input.payload);
    if (!checked.ok) {
      invalid.push(...checked.details.map((d) => ({ path: `${prefixes[i]}payload.${d.path}`, message: d.message })));
      continue;
    }
    const runAt = input.run_at === undefined ? null : new Date(input.run_at);
    if (runAt && runAt.getTime() > now.getTime() + RUN_AT_MAX_AHEAD_MS) {
      invalid.push({ path: `${prefixes[i]}run_at`, message: "must be at most 365 days ahead" });
      continue;
    }
    jobs.push({
      id: newId(),
      orgId,
      type: input.type,
      payloadJson: JSON.stringify(checked.value),
      payload: checked.value,
      maxRetries: input.max_retries,
      createdAt: now,
      priority: input.priority,
      // Kept as asked; a past time is due at once.
      runAt,
    });
  }
  if (firstUnknown !== undefined) {
    const known = (await deps.catalog.knownTypes()).join(", ");
    throw new AppError("unknown_job_type", `Unknown job type "${firstUnknown}". Known types: ${known}.`, unknownTypes);
  }
  if (invalid.length) throw validationFailed(invalid);
  return jobs;
}

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
        }) ?? "",
      )
      .digest()
  );
}

/**
 * Creates one job. With an idempotency key, a repeat of the same request within 24 h returns the first job
 * (`created: false`), and a different request with the same key is a 409.
 */
export async function createJob(
  options: { caller: Caller; input: JobInput; idempotencyKey?: string },
  deps: Pick<ServiceDeps, "catalog" | "clock" | "writer">,
): Promise<{ created: boolean; job: Accepted }> {
  const [job] = await prepare([options.input], [""], options.caller.orgId, deps);
  if (!job) throw new Error("prepare returned no job for a valid input");
  if (!options.idempotencyKey) {
    await deps.writer.insert([job]);
    return { created: true, job: { id: job.id, status: "pending" } };
  }
  const hash = requestHash(job);
  const outcome = await deps.writer.insertIdempotently(job, { key: options.idempotencyKey, requestHash: hash, ttlMs: IDEMPOTENCY_TTL_MS });
  if (outcome.created) return { created: true, job: { id: job.id, status: "pending" } };
  if (!outcome.existing.requestHash.equals(hash)) {
    throw new AppError("idempotency_conflict", "This Idempotency-Key was already used with a different request body in the last 24 hours.");
  }
  return { created: false, job: { id: outcome.existing.id, status: outcome.existing.status } };
}

/** Creates 1..1000 jobs, all or none: one invalid job refuses the whole batch. */
export async function createJobs(
  options: { caller: Caller; inputs: JobInput[] },
  deps: Pick<ServiceDeps, "catalog" | "clock" | "writer">,
): Promise<Accepted[]> {
  const jobs = await prepare(
    options.inputs,
    options.inputs.map((_, i) => `jobs.${i}.`),
    options.caller.orgId,
    deps,
  );
  await deps.writer.insert(jobs);
  return jobs.map((j) => ({ id: j.id, status: "pending" as const }));
}

export type JobListQuery = JobFilterInput & { limit?: number; cursor?: string };

/** Items are JSON texts rendered by Postgres; a page says where the next one starts. */
export type JobList = { kind: "page"; items: string[]; next: URLSearchParams | null } | { kind: "stream"; items: AsyncIterable<string>; release(): void };

/** A short digest of a filter (empty for none), carried in its pages' cursors. */
function filterFingerprint(filter: JobFilter): string {
  const params = jobFilterParams(filter);
  return params.length ? createHash("sha256").update(JSON.stringify(params)).digest().subarray(0, 9).toString("base64url") : "";
}

/**
 * Cursors are opaque to clients: the id of the last job of the previous page and the fingerprint of the page's
 * filters, base64url-encoded (an unfiltered list's cursor is the id alone, as it always was). The next page's
 * Link repeats the filters; a cursor sent with other filters than its own is refused rather than mixing lists.
 */
const encodeCursor = (id: string, filter: JobFilter) => {
  const fingerprint = filterFingerprint(filter);
  return Buffer.from(fingerprint ? `${id}.${fingerprint}` : id, "utf8").toString("base64url");
};
function decodeCursor(cursor: string, filter: JobFilter): string {
  const [id = "", fingerprint = "", ...rest] = Buffer.from(cursor, "base64url").toString("utf8").split(".");
  if (!isUuid(id) || rest.length) throw validationFailed([{ path: "query.cursor", message: "is not a cursor this API issued" }]);
  if (fingerprint !== filterFingerprint(filter)) {
    throw validationFailed([{ path: "query.cursor", message: "belongs to a list with other filters: send it with the filters of the Link that gave it" }]);
  }
  return id;
}

/**
 * The org's jobs matching the query's filters, newest first: one page with `limit` (and the query of the next
 * one while more remain), or every one, streamed from a database cursor so memory stays flat whatever the count.
 */
export async function listJobs(options: { caller: Caller; query: JobListQuery }, deps: Pick<ServiceDeps, "db">): Promise<JobList> {
  const { query } = options;
  const orgId = options.caller.orgId;
  const filter = toJobFilter(query);
  if (query.limit === undefined) {
    if (query.cursor !== undefined) throw validationFailed([{ path: "query.cursor", message: "needs limit" }]);
    const stream = await streamJobs(deps.db.pool, { orgId, filter });
    return { kind: "stream", items: mapItems(stream.rows), release: stream.release };
  }
  const page = await listJobsPage(deps.db.pool, {
    orgId,
    filter,
    limit: query.limit,
    before: query.cursor ? decodeCursor(query.cursor, filter) : undefined,
  });
  const last = page.items[page.items.length - 1];
  const next =
    page.more && last
      ? new URLSearchParams([
          ...jobFilterParams(filter),
          ["limit", String(query.limit)],
          ["cursor", encodeCursor((JSON.parse(last) as { id: string }).id, filter)],
        ])
      : null;
  return { kind: "page", items: page.items, next };
}

async function* mapItems(rows: AsyncIterable<{ item: string }>): AsyncIterable<string> {
  for await (const row of rows) yield row.item;
}

export async function getJob(options: { caller: Caller; id: string }, deps: Pick<ServiceDeps, "db">): Promise<JobDetail> {
  const job = isUuid(options.id) ? await findJob(deps.db.pool, options.caller.orgId, options.id) : null;
  if (!job) throw notFound("Job");
  return job;
}

export async function getJobLogs(options: { caller: Caller; id: string }, deps: Pick<ServiceDeps, "db">) {
  const logs = isUuid(options.id) ? await findJobLogs(deps.db.pool, options.caller.orgId, options.id) : null;
  if (!logs) throw notFound("Job");
  return logs;
}

export async function getJobArtifact(options: { caller: Caller; id: string }, deps: Pick<ServiceDeps, "db">) {
  const artifact = isUuid(options.id) ? await findJobArtifact(deps.db.pool, options.caller.orgId, options.id) : null;
  if (!artifact) throw notFound("Artifact");
  return artifact;
}
