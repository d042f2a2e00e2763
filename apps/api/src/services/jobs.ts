// Creating, listing (with SPEC §8's filters) and reading jobs (SPEC §5). Postgres is the only thing a 202 promises:
// the API never touches Redis for a job; the workers' dispatcher hands a due job to BullMQ.
import { createHash } from "node:crypto";
import stringify from "safe-stable-stringify";
import {
  CONCURRENCY_LIMIT_DEFAULT,
  DEDUPE_SECONDS_DEFAULT,
  GRAPH_NODES_LIMIT,
  IDEMPOTENCY_TTL_MS,
  jobFilterParams,
  PRIORITY_DEFAULT,
  RUN_AT_MAX_AHEAD_MS,
  toJobFilter,
  type JobFilter,
  type JobFilterInput,
  type JobStatus,
  type OnDependencyFailure,
} from "@conveyor/contracts";
import {
  dedupeHolder,
  findFailureGroups,
  findJob,
  findJobGraph,
  findOrgJobs,
  findOrgWaitpoints,
  findJobArtifact,
  findJobAttempts,
  findJobLogs,
  isUuid,
  listJobsPage,
  newId,
  streamJobs,
  unknownRateLimits,
  UnknownDependencyError,
  type JobDetail,
  type JobGraph,
  type NewJob,
} from "@conveyor/db";
import { AppError, notFound, validationFailed, type ErrorDetail } from "../http/errors";
import { checkJob, unknownJobType } from "./job-catalog";
import { currentTraceParent } from "@conveyor/tracing";
import type { Caller, ServiceDeps } from "./deps";
import { admitJobs, type JobInserter } from "./quotas";

/** How a job runs alongside others (SPEC §14): on jobs, batch items and schedule templates. */
export type RunFields = { concurrency_key?: string; concurrency_limit?: number; rate_limit?: string; timeout_ms?: number };
export type JobInput = RunFields & {
  type: string;
  payload: Record<string, unknown>;
  max_retries: number;
  run_at?: string;
  priority: number;
  dedupe_key?: string;
  dedupe_seconds?: number;
  debounce_key?: string;
  debounce_ms?: number;
  /** Dependencies (SPEC §15): job ids, or refs of items of the same batch. */
  depends_on?: string[];
  on_dependency_failure?: OnDependencyFailure;
  /** A batch item's name, for other items' depends_on. */
  ref?: string;
};
/**
 * `deduplicated`: the job a dedupe key named, created earlier; `debounced`: a waiting job this one replaced; `ref`:
 * the batch item's ref, repeated.
 */
export type Accepted = { id: string; status: JobStatus; deduplicated?: true; debounced?: true; ref?: string };

/** The run fields of an input as a new job carries them. */
export function runFieldsOf(input: RunFields): Pick<NewJob, "concurrencyKey" | "concurrencyLimit" | "rateLimit" | "timeoutMs"> {
  return {
    concurrencyKey: input.concurrency_key ?? null,
    concurrencyLimit: input.concurrency_key ? (input.concurrency_limit ?? CONCURRENCY_LIMIT_DEFAULT) : null,
    rateLimit: input.rate_limit ?? null,
    timeoutMs: input.timeout_ms ?? null,
  };
}

/** 400 for rate limit names the org has not defined, at each path that names one. */
export async function checkRateLimitNames(named: { path: string; name: string | undefined }[], orgId: string, deps: Pick<ServiceDeps, "db">): Promise<void> {
  const given = named.filter((n): n is { path: string; name: string } => n.name !== undefined);
  if (given.length === 0) return;
  const unknown = new Set(
    await unknownRateLimits(
      deps.db.pool,
      orgId,
      given.map((n) => n.name),
    ),
  );
  const bad = given.filter((n) => unknown.has(n.name));
  if (bad.length) {
    throw validationFailed(
      bad.map((n) => ({ path: n.path, message: `names no rate limit of your organization ("${n.name}"); PUT /rate-limits/${n.name} defines one` })),
    );
  }
}

/** Checks each input (type known, payload valid), all before anything is stored. Paths start with `prefixes[i]`. */
async function prepare(inputs: JobInput[], prefixes: string[], orgId: string, deps: Pick<ServiceDeps, "catalog" | "clock" | "db">): Promise<NewJob[]> {
  await checkRateLimitNames(
    inputs.map((input, i) => ({ path: `${prefixes[i]}rate_limit`, name: input.rate_limit })),
    orgId,
    deps,
  );
  const invalid: ErrorDetail[] = [];
  const unknownTypes: ErrorDetail[] = [];
  let firstUnknown: string | undefined;
  const now = deps.clock.now();
  const jobs: NewJob[] = [];
  for (const [i, input] of inputs.entries()) {
    const checked = await checkJob(deps.catalog, input.type, input.payload, `${prefixes[i]}payload`);
    if (!checked.ok && checked.unknownType) {
      unknownTypes.push({ path: `${prefixes[i]}type`, message: "is not a known job type" });
      firstUnknown ??= input.type;
      continue;
    }
    if (!checked.ok) {
      invalid.push(...checked.details);
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
      payloadJson: JSON.stringify(checked.payload),
      payload: checked.payload,
      maxRetries: input.max_retries,
      createdAt: now,
      priority: input.priority,
      // Kept as asked; a past time is due at once.
      runAt,
      ...runFieldsOf(input),
      dedupe: input.dedupe_key ? { key: input.dedupe_key, seconds: input.dedupe_seconds ?? DEDUPE_SECONDS_DEFAULT } : null,
      traceParent: currentTraceParent(),
      runOnDependencyFailure: input.on_dependency_failure === "run",
    });
  }
  if (firstUnknown !== undefined) throw await unknownJobType(deps.catalog, firstUnknown, unknownTypes);
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
  deps: Pick<ServiceDeps, "catalog" | "clock" | "writer" | "db" | "quotas" | "backpressure">,
): Promise<{ created: boolean; job: Accepted }> {
  const { input } = options;
  if (input.debounce_key && options.idempotencyKey) {
    throw validationFailed([{ path: "debounce_key", message: "cannot be combined with an Idempotency-Key: a debounced post is already safe to repeat" }]);
  }
  if (input.ref !== undefined) throw validationFailed([{ path: "ref", message: "is supported on POST /jobs/batch only" }]);
  const [job] = await prepare([input], [""], options.caller.orgId, deps);
  if (!job) throw new Error("prepare returned no job for a valid input");
  const writer = await admitJobs(options.caller.orgId, job.createdAt, deps);
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

/** Creates 1..1000 jobs, all or none: one invalid job refuses the whole batch. Of items sharing a dedupe key, the first counts. */
export async function createJobs(
  options: { caller: Caller; inputs: JobInput[] },
  deps: Pick<ServiceDeps, "catalog" | "clock" | "writer" | "db" | "quotas" | "backpressure">,
): Promise<Accepted[]> {
  const debounced = options.inputs.flatMap((input, i) =>
    input.debounce_key ? [{ path: `jobs.${i}.debounce_key`, message: "is supported on POST /jobs only" }] : [],
  );
  if (debounced.length) throw validationFailed(debounced);
  const prefixes = options.inputs.map((_, i) => `jobs.${i}.`);
  const graph = options.inputs.some((input) => input.depends_on || input.ref !== undefined);
  if (graph) checkGraphItems(options.inputs, prefixes);
  const jobs = await prepare(options.inputs, prefixes, options.caller.orgId, deps);
  const writer = await admitJobs(options.caller.orgId, jobs[0]!.createdAt, deps);
  if (graph) {
    const resolved = await resolveDependencies(options.inputs, jobs, prefixes, options.caller.orgId, deps);
    jobs.forEach((job, i) => (job.dependsOn = resolved[i]));
    bindAttachments(options.inputs, jobs, prefixes);
    const accepted = await insertGraph(jobs, prefixes, writer);
    return accepted.map((a, i) => (options.inputs[i]!.ref === undefined ? a : { ...a, ref: options.inputs[i]!.ref }));
  }
  // A later item with a key an earlier item of the batch holds is that item's job.
  const firstWithKey = new Map<string, NewJob>();
  const sameAs = new Map<string, NewJob>();
  const inserted = jobs.filter((job) => {
    if (!job.dedupe) return true;
    const first = firstWithKey.get(job.dedupe.key);
    if (first) sameAs.set(job.id, first);
    else firstWithKey.set(job.dedupe.key, job);
    return !first;
  });
  bindAttachments(options.inputs, jobs, prefixes);
  const refused = await writer.insert(inserted);
  const holders = new Map<string, Accepted>();
  for (const key of new Set(refused.values())) holders.set(key, { ...(await dedupeHolder(deps.db.pool, options.caller.orgId, key)), deduplicated: true });
  return jobs.map((job) => {
    const first = sameAs.get(job.id) ?? job;
    if (refused.has(first.id)) return holders.get(job.dedupe!.key)!;
    return first === job ? { id: job.id, status: "pending" as const } : { id: first.id, status: "pending" as const, deduplicated: true as const };
  });
}

/** Refs unique and not job ids, and no dedupe keys: a deduplicated item would leave its dependents without it. */
function checkGraphItems(inputs: JobInput[], prefixes: string[]): void {
  const details: ErrorDetail[] = [];
  const refs = new Map<string, number>();
  inputs.forEach((input, i) => {
    if (input.dedupe_key !== undefined) details.push({ path: `${prefixes[i]}dedupe_key`, message: "cannot be used in a batch with depends_on or ref" });
    if (input.ref === undefined) return;
    if (isUuid(input.ref)) details.push({ path: `${prefixes[i]}ref`, message: "must not look like a job id" });
    const first = refs.get(input.ref);
    if (first !== undefined) details.push({ path: `${prefixes[i]}ref`, message: `is also the ref of jobs.${first}; refs are unique in a batch` });
    else refs.set(input.ref, i);
  });
  if (details.length) throw validationFailed(details);
}

/**
 * Each input's depends_on as job ids: refs of the batch become their items' ids, ids are checked to be jobs of the
 * org. Refused (400, naming each item): an unknown ref, a reference to the item itself, another org's or no job, and
 * a cycle among the batch's items (every item on one is named).
 */
async function resolveDependencies(inputs: JobInput[], jobs: NewJob[], prefixes: string[], orgId: string, deps: Pick<ServiceDeps, "db">): Promise<string[][]> {
  const byRef = new Map(inputs.flatMap((input, i) => (input.ref === undefined ? [] : [[input.ref, i] as const])));
  const details: ErrorDetail[] = [];
  const outside = new Map<string, { path: string }[]>();
  const internal: number[][] = inputs.map(() => []);
  const resolved = inputs.map((input, i) =>
    (input.depends_on ?? []).flatMap((name, k) => {
      const path = `${prefixes[i]}depends_on.${k}`;
      const item = byRef.get(name);
      if (item !== undefined) {
        if (item === i) details.push({ path, message: "names the job itself: a job cannot depend on itself" });
        else internal[i]!.push(item);
        return [jobs[item]!.id];
      }
      if (!isUuid(name)) {
        details.push({ path, message: byRef.size || inputs.length > 1 ? `names no ref of this batch ("${name}") and is not a job id` : "is not a job id" });
        return [];
      }
      const id = name.toLowerCase();
      outside.set(id, [...(outside.get(id) ?? []), { path }]);
      return [id];
    }),
  );
  if (outside.size) {
    const found = new Set((await findOrgJobs(deps.db.pool, orgId, [...outside.keys()])).map((j) => j.id));
    // The others may be waitpoints of the org (SPEC §20).
    const rest = [...outside.keys()].filter((id) => !found.has(id));
    for (const id of await findOrgWaitpoints(deps.db.pool, orgId, rest)) found.add(id);
    for (const [id, uses] of outside)
      if (!found.has(id)) for (const use of uses) details.push({ path: use.path, message: "is not a job or waitpoint of your organization" });
  }
  for (const i of onCycles(internal))
    details.push({ path: `${prefixes[i]}depends_on`, message: "is part of a cycle: these jobs would wait for each other forever" });
  if (details.length) throw validationFailed(details);
  return resolved.map((ids) => [...new Set(ids)]);
}

/**
 * send_email attachments name a job the e-mail depends on (SPEC §15): a ref of the batch becomes that item's id in the
 * stored payload; anything not among the job's dependencies is refused.
 */
function bindAttachments(inputs: JobInput[], jobs: NewJob[], prefixes: string[]): void {
  const byRef = new Map(inputs.flatMap((input, i) => (input.ref === undefined ? [] : [[input.ref, jobs[i]!.id] as const])));
  const details: ErrorDetail[] = [];
  jobs.forEach((job, i) => {
    const payload = job.payload as { attachments?: { filename: string; job: string }[] } | undefined;
    if (job.type !== "send_email" || !payload?.attachments?.length) return;
    const dependsOn = new Set(job.dependsOn ?? []);
    payload.attachments = payload.attachments.map((attachment, k) => {
      const id = byRef.get(attachment.job) ?? attachment.job.toLowerCase();
      if (!dependsOn.has(id))
        details.push({
          path: `${prefixes[i]}payload.attachments.${k}.job`,
          message: "must name a job in this job's depends_on (an id, or a ref of the batch)",
        });
      return { ...attachment, job: id };
    });
    job.payloadJson = JSON.stringify(payload);
  });
  if (details.length) throw validationFailed(details);
}

/**
 * The items on a cycle of `edges` (item → the items it depends on): what is left once items nothing left depends on
 * and items that depend on nothing left are peeled off, one at a time (linear in the edges).
 */
function onCycles(edges: number[][]): number[] {
  const needs = edges.map((e) => [...new Set(e)]);
  const neededBy: number[][] = edges.map(() => []);
  needs.forEach((e, i) => e.forEach((j) => neededBy[j]!.push(i)));
  const needsLeft = needs.map((e) => e.length);
  const neededLeft = neededBy.map((e) => e.length);
  const gone = new Set<number>();
  const peel = [...edges.keys()].filter((i) => needsLeft[i] === 0 || neededLeft[i] === 0);
  const queue = [...peel];
  while (queue.length) {
    const i = queue.pop()!;
    if (gone.has(i)) continue;
    gone.add(i);
    for (const j of needs[i]!) if (--neededLeft[j]! === 0 && !gone.has(j)) queue.push(j);
    for (const k of neededBy[i]!) if (--needsLeft[k]! === 0 && !gone.has(k)) queue.push(k);
  }
  return [...edges.keys()].filter((i) => !gone.has(i));
}

/** Inserts jobs with dependencies (not grouped with other requests: a graph takes a transaction of its own). */
async function insertGraph(jobs: NewJob[], prefixes: string[], writer: JobInserter): Promise<Accepted[]> {
  // The answer is the state this request created (pending, or cancelled by a dependency that had already failed),
  // read in the insert's transaction (the writer's insertGraph): after the commit a dispatcher may already have
  // handed over a job that depends on nothing pending, and a later read would answer queued or even done.
  let statuses: JobStatus[];
  try {
    statuses = await writer.insertGraph(jobs);
  } catch (error) {
    if (!(error instanceof UnknownDependencyError)) throw error;
    // Deleted (retention) between the check and the insert.
    const index = new Map(jobs.map((job, i) => [job.id, i]));
    throw validationFailed(
      error.missing.map((m) => ({
        path: `${prefixes[index.get(m.jobId)!]}depends_on`,
        message: `names ${m.dependsOn}, which is not a job or waitpoint of your organization`,
      })),
    );
  }
  return jobs.map((job, i) => ({ id: job.id, status: statuses[i]! }));
}

/** `include=error`: each item also carries its last error (its first 300 characters), for a list that shows why jobs failed. */
export type JobListQuery = JobFilterInput & { limit?: number; cursor?: string; include?: "error"; order?: "newest" | "oldest" };

/** Items are JSON texts rendered by Postgres; a page says where the next one starts. */
export type JobList = { kind: "page"; items: string[]; next: URLSearchParams | null } | { kind: "stream"; items: AsyncIterable<string>; release(): void };

/** What a list is besides its page: the filters, and its order when not the default (newest first). */
const listParams = (filter: JobFilter, oldestFirst: boolean): [string, string][] => [
  ...jobFilterParams(filter),
  ...(oldestFirst ? [["order", "oldest"] as [string, string]] : []),
];

/** A short digest of a list's filters and order (empty for none), carried in its pages' cursors. */
function filterFingerprint(filter: JobFilter, oldestFirst: boolean): string {
  const params = listParams(filter, oldestFirst);
  return params.length ? createHash("sha256").update(JSON.stringify(params)).digest().subarray(0, 9).toString("base64url") : "";
}

/**
 * Cursors are opaque to clients: the id of the last job of the previous page and the fingerprint of the page's
 * filters, base64url-encoded (an unfiltered list's cursor is the id alone, as it always was). The next page's
 * Link repeats the filters; a cursor sent with other filters than its own is refused rather than mixing lists.
 */
const encodeCursor = (id: string, filter: JobFilter, oldestFirst: boolean) => {
  const fingerprint = filterFingerprint(filter, oldestFirst);
  return Buffer.from(fingerprint ? `${id}.${fingerprint}` : id, "utf8").toString("base64url");
};
function decodeCursor(cursor: string, filter: JobFilter, oldestFirst: boolean): string {
  const [id = "", fingerprint = "", ...rest] = Buffer.from(cursor, "base64url").toString("utf8").split(".");
  if (!isUuid(id) || rest.length) throw validationFailed([{ path: "query.cursor", message: "is not a cursor this API issued" }]);
  if (fingerprint !== filterFingerprint(filter, oldestFirst)) {
    throw validationFailed([{ path: "query.cursor", message: "belongs to a list with other filters: send it with the filters of the Link that gave it" }]);
  }
  return id;
}

/**
 * The org's jobs matching the query's filters, newest first (or oldest first): one page with `limit` (and the query of the next
 * one while more remain), or every one, streamed from a database cursor so memory stays flat whatever the count.
 */
export async function listJobs(options: { caller: Caller; query: JobListQuery }, deps: Pick<ServiceDeps, "reads">): Promise<JobList> {
  const { query } = options;
  const orgId = options.caller.orgId;
  const filter = toJobFilter(query);
  const withError = query.include === "error";
  const oldestFirst = query.order === "oldest";
  if (query.limit === undefined) {
    if (query.cursor !== undefined) throw validationFailed([{ path: "query.cursor", message: "needs limit" }]);
    const stream = await streamJobs(await deps.reads.poolFor(options.caller), { orgId, filter, withError, oldestFirst });
    return { kind: "stream", items: mapItems(stream.rows), release: stream.release };
  }
  const page = await listJobsPage(await deps.reads.poolFor(options.caller), {
    orgId,
    filter,
    limit: query.limit,
    past: query.cursor ? decodeCursor(query.cursor, filter, oldestFirst) : undefined,
    oldestFirst,
    withError,
  });
  const last = page.items[page.items.length - 1];
  const next =
    page.more && last
      ? new URLSearchParams([
          ...listParams(filter, oldestFirst),
          ["limit", String(query.limit)],
          ...(withError ? [["include", "error"] as [string, string]] : []),
          ["cursor", encodeCursor((JSON.parse(last) as { id: string }).id, filter, oldestFirst)],
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

export async function getJobGraph(options: { caller: Caller; id: string }, deps: Pick<ServiceDeps, "db">): Promise<JobGraph> {
  const graph = isUuid(options.id) ? await findJobGraph(deps.db.pool, options.caller.orgId, options.id, GRAPH_NODES_LIMIT) : null;
  if (!graph) throw notFound("Job");
  return graph;
}

export async function getJobLogs(options: { caller: Caller; id: string }, deps: Pick<ServiceDeps, "db">) {
  const logs = isUuid(options.id) ? await findJobLogs(deps.db.pool, options.caller.orgId, options.id) : null;
  if (!logs) throw notFound("Job");
  return logs;
}

export async function getJobAttempts(options: { caller: Caller; id: string }, deps: Pick<ServiceDeps, "db">) {
  const attempts = isUuid(options.id) ? await findJobAttempts(deps.db.pool, options.caller.orgId, options.id) : null;
  if (!attempts) throw notFound("Job");
  return attempts;
}

export async function getJobArtifact(options: { caller: Caller; id: string }, deps: Pick<ServiceDeps, "db">) {
  const artifact = isUuid(options.id) ? await findJobArtifact(deps.db.pool, options.caller.orgId, options.id) : null;
  if (!artifact) throw notFound("Artifact");
  return artifact;
}

export type FailureGroupsQuery = Pick<JobFilterInput, "type" | "created_after" | "created_before" | "schedule_id"> & { limit: number };

/** The org's failed jobs grouped by type and normalised error (GET /jobs/failures), most recently seen first. */
export async function listFailureGroups(options: { caller: Caller; query: FailureGroupsQuery }, deps: Pick<ServiceDeps, "reads">) {
  const { limit, ...filter } = options.query;
  const { groups, more } = await findFailureGroups(await deps.reads.poolFor(options.caller), {
    orgId: options.caller.orgId,
    filter: toJobFilter(filter),
    limit,
  });
  return { groups, has_more: more };
}
