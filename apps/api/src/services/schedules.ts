// Schedules (docs/reference/time.md#time-priority-and-fairness): a cron expression in an IANA zone and the job each tick creates. The job template is
// checked like a POST /jobs body when the schedule is saved; next_run_at follows from cron, zone and paused,
// and is what the worker's ticker waits for (apps/worker/src/maintenance/scheduler.ts).
import {
  BACKFILL_MAX_RUNS,
  CATCH_UP_WINDOW_DEFAULT_SECONDS,
  checkCron,
  checkTimezone,
  nextRunsInZone,
  nextTick,
  type ScheduleCatchUp,
  type ScheduleOverlap,
  type ScheduleTiming,
} from "@conveyor/contracts";
import {
  backfillSchedule as backfillRows,
  QuotaExceededError,
  deleteSchedule as deleteRow,
  findSchedule,
  inTransaction,
  insertSchedule,
  isUuid,
  listSchedules as listRows,
  newId,
  updateSchedule as updateRow,
  type JobTemplate,
  type ScheduleRow,
} from "@conveyor/db";
import { notFound, validationFailed, type ErrorDetail } from "./infrastructure/errors";
import { decodeIdCursor, encodeIdCursor } from "./infrastructure/id-cursor";
import { quotaExceeded } from "./infrastructure/admission/quotas";
import { checkJob, unknownJobType } from "./infrastructure/job-catalog";
import { audit, changedFields } from "./infrastructure/audit";
import type { Caller, ServiceDeps } from "./infrastructure/deps";
import { checkRateLimitNames } from "./job-input";

export type ScheduleInput = {
  name: string;
  cron: string;
  timezone: string;
  job: JobTemplate;
  paused: boolean;
  overlap: ScheduleOverlap;
  catch_up: ScheduleCatchUp;
  catch_up_window_seconds?: number;
};
export type SchedulePatch = Partial<ScheduleInput>;
export type ScheduleListQuery = { limit?: number; cursor?: string };

export type ScheduleJson = {
  id: string;
  name: string;
  cron: string;
  timezone: string;
  job: JobTemplate;
  paused: boolean;
  next_run_at: string | null;
  last_run_at: string | null;
  overlap: ScheduleOverlap;
  catch_up: ScheduleCatchUp;
  catch_up_window_seconds: number | null;
  next_runs: string[];
  created_at: string;
};

function toJson(row: ScheduleRow): ScheduleJson {
  return {
    id: row.id,
    name: row.name,
    cron: row.cron,
    timezone: row.timezone,
    // jsonb orders keys its own way; answer in the documented order.
    job: {
      type: row.job.type,
      payload: row.job.payload,
      max_retries: row.job.max_retries,
      priority: row.job.priority,
      ...(row.job.concurrency_key ? { concurrency_key: row.job.concurrency_key, concurrency_limit: row.job.concurrency_limit ?? 1 } : {}),
      ...(row.job.rate_limit ? { rate_limit: row.job.rate_limit } : {}),
      ...(row.job.timeout_ms ? { timeout_ms: row.job.timeout_ms } : {}),
    },
    paused: row.paused,
    next_run_at: row.nextRunAt?.toISOString() ?? null,
    last_run_at: row.lastRunAt?.toISOString() ?? null,
    overlap: row.overlap,
    catch_up: row.catchUp,
    catch_up_window_seconds: row.catchUp === "all" ? (row.catchUpWindowSeconds ?? CATCH_UP_WINDOW_DEFAULT_SECONDS) : null,
    // From the stored next tick, so the list starts where the ticker will (a minute-old answer is not a minute late).
    next_runs: row.paused || !row.nextRunAt ? [] : nextRunsInZone(row, new Date(row.nextRunAt.getTime() - 1)),
    created_at: row.createdAt.toISOString(),
  };
}

/** The catch-up window as stored: only with catch_up all (its default when not given); 400 when given with another. */
function catchUpWindow(catchUp: ScheduleCatchUp, given: number | undefined, current: number | null): number | null {
  if (catchUp !== "all") {
    if (given !== undefined) throw validationFailed([{ path: "catch_up_window_seconds", message: 'is only for catch_up "all"' }]);
    return null;
  }
  return given ?? current ?? CATCH_UP_WINDOW_DEFAULT_SECONDS;
}

/** The template with the payload's defaults applied, or the refusal POST /jobs would give, with paths under job. */
async function checkTemplate(job: JobTemplate, orgId: string, deps: Pick<ServiceDeps, "catalog" | "db">): Promise<JobTemplate> {
  await checkRateLimitNames([{ path: "job.rate_limit", name: job.rate_limit }], orgId, deps);
  const checked = await checkJob(deps.catalog, job.type, job.payload, "job.payload", orgId);
  if (checked.ok) return { ...job, payload: checked.payload };
  if (checked.unknownType) throw await unknownJobType(deps.catalog, job.type, [{ path: "job.type", message: "is not a known job type" }], undefined, orgId);
  throw validationFailed(checked.details);
}

/** Cron and zone as stored (cron normalised), or 400 naming each field that is wrong. */
function checkTiming<T extends { cron?: string; timezone?: string }>(input: T, now: Date): T {
  const problems: ErrorDetail[] = [];
  const checked = { ...input };
  if (input.cron !== undefined) {
    const cron = checkCron(input.cron, now);
    if (cron.ok) checked.cron = cron.value;
    else problems.push({ path: "cron", message: cron.message });
  }
  if (input.timezone !== undefined) {
    const zone = checkTimezone(input.timezone);
    if (!zone.ok) problems.push({ path: "timezone", message: zone.message });
  }
  if (problems.length) throw validationFailed(problems);
  return checked;
}

/**
 * The first tick after now, or after the last tick that ran if that is later (a clock behind Postgres' must not
 * hand the ticker a tick it already ran). Null while paused.
 */
function nextRunAt(timing: ScheduleTiming & { paused: boolean }, lastRunAt: Date | null, now: Date): Date | null {
  if (timing.paused) return null;
  return nextTick(timing, lastRunAt && lastRunAt > now ? lastRunAt : now);
}

export async function createSchedule(
  options: { caller: Caller; input: ScheduleInput },
  deps: Pick<ServiceDeps, "db" | "catalog" | "clock">,
): Promise<ScheduleJson> {
  const { caller } = options;
  const now = deps.clock.now();
  const input = checkTiming(options.input, now);
  const job = await checkTemplate(input.job, caller.orgId, deps);
  const row = await inTransaction(deps.db.pool, async (tx) => {
    const row = await insertSchedule(tx, {
      id: newId(),
      orgId: caller.orgId,
      name: input.name,
      cron: input.cron,
      timezone: input.timezone,
      job,
      paused: input.paused,
      nextRunAt: nextRunAt(input, null, now),
      overlap: input.overlap,
      catchUp: input.catch_up,
      catchUpWindowSeconds: catchUpWindow(input.catch_up, input.catch_up_window_seconds, null),
      createdBy: caller.userId,
      createdAt: now,
    });
    await audit(tx, caller, deps.clock, {
      action: "schedule.create",
      target: { type: "schedule", id: row.id, label: row.name },
      changes: changedFields({}, auditedFields(row)),
    });
    return row;
  });
  return toJson(row);
}

/** The org's schedules, newest first: all of them, or one page with `limit` (and the next page's query while more remain). */
export async function listSchedules(
  options: { caller: Caller; query: ScheduleListQuery },
  deps: Pick<ServiceDeps, "db">,
): Promise<{ items: ScheduleJson[]; next: URLSearchParams | null }> {
  const { query } = options;
  if (query.cursor !== undefined && query.limit === undefined) throw validationFailed([{ path: "query.cursor", message: "needs limit" }]);
  const page = await listRows(deps.db.pool, {
    orgId: options.caller.orgId,
    limit: query.limit,
    before: query.cursor === undefined ? undefined : decodeIdCursor(query.cursor),
  });
  const last = page.rows[page.rows.length - 1];
  const next = page.more && last ? new URLSearchParams({ limit: String(query.limit), cursor: encodeIdCursor(last.id) }) : null;
  return { items: page.rows.map(toJson), next };
}

export async function getSchedule(options: { caller: Caller; id: string }, deps: Pick<ServiceDeps, "db">): Promise<ScheduleJson> {
  const row = isUuid(options.id) ? await findSchedule(deps.db.pool, options.caller.orgId, options.id) : null;
  if (!row) throw notFound("Schedule");
  return toJson(row);
}

/**
 * Changes any of name, cron, timezone, job (replaced whole) and paused. next_run_at is recomputed from now when
 * cron, zone or paused change (pausing clears it; resuming runs no tick missed while paused), and kept otherwise.
 * The edit holds the schedule's row lock, so it lands wholly before or wholly after a tick.
 */
export async function updateSchedule(
  options: { caller: Caller; id: string; patch: SchedulePatch },
  deps: Pick<ServiceDeps, "db" | "catalog" | "clock">,
): Promise<ScheduleJson> {
  const { caller, id } = options;
  if (!isUuid(id)) throw notFound("Schedule");
  const now = deps.clock.now();
  const patch = checkTiming(options.patch, now);
  const job = patch.job === undefined ? undefined : await checkTemplate(patch.job, caller.orgId, deps);
  const row = await updateRow(
    deps.db.pool,
    { orgId: caller.orgId, id, at: now },
    (current) => {
      const next = {
        name: patch.name ?? current.name,
        cron: patch.cron ?? current.cron,
        timezone: patch.timezone ?? current.timezone,
        job: job ?? current.job,
        paused: patch.paused ?? current.paused,
        overlap: patch.overlap ?? current.overlap,
        catchUp: patch.catch_up ?? current.catchUp,
        catchUpWindowSeconds: catchUpWindow(patch.catch_up ?? current.catchUp, patch.catch_up_window_seconds, current.catchUpWindowSeconds),
      };
      const timingChanged = next.cron !== current.cron || next.timezone !== current.timezone || next.paused !== current.paused;
      return { ...next, nextRunAt: timingChanged ? nextRunAt(next, current.lastRunAt, now) : current.nextRunAt };
    },
    async (tx, before, after) => {
      const changes = changedFields(auditedFields(before), auditedFields(after));
      const payloadChanged = JSON.stringify(before.job.payload) !== JSON.stringify(after.job.payload);
      // An edit that changes nothing is not recorded.
      if (Object.keys(changes).length === 0 && !payloadChanged) return;
      await audit(tx, caller, deps.clock, {
        action: "schedule.update",
        target: { type: "schedule", id: after.id, label: after.name },
        changes,
        details: payloadChanged ? { payload_changed: true } : null,
      });
    },
  );
  if (!row) throw notFound("Schedule");
  return toJson(row);
}

/** Deletes a schedule: no tick after this returns creates a job. The jobs it made stay, with their schedule_id. */
export async function deleteSchedule(options: { caller: Caller; id: string }, deps: Pick<ServiceDeps, "db" | "clock">): Promise<void> {
  const { caller, id } = options;
  const deleted =
    isUuid(id) &&
    (await inTransaction(deps.db.pool, async (tx) => {
      const row = await findSchedule(tx, caller.orgId, id);
      if (!row || !(await deleteRow(tx, caller.orgId, id))) return false;
      await audit(tx, caller, deps.clock, {
        action: "schedule.delete",
        target: { type: "schedule", id: row.id, label: row.name },
        changes: changedFields(auditedFields(row), {}),
      });
      return true;
    }));
  if (!deleted) throw notFound("Schedule");
}

/**
 * What the audit log records of a schedule: its timing and the kind of job it makes — never the job's payload, which
 * may hold anything (an edit of it is only noted as `payload_changed`).
 */
function auditedFields(row: ScheduleRow): Record<string, unknown> {
  return {
    name: row.name,
    cron: row.cron,
    timezone: row.timezone,
    paused: row.paused,
    job_type: row.job.type,
    max_retries: row.job.max_retries,
    priority: row.job.priority,
    overlap: row.overlap,
    catch_up: row.catchUp,
    catch_up_window_seconds: row.catchUpWindowSeconds,
  };
}

export type BackfillJson = { created: number; runs: { tick: string; job_id: string; created: boolean }[] };

/**
 * Makes the runs of a past range of the schedule's ticks (docs/reference/time.md#alerts), each once however often it is sent: a repeat
 * answers the same runs with created: false. Jobs are made now, in one transaction with their runs, under the
 * organization's quotas (all or nothing). At most BACKFILL_MAX_RUNS ticks; `to` must not be in the future.
 */
export async function backfillSchedule(
  options: { caller: Caller; id: string; range: { from: Date; to: Date } },
  deps: Pick<ServiceDeps, "db" | "clock" | "admission">,
): Promise<BackfillJson> {
  const { caller, id, range } = options;
  if (!isUuid(id)) throw notFound("Schedule");
  if (range.from > range.to) throw validationFailed([{ path: "to", message: "must not be before from" }]);
  if (range.to > deps.clock.now()) throw validationFailed([{ path: "to", message: "must not be in the future: a backfill makes the runs of a past range" }]);
  let runs: Awaited<ReturnType<typeof backfillRows>>;
  try {
    runs = await backfillRows(
      deps.db.pool,
      { orgId: caller.orgId, id },
      { ...range, max: BACKFILL_MAX_RUNS },
      await deps.admission.limitsFor(caller.orgId),
      async (tx, made) => {
        const created = made.filter((r) => r.created).length;
        // A repeat that made nothing is not a change.
        if (created === 0) return;
        await audit(tx, caller, deps.clock, {
          action: "schedule.backfill",
          target: { type: "schedule", id },
          details: { from: range.from.toISOString(), to: range.to.toISOString(), created },
        });
      },
    );
  } catch (error) {
    throw error instanceof QuotaExceededError ? quotaExceeded(error) : error;
  }
  if (runs === null) throw notFound("Schedule");
  if (runs === "too_many") throw validationFailed([{ path: "to", message: `the range holds more than ${BACKFILL_MAX_RUNS} runs; send it in parts` }]);
  return {
    created: runs.filter((r) => r.created).length,
    runs: runs.map((r) => ({ tick: r.tick.toISOString(), job_id: r.jobId, created: r.created })),
  };
}
