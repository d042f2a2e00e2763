// Flow control an organization sets (docs/reference/flow-control.md#flow-control): named rate limits its jobs start under, and its settings of each job
// type's queue (paused, a cap on jobs running at once, a rate limit for all of them). What they hold back is the
// dispatcher's decision; these read and write the settings, each change with its audit entry.
import { RATE_LIMIT_PERIODS, RATE_LIMITS_PER_ORG, type RateLimitPeriod } from "@conveyor/contracts";
import {
  countRateLimits,
  deleteRateLimit as deleteLimit,
  inTransaction,
  listQueues as listQueueRows,
  listRateLimits as listLimits,
  putRateLimit as putLimit,
  updateQueueSettings,
  type QueueRow,
  type RateLimitRow,
} from "@conveyor/db";
import { AppError, notFound } from "./infrastructure/errors";
import { audit, changedFields } from "./infrastructure/audit";
import { checkRateLimitNames } from "./job-input";
import type { Caller, ServiceDeps } from "./infrastructure/deps";

export type RateLimitJson = { name: string; limit: number; period: RateLimitPeriod; used: number; created_at: string; updated_at: string };
export type RateLimitInput = { limit: number; period: RateLimitPeriod };
export type QueueChange = { paused?: boolean; concurrency_limit?: number | null; rate_limit?: string | null };

const periodOf = (ms: number): RateLimitPeriod => (Object.entries(RATE_LIMIT_PERIODS).find(([, value]) => value === ms)?.[0] ?? "second") as RateLimitPeriod;
const json = (row: RateLimitRow): RateLimitJson => ({
  name: row.name,
  limit: row.limit,
  period: periodOf(row.period_ms),
  used: row.used,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

type Deps = Pick<ServiceDeps, "db" | "clock">;

/** Creates or changes a rate limit; a lower limit applies at once to the starts already in its window. */
export async function putRateLimit(options: { caller: Caller; name: string; input: RateLimitInput }, { db, clock }: Deps): Promise<RateLimitJson> {
  const { caller, name, input } = options;
  return inTransaction(db.pool, async (tx) => {
    const before = (await listLimits(tx, caller.orgId)).find((limit) => limit.name === name);
    if (!before && (await countRateLimits(tx, caller.orgId)) >= RATE_LIMITS_PER_ORG) {
      throw new AppError("validation_failed", `An organization has at most ${RATE_LIMITS_PER_ORG} rate limits; delete one first.`, [
        { path: "name", message: `would be limit number ${RATE_LIMITS_PER_ORG + 1}` },
      ]);
    }
    const row = await putLimit(tx, caller.orgId, { name, limit: input.limit, periodMs: RATE_LIMIT_PERIODS[input.period] });
    await audit(tx, caller, clock, {
      action: "rate_limit.put",
      target: { type: "rate_limit", id: null, label: name },
      changes: {
        ...(before?.limit !== row.limit ? { limit: { before: before?.limit ?? null, after: row.limit } } : {}),
        ...(before?.period_ms !== row.period_ms ? { period: { before: before ? periodOf(before.period_ms) : null, after: periodOf(row.period_ms) } } : {}),
      },
    });
    return json(row);
  });
}

export async function listRateLimits(options: { caller: Caller }, { db }: Pick<ServiceDeps, "db">): Promise<RateLimitJson[]> {
  return (await listLimits(db.pool, options.caller.orgId)).map(json);
}

/** Deletes a rate limit: jobs naming it start without it from then on. 404 when the org has none of that name. */
export async function deleteRateLimit(options: { caller: Caller; name: string }, { db, clock }: Deps): Promise<void> {
  const { caller, name } = options;
  await inTransaction(db.pool, async (tx) => {
    const before = (await listLimits(tx, caller.orgId)).find((limit) => limit.name === name);
    if (!before || !(await deleteLimit(tx, caller.orgId, name))) throw notFound("Rate limit");
    await audit(tx, caller, clock, {
      action: "rate_limit.delete",
      target: { type: "rate_limit", id: null, label: name },
      changes: { limit: { before: before.limit, after: null }, period: { before: periodOf(before.period_ms), after: null } },
    });
  });
}

/** The queue of every job type the org can use (built in or registered by a worker), with its settings and counts. */
export async function listQueues(options: { caller: Caller }, deps: Pick<ServiceDeps, "db" | "catalog">): Promise<QueueRow[]> {
  return listQueueRows(deps.db.pool, options.caller.orgId, await deps.catalog.knownTypes(options.caller.orgId));
}

/**
 * Changes the org's settings of one type's queue. Paused: no job of the type starts (those running finish); resumed:
 * they start in their order. 404 for a type that is neither built in nor registered.
 */
export async function updateQueue(
  options: { caller: Caller; type: string; change: QueueChange },
  deps: Pick<ServiceDeps, "db" | "catalog" | "clock">,
): Promise<QueueRow> {
  const { caller, type, change } = options;
  if (!(await deps.catalog.isKnownType(type, options.caller.orgId))) throw notFound("Queue");
  await checkRateLimitNames([{ path: "rate_limit", name: change.rate_limit ?? undefined }], caller.orgId, deps);
  return inTransaction(deps.db.pool, async (tx) => {
    const [before] = await listQueueRows(tx, caller.orgId, [type]);
    await updateQueueSettings(tx, caller.orgId, type, { paused: change.paused, concurrencyLimit: change.concurrency_limit, rateLimit: change.rate_limit });
    const [after] = await listQueueRows(tx, caller.orgId, [type]);
    const settings = (row: QueueRow) => ({ paused: row.paused, concurrency_limit: row.concurrency_limit, rate_limit: row.rate_limit });
    await audit(tx, caller, deps.clock, {
      action: "queue.update",
      target: { type: "queue", id: null, label: type },
      changes: changedFields(settings(before!), settings(after!)),
    });
    return after!;
  });
}
