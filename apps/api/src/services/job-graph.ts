// Dependency graphs (docs/reference/lifecycle.md#dependencies, docs/reference/lifecycle.md#waitpoints-and-durable-steps): refs of a batch and ids of jobs or waitpoints become the edges of new jobs, checked
// before anything is stored (unknown, another org's, the item itself, cycles), and a graph is inserted in a
// transaction of its own. Used by POST /jobs with depends_on and by POST /jobs/batch.
import type { JobStatus } from "@conveyor/contracts";
import { findOrgJobs, findOrgWaitpoints, isUuid, UnknownDependencyError, type NewJob } from "@conveyor/db";
import { validationFailed, type ErrorDetail } from "./infrastructure/errors";
import type { ServiceDeps } from "./infrastructure/deps";
import type { Accepted, JobInput } from "./job-input";
import type { GraphPrelude, JobInserter } from "./infrastructure/job-writer";

/** A waitpoint made by the batch (docs/reference/lifecycle.md#waitpoints-and-durable-steps): its ref, for the items' depends_on, and its id. */
export type BatchWaitpointRef = { ref: string; id: string };

/**
 * Refs unique across the batch's jobs and waitpoints and not ids, and no dedupe keys: a deduplicated item would leave
 * its dependents without it.
 */
export function checkGraphItems(inputs: JobInput[], prefixes: string[], waitpointRefs: readonly string[] = []): void {
  const details: ErrorDetail[] = [];
  const refs = new Map<string, string>();
  const claim = (ref: string, item: string) => {
    if (isUuid(ref)) details.push({ path: `${item}.ref`, message: "must not look like a job id" });
    const first = refs.get(ref);
    if (first !== undefined) details.push({ path: `${item}.ref`, message: `is also the ref of ${first}; refs are unique in a batch` });
    else refs.set(ref, item);
  };
  inputs.forEach((input, i) => {
    if (input.dedupe_key !== undefined)
      details.push({ path: `${prefixes[i]}dedupe_key`, message: "cannot be used in a batch with depends_on, ref or waitpoints" });
    if (input.ref !== undefined) claim(input.ref, prefixes[i]!.slice(0, -1));
  });
  waitpointRefs.forEach((ref, i) => claim(ref, `waitpoints.${i}`));
  if (details.length) throw validationFailed(details);
}

/**
 * Each input's depends_on as ids: refs of the batch become their items' ids (a job's, or a waitpoint's the batch
 * makes), ids are checked to be jobs or waitpoints of the org. Refused (400, naming each item): an unknown ref, a
 * reference to the item itself, another org's or no job, and a cycle among the batch's items (every item on one is
 * named).
 */
export async function resolveDependencies(
  inputs: JobInput[],
  jobs: NewJob[],
  prefixes: string[],
  orgId: string,
  deps: Pick<ServiceDeps, "db">,
  waitpoints: readonly BatchWaitpointRef[] = [],
): Promise<string[][]> {
  const byRef = new Map(inputs.flatMap((input, i) => (input.ref === undefined ? [] : [[input.ref, i] as const])));
  const waitpointByRef = new Map(waitpoints.map((w) => [w.ref, w.id]));
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
      const waitpoint = waitpointByRef.get(name);
      if (waitpoint !== undefined) return [waitpoint];
      if (!isUuid(name)) {
        details.push({
          path,
          message: byRef.size || waitpointByRef.size || inputs.length > 1 ? `names no ref of this batch ("${name}") and is not a job id` : "is not a job id",
        });
        return [];
      }
      const id = name.toLowerCase();
      outside.set(id, [...(outside.get(id) ?? []), { path }]);
      return [id];
    }),
  );
  if (outside.size) {
    const found = new Set((await findOrgJobs(deps.db.pool, orgId, [...outside.keys()])).map((j) => j.id));
    // The others may be waitpoints of the org (docs/reference/lifecycle.md#waitpoints-and-durable-steps).
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
 * send_email attachments name a job the e-mail depends on (docs/reference/lifecycle.md#dependencies): a ref of the batch becomes that item's id in the
 * stored payload; anything not among the job's dependencies is refused.
 */
export function bindAttachments(inputs: JobInput[], jobs: NewJob[], prefixes: string[]): void {
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

/**
 * Inserts jobs with dependencies (not grouped with other requests: a graph takes a transaction of its own), after
 * `before` in the same transaction (what they may depend on that the request makes too: a batch's waitpoints).
 */
export async function insertGraph(jobs: NewJob[], prefixes: string[], writer: JobInserter, before?: GraphPrelude): Promise<Accepted[]> {
  // The answer is the state this request created (pending, or cancelled by a dependency that had already failed),
  // read in the insert's transaction (the writer's insertGraph): after the commit a dispatcher may already have
  // handed over a job that depends on nothing pending, and a later read would answer queued or even done.
  let statuses: JobStatus[];
  try {
    statuses = await writer.insertGraph(jobs, before);
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
