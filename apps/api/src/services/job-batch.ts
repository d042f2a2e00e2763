// Creating up to 1,000 jobs in one request (POST /jobs/batch, docs/reference/lifecycle.md#lifecycle): all or nothing, either as independent jobs
// (grouped with other requests' inserts, dedupe keys honoured) or as a dependency graph (job-graph.ts), which may
// include waitpoints the batch makes (docs/reference/lifecycle.md#waitpoints-and-durable-steps) for its jobs to wait on.
import { dedupeHolder, insertWaitpoints, type NewJob, type WaitpointJson } from "@conveyor/db";
import { validationFailed } from "./infrastructure/errors";
import type { Caller, ServiceDeps } from "./infrastructure/deps";
import { bindAttachments, checkGraphItems, insertGraph, resolveDependencies } from "./job-graph";
import { prepareJobs, type Accepted, type JobInput } from "./job-input";
import { completeUrl, newWaitpoint, type CreatedWaitpoint, type WaitpointInput } from "./waitpoints";

/** A waitpoint the batch makes (docs/reference/lifecycle.md#waitpoints-and-durable-steps): named by `ref` in its jobs' depends_on. */
export type BatchWaitpointInput = WaitpointInput & { ref: string };

/** A waitpoint the batch made, after its jobs in the answer: its ref and, once only, its complete_url. */
export type AcceptedWaitpoint = CreatedWaitpoint & { kind: "waitpoint"; ref: string };

/**
 * Creates 1..1000 jobs, all or none: one invalid job refuses the whole batch. Of items sharing a dedupe key, the first
 * counts. `waitpoints` are made in the graph's transaction, so the jobs may name them by ref in depends_on; the
 * answer lists them after the jobs.
 */
export async function createJobs(
  options: { caller: Caller; inputs: JobInput[]; waitpoints?: BatchWaitpointInput[] },
  deps: Pick<ServiceDeps, "catalog" | "clock" | "db" | "admission" | "config">,
): Promise<(Accepted | AcceptedWaitpoint)[]> {
  const debounced = options.inputs.flatMap((input, i) =>
    input.debounce_key ? [{ path: `jobs.${i}.debounce_key`, message: "is supported on POST /jobs only" }] : [],
  );
  if (debounced.length) throw validationFailed(debounced);
  const prefixes = options.inputs.map((_, i) => `jobs.${i}.`);
  const waitpointInputs = options.waitpoints ?? [];
  const graph = waitpointInputs.length > 0 || options.inputs.some((input) => input.depends_on || input.ref !== undefined);
  if (graph)
    checkGraphItems(
      options.inputs,
      prefixes,
      waitpointInputs.map((w) => w.ref),
    );
  const jobs = await prepareJobs(options.inputs, prefixes, options.caller.orgId, deps);
  const writer = await deps.admission.admit(options.caller.orgId, jobs[0]!.createdAt, jobs.length);
  if (graph) {
    const made = waitpointInputs.map((input) => ({ input, ...newWaitpoint(options.caller.orgId, input) }));
    const resolved = await resolveDependencies(
      options.inputs,
      jobs,
      prefixes,
      options.caller.orgId,
      deps,
      made.map((w) => ({ ref: w.input.ref, id: w.row.id })),
    );
    jobs.forEach((job, i) => (job.dependsOn = resolved[i]));
    bindAttachments(options.inputs, jobs, prefixes);
    let inserted: WaitpointJson[] = [];
    const accepted = await insertGraph(
      jobs,
      prefixes,
      writer,
      made.length
        ? async (tx) => {
            inserted = await insertWaitpoints(
              tx,
              made.map((w) => w.row),
            );
          }
        : undefined,
    );
    return [
      ...accepted.map((a, i) => (options.inputs[i]!.ref === undefined ? a : { ...a, ref: options.inputs[i]!.ref })),
      ...inserted.map((waitpoint, i) => ({
        kind: "waitpoint" as const,
        ref: made[i]!.input.ref,
        ...waitpoint,
        complete_url: completeUrl(deps, made[i]!.token),
      })),
    ];
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
