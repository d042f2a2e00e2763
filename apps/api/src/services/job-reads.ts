// Reading jobs (docs/reference/lifecycle.md#lifecycle, docs/reference/lifecycle.md#steering): the list with its filters, pages and cursors (or the whole list streamed), one job, its
// graph, logs, attempts and artifact, and failures grouped by error. Reads may go to a replica (deps.reads).
import { createHash } from "node:crypto";
import { GRAPH_NODES_LIMIT, jobFilterParams, toJobFilter, type JobFilter, type JobFilterInput } from "@conveyor/contracts";
import {
  findFailureGroups,
  findJob,
  findJobArtifact,
  findJobAttempts,
  findJobGraph,
  findJobLogs,
  isUuid,
  listJobsPage,
  streamJobs,
  type JobDetail,
  type JobGraph,
} from "@conveyor/db";
import { notFound, validationFailed } from "./infrastructure/errors";
import type { Caller, ServiceDeps } from "./infrastructure/deps";

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
