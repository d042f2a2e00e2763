// Schedules (docs/reference/time.md#time-priority-and-fairness): a cron expression in an IANA zone and the job each tick creates. The job template is
// checked like a POST /jobs body when the schedule is saved; next_run_at follows from cron, zone and paused,
// and is what the worker's ticker waits for (apps/worker/src/maintenance/scheduler.ts).
import { checkCron, checkTimezone, nextTick, type ScheduleTiming } from "@conveyor/contracts";
import {
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
import { checkJob, unknownJobType } from "./infrastructure/job-catalog";
import { audit, changedFields } from "./infrastructure/audit";
import type { Caller, ServiceDeps } from "./infrastructure/deps";
import { checkRateLimitNames } from "./job-input";

export type ScheduleInput = { name: string; cron: string; timezone: string; job: JobTemplate; paused: boolean };
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
    created_at: row.createdAt.toISOString(),
  };
}

/** The template with the payload's defaults applied, or the refusal POST /jobs would give, with paths under job. */
async function checkTemplate(job: JobTemplate, orgId: string, deps: Pick<ServiceDeps, "catalog" | "db">): Promise<JobTemplate> {
  await checkRateLimitNames([{ path: "job.rate_limit", name: job.rate_limit }], orgId, deps);
  const checked = await checkJob(deps.catalog, job.type, job.payload, "job.payload");
  if (checked.ok) return { ...job, payload: checked.payload };
  if (checked.unknownType) throw await unknownJobType(deps.catalog, job.type, [{ path: "job.type", message: "is not a known job type" }]);
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

/** Cursors are opaque to clients: the id of the last schedule of the previous page, base64url-encoded. */
const encodeCursor = (id: string) => Buffer.from(id, "utf8").toString("base64url");
function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (!isUuid(id)) throw validationFailed([{ path: "query.cursor", message: "is not a cursor this API issued" }]);
  return id;
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
    before: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
  });
  const last = page.rows[page.rows.length - 1];
  const next = page.more && last ? new URLSearchParams({ limit: String(query.limit), cursor: encodeCursor(last.id) }) : null;
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
  };
}
