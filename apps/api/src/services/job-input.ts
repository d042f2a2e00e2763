// What every job creation checks first (docs/reference/lifecycle.md#lifecycle, docs/reference/time.md#time-priority-and-fairness, docs/reference/flow-control.md#flow-control): the input's shape as the services take it, its type and
// payload against the catalog, its rate limit's name, and the new job row it becomes. Nothing here stores anything.
import { CONCURRENCY_LIMIT_DEFAULT, DEDUPE_SECONDS_DEFAULT, RUN_AT_MAX_AHEAD_MS, type JobStatus, type OnDependencyFailure } from "@conveyor/contracts";
import { newId, unknownRateLimits, type NewJob } from "@conveyor/db";
import { validationFailed, type ErrorDetail } from "./infrastructure/errors";
import { currentTraceParent } from "@conveyor/tracing";
import { checkJob, unknownJobType } from "./infrastructure/job-catalog";
import type { ServiceDeps } from "./infrastructure/deps";

/** How a job runs alongside others (docs/reference/flow-control.md#flow-control): on jobs, batch items and schedule templates. */
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
  /** Dependencies (docs/reference/lifecycle.md#dependencies): job ids, or refs of items of the same batch. */
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
export async function prepareJobs(
  inputs: JobInput[],
  prefixes: string[],
  orgId: string,
  deps: Pick<ServiceDeps, "catalog" | "clock" | "db">,
): Promise<NewJob[]> {
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
    const checked = await checkJob(deps.catalog, input.type, input.payload, `${prefixes[i]}payload`, orgId);
    if (!checked.ok && checked.unknownType) {
      unknownTypes.push({ path: `${prefixes[i]}type`, message: "is not a known job type" });
      firstUnknown ??= input.type;
      continue;
    }
    if (!checked.ok) {
      invalid.push(...checked.details);
      continue;
    }
    // An organization's own type may set a default timeout and default retries (docs/reference/lifecycle.md#your-own-workers). max_retries arrives as 0
    // when the request gave none, so a job of such a type that asks for 0 gets the type's default.
    const own = await deps.catalog.orgType(orgId, input.type);
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
      maxRetries: input.max_retries === 0 ? (own?.default_max_retries ?? 0) : input.max_retries,
      createdAt: now,
      priority: input.priority,
      // Kept as asked; a past time is due at once.
      runAt,
      ...runFieldsOf({ ...input, timeout_ms: input.timeout_ms ?? own?.default_timeout_ms ?? undefined }),
      dedupe: input.dedupe_key ? { key: input.dedupe_key, seconds: input.dedupe_seconds ?? DEDUPE_SECONDS_DEFAULT } : null,
      traceParent: currentTraceParent(),
      runOnDependencyFailure: input.on_dependency_failure === "run",
    });
  }
  if (firstUnknown !== undefined) throw await unknownJobType(deps.catalog, firstUnknown, unknownTypes, undefined, orgId);
  if (invalid.length) throw validationFailed(invalid);
  return jobs;
}
