// Schedules (docs/reference/time.md#time-priority-and-fairness): the API's reads and writes, every one naming the org, and the ticker's turn. The ticker
// takes due schedules with FOR UPDATE SKIP LOCKED and, in the same transaction, creates each one's job and moves
// its next_run_at past now. So two tickers (two leaders overlapping after a lease expiry) cannot make two jobs
// for one tick — the second skips the locked row, or re-reads it after the first committed and finds it no
// longer due — and an edit or delete committed before the tick is what the tick sees (edits lock the row too).
import type pg from "pg";
import { planScheduleTurn, type ScheduleCatchUp, type ScheduleOverlap } from "@conveyor/contracts";
import { newId } from "../core/ids";
import { writeAuditEntry } from "../accounts/audit-log";
import { insertJobs, type NewJob } from "../job-machine";
import { enforceQuotas, findQuotaOverrides, hasQuota, limitsInForce, NO_QUOTAS, QuotaExceededError, type QuotaLimits, type QuotaName } from "../usage/quotas";
import { inTransaction } from "../core/transaction";

/** The job a schedule creates at each tick, as validated when the schedule was saved. */
export type JobTemplate = {
  type: string;
  payload: Record<string, unknown>;
  max_retries: number;
  priority: number;
  /** How each tick's job runs alongside others (docs/reference/flow-control.md#flow-control). */
  concurrency_key?: string;
  concurrency_limit?: number;
  rate_limit?: string;
  timeout_ms?: number;
};

/** What a schedule is: everything an edit may change, plus next_run_at, which follows from it. */
export type ScheduleState = {
  name: string;
  cron: string;
  timezone: string;
  job: JobTemplate;
  paused: boolean;
  /** The next tick; null while paused (or when the expression matches no later date). */
  nextRunAt: Date | null;
  /** docs/reference/time.md#alerts: what a tick does while the last run is pending or running, and after downtime. */
  overlap: ScheduleOverlap;
  catchUp: ScheduleCatchUp;
  catchUpWindowSeconds: number | null;
};

export type ScheduleRow = ScheduleState & {
  id: string;
  orgId: string;
  lastRunAt: Date | null;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
};

const COLUMNS = `id, org_id AS "orgId", name, cron, timezone, job, paused, next_run_at AS "nextRunAt", last_run_at AS "lastRunAt",
  overlap, catch_up AS "catchUp", catch_up_window_seconds AS "catchUpWindowSeconds",
  created_by AS "createdBy", created_at AS "createdAt", updated_at AS "updatedAt"`;

type Client = pg.Pool | pg.PoolClient;

type Policy = "overlap" | "catchUp" | "catchUpWindowSeconds";

/** Inserts a schedule; its overlap and catch-up policies default to allow and latest (what schedules did before them). */
export async function insertSchedule(
  db: Client,
  schedule: Omit<ScheduleRow, "lastRunAt" | "updatedAt" | Policy> & Partial<Pick<ScheduleRow, Policy>>,
): Promise<ScheduleRow> {
  const { rows } = await db.query<ScheduleRow>(
    `INSERT INTO schedules (id, org_id, name, cron, timezone, job, paused, next_run_at, created_by, created_at, updated_at,
                            overlap, catch_up, catch_up_window_seconds)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, $13)
     RETURNING ${COLUMNS}`,
    [
      schedule.id,
      schedule.orgId,
      schedule.name,
      schedule.cron,
      schedule.timezone,
      JSON.stringify(schedule.job),
      schedule.paused,
      schedule.nextRunAt,
      schedule.createdBy,
      schedule.createdAt,
      schedule.overlap ?? "allow",
      schedule.catchUp ?? "latest",
      schedule.catchUpWindowSeconds ?? null,
    ],
  );
  return rows[0]!;
}

/** A schedule of `orgId`, or null (absent, or another organization's). */
export async function findSchedule(db: Client, orgId: string, id: string): Promise<ScheduleRow | null> {
  const { rows } = await db.query<ScheduleRow>(`SELECT ${COLUMNS} FROM schedules WHERE id = $1 AND org_id = $2`, [id, orgId]);
  return rows[0] ?? null;
}

/** The org's schedules, newest first: all of them, or `limit` older than `before` and whether more remain. */
export async function listSchedules(db: Client, query: { orgId: string; limit?: number; before?: string }): Promise<{ rows: ScheduleRow[]; more: boolean }> {
  const params: unknown[] = [query.orgId];
  let where = "org_id = $1";
  if (query.before) {
    params.push(query.before);
    where += ` AND id < $${params.length}::uuid`;
  }
  const limit = query.limit === undefined ? "" : ` LIMIT ${query.limit + 1}`;
  const { rows } = await db.query<ScheduleRow>(`SELECT ${COLUMNS} FROM schedules WHERE ${where} ORDER BY id DESC${limit}`, params);
  const more = query.limit !== undefined && rows.length > query.limit;
  return { rows: more ? rows.slice(0, query.limit) : rows, more };
}

/**
 * Applies an edit to a schedule of `orgId` while holding its row lock, so the edit and a tick happen one after the
 * other: `change` gets the schedule as the last tick left it and returns its new state. Null when there is none.
 */
export async function updateSchedule(
  pool: pg.Pool,
  where: { orgId: string; id: string; at: Date },
  change: (current: ScheduleRow) => ScheduleState,
  /** Runs in the edit's transaction before it commits (the audit entry). */
  record?: (client: pg.PoolClient, before: ScheduleRow, after: ScheduleRow) => Promise<void>,
): Promise<ScheduleRow | null> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<ScheduleRow>(`SELECT ${COLUMNS} FROM schedules WHERE id = $1 AND org_id = $2 FOR UPDATE`, [where.id, where.orgId]);
    const current = rows[0];
    if (!current) {
      return null;
    }
    const next = change(current);
    const { rows: updated } = await client.query<ScheduleRow>(
      `UPDATE schedules SET name = $3, cron = $4, timezone = $5, job = $6, paused = $7, next_run_at = $8, updated_at = $9,
              overlap = $10, catch_up = $11, catch_up_window_seconds = $12,
              buffered_run_at = CASE WHEN $7 OR $10 <> 'buffer_one' THEN NULL ELSE buffered_run_at END
        WHERE id = $1 AND org_id = $2
        RETURNING ${COLUMNS}`,
      [
        where.id,
        where.orgId,
        next.name,
        next.cron,
        next.timezone,
        JSON.stringify(next.job),
        next.paused,
        next.nextRunAt,
        where.at,
        next.overlap,
        next.catchUp,
        next.catchUpWindowSeconds,
      ],
    );
    await record?.(client, current, updated[0]!);
    return updated[0]!;
  });
}

/** Deletes a schedule of `orgId` (waiting for a tick in progress); the jobs it made keep their schedule_id. */
export async function deleteSchedule(db: Client, orgId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM schedules WHERE id = $1 AND org_id = $2", [id, orgId]);
  return (rowCount ?? 0) > 0;
}

/**
 * A due schedule the ticker handled: the tick it ran and the job it created, or none when that tick had run already or
 * was skipped because the organization is at a quota (`skipped`: the quota; recorded in its audit log).
 */
export type ScheduleTick = {
  scheduleId: string;
  orgId: string;
  tick: Date | null;
  jobId: string | null;
  nextRunAt: Date | null;
  skipped?: QuotaName;
  /** Ticks its overlap or catch-up policy passed over in this turn. */
  dropped?: number;
};
/** A schedule whose ticks could not be computed (e.g. a zone this runtime no longer knows): its next_run_at is cleared. */
export type ScheduleTickFailure = { scheduleId: string; orgId: string; error: Error };

/**
 * Runs up to `limit` due schedules in one transaction, by Postgres' clock: for each, the runs its overlap and catch-up
 * policies call for (docs/reference/time.md#alerts, planScheduleTurn: by default one job for the latest tick at or before now), each tick
 * recorded in schedule_runs (so a backfill and the ticker never make one tick twice), last_run_at = the last tick
 * that ran, next_run_at = the first tick not yet handled. A buffer_one schedule holding a tick is taken too, to run it
 * once its last run has ended. `full` says more may be due.
 */
export async function runDueSchedules(
  pool: pg.Pool,
  limit = 100,
  /** The QUOTA_* defaults (docs/reference/tenants.md#usage-quotas-and-backpressure): a tick that would take its organization past a quota is skipped, not failed. */
  quotaDefaults: QuotaLimits = NO_QUOTAS,
): Promise<{ ticks: ScheduleTick[]; failures: ScheduleTickFailure[]; full: boolean }> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{
      id: string;
      org_id: string;
      cron: string;
      timezone: string;
      job: JobTemplate;
      overlap: ScheduleOverlap;
      catch_up: ScheduleCatchUp;
      catch_up_window_seconds: number | null;
      last_run_at: Date | null;
      next_run_at: Date | null;
      buffered_run_at: Date | null;
      last_active: boolean;
      now: Date;
    }>(
      `SELECT s.id, s.org_id, s.cron, s.timezone, s.job, s.overlap, s.catch_up, s.catch_up_window_seconds, s.last_run_at,
              s.next_run_at, s.buffered_run_at, now() AS now,
              s.overlap <> 'allow' AND EXISTS (SELECT 1 FROM jobs j WHERE j.id = s.last_job_id AND j.status IN ('pending', 'processing')) AS last_active
         FROM schedules s
        WHERE NOT s.paused AND (s.next_run_at <= now() OR s.buffered_run_at IS NOT NULL)
        ORDER BY s.next_run_at
        LIMIT $1
          FOR UPDATE OF s SKIP LOCKED`,
      [limit],
    );
    const ticks: ScheduleTick[] = [];
    const failures: ScheduleTickFailure[] = [];
    const jobs: NewJob[] = [];
    const turns = new Map<string, { nextRunAt: Date | null; bufferedRunAt: Date | null }>();
    for (const row of rows) {
      let turn: ReturnType<typeof planScheduleTurn>;
      try {
        turn = planScheduleTurn(
          { cron: row.cron, timezone: row.timezone, overlap: row.overlap, catchUp: row.catch_up, catchUpWindowSeconds: row.catch_up_window_seconds },
          { nextRunAt: row.next_run_at, lastRunAt: row.last_run_at, bufferedRunAt: row.buffered_run_at, lastActive: row.last_active },
          row.now,
        );
      } catch (error) {
        failures.push({ scheduleId: row.id, orgId: row.org_id, error: error as Error });
        continue;
      }
      turns.set(row.id, { nextRunAt: turn.nextRunAt, bufferedRunAt: turn.bufferedRunAt });
      if (turn.runs.length === 0) {
        ticks.push({
          scheduleId: row.id,
          orgId: row.org_id,
          tick: null,
          jobId: null,
          nextRunAt: turn.nextRunAt,
          ...(turn.dropped ? { dropped: turn.dropped } : {}),
        });
        continue;
      }
      // A tick that already has its run (a backfill made it) is not made again.
      const claimed = await claimRuns(
        client,
        row.id,
        turn.runs.map((tick) => ({ tick, jobId: newId() })),
      );
      for (const { tick, jobId } of claimed) {
        jobs.push(scheduledJob(row, jobId, row.now));
        ticks.push({ scheduleId: row.id, orgId: row.org_id, tick, jobId, nextRunAt: turn.nextRunAt, ...(turn.dropped ? { dropped: turn.dropped } : {}) });
      }
      if (claimed.length === 0)
        ticks.push({
          scheduleId: row.id,
          orgId: row.org_id,
          tick: null,
          jobId: null,
          nextRunAt: turn.nextRunAt,
          ...(turn.dropped ? { dropped: turn.dropped } : {}),
        });
    }
    // Jobs of organizations under a quota are inserted one by one, each checked under the quota lock and rolled back
    // to its savepoint when refused; the others together, as before.
    const overrides = await findQuotaOverrides(client, [...new Set(jobs.map((j) => j.orgId))]);
    const limitsOf = (orgId: string) => limitsInForce(quotaDefaults, overrides.get(orgId) ?? null);
    await insertJobs(
      client,
      jobs.filter((j) => !hasQuota(limitsOf(j.orgId))),
    );
    for (const job of jobs.filter((j) => hasQuota(limitsOf(j.orgId)))) {
      await client.query("SAVEPOINT quota");
      try {
        await insertJobs(client, [job]);
        await enforceQuotas(client, job.orgId, limitsOf(job.orgId), job.createdAt);
        await client.query("RELEASE SAVEPOINT quota");
      } catch (error) {
        if (!(error instanceof QuotaExceededError)) throw error;
        await client.query("ROLLBACK TO SAVEPOINT quota");
        await client.query("DELETE FROM schedule_runs WHERE schedule_id = $1 AND job_id = $2", [job.scheduleId, job.id]);
        const tick = ticks.find((t) => t.jobId === job.id)!;
        tick.jobId = null;
        tick.skipped = error.quota;
        await writeAuditEntry(client, {
          orgId: job.orgId,
          at: job.createdAt,
          actor: { type: "system", id: null, label: "scheduler" },
          action: "schedule.run_skipped",
          target: { type: "schedule", id: job.scheduleId! },
          request: { ip: null, userAgent: null, requestId: null },
          details: { tick: tick.tick?.toISOString() ?? null, reason: "quota_exceeded", quota: error.quota, limit: error.limit },
        });
      }
    }
    // Per schedule: the last tick that got a job (and that job, which overlap watches), the next tick, the buffer.
    const ran = new Map<string, { tick: Date; jobId: string }>();
    for (const t of ticks) {
      const last = ran.get(t.scheduleId);
      if (t.jobId && t.tick && (!last || t.tick > last.tick)) ran.set(t.scheduleId, { tick: t.tick, jobId: t.jobId });
    }
    const ids = [...turns.keys(), ...failures.map((f) => f.scheduleId)];
    await client.query(
      `UPDATE schedules s SET last_run_at = COALESCE(u.last_run_at, s.last_run_at), last_job_id = COALESCE(u.last_job_id, s.last_job_id),
              next_run_at = u.next_run_at, buffered_run_at = u.buffered_run_at
         FROM unnest($1::uuid[], $2::timestamptz[], $3::uuid[], $4::timestamptz[], $5::timestamptz[]) AS u(id, last_run_at, last_job_id, next_run_at, buffered_run_at)
        WHERE s.id = u.id`,
      [
        ids,
        ids.map((id) => ran.get(id)?.tick ?? null),
        ids.map((id) => ran.get(id)?.jobId ?? null),
        ids.map((id) => turns.get(id)?.nextRunAt ?? null),
        ids.map((id) => turns.get(id)?.bufferedRunAt ?? null),
      ],
    );
    return { ticks, failures, full: rows.length === limit };
  });
}

/** Milliseconds until the earliest unpaused schedule is due by Postgres' clock (≤ 0: due now), or null when none is. */
export async function msUntilNextTick(pool: pg.Pool): Promise<number | null> {
  const { rows } = await pool.query<{ ms: number | null }>(
    "SELECT (extract(epoch FROM min(next_run_at) - now()) * 1000)::float8 AS ms FROM schedules WHERE NOT paused AND next_run_at IS NOT NULL",
  );
  return rows[0]?.ms ?? null;
}

/** Records runs of a schedule's ticks; answers those that had none (the others already have their job). */
export async function claimRuns(
  client: pg.PoolClient,
  scheduleId: string,
  runs: readonly { tick: Date; jobId: string }[],
): Promise<{ tick: Date; jobId: string }[]> {
  if (runs.length === 0) return [];
  const { rows } = await client.query<{ tick: Date; job_id: string }>(
    `INSERT INTO schedule_runs (schedule_id, tick, job_id)
     SELECT $1, u.tick, u.job_id FROM unnest($2::timestamptz[], $3::uuid[]) AS u(tick, job_id)
     ON CONFLICT (schedule_id, tick) DO NOTHING
     RETURNING tick, job_id`,
    [scheduleId, runs.map((r) => r.tick), runs.map((r) => r.jobId)],
  );
  return rows.map((r) => ({ tick: r.tick, jobId: r.job_id })).sort((a, b) => a.tick.getTime() - b.tick.getTime());
}

/** The job a schedule's template makes (a tick's or a backfill's). */
export function scheduledJob(schedule: { id: string; org_id: string; job: JobTemplate }, jobId: string, now: Date): NewJob {
  const job = schedule.job;
  return {
    id: jobId,
    orgId: schedule.org_id,
    type: job.type,
    payloadJson: JSON.stringify(job.payload),
    payload: job.payload,
    maxRetries: job.max_retries,
    priority: job.priority,
    concurrencyKey: job.concurrency_key ?? null,
    concurrencyLimit: job.concurrency_key ? (job.concurrency_limit ?? 1) : null,
    rateLimit: job.rate_limit ?? null,
    timeoutMs: job.timeout_ms ?? null,
    createdAt: now,
    scheduleId: schedule.id,
  };
}
