// Schedules (docs/reference/time.md#time-priority-and-fairness): the API's reads and writes, every one naming the org, and the ticker's turn. The ticker
// takes due schedules with FOR UPDATE SKIP LOCKED and, in the same transaction, creates each one's job and moves
// its next_run_at past now. So two tickers (two leaders overlapping after a lease expiry) cannot make two jobs
// for one tick — the second skips the locked row, or re-reads it after the first committed and finds it no
// longer due — and an edit or delete committed before the tick is what the tick sees (edits lock the row too).
import type pg from "pg";
import { latestTick, nextTick } from "@conveyor/contracts";
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
  created_by AS "createdBy", created_at AS "createdAt", updated_at AS "updatedAt"`;

type Client = pg.Pool | pg.PoolClient;

export async function insertSchedule(db: Client, schedule: Omit<ScheduleRow, "lastRunAt" | "updatedAt">): Promise<ScheduleRow> {
  const { rows } = await db.query<ScheduleRow>(
    `INSERT INTO schedules (id, org_id, name, cron, timezone, job, paused, next_run_at, created_by, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
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
      `UPDATE schedules SET name = $3, cron = $4, timezone = $5, job = $6, paused = $7, next_run_at = $8, updated_at = $9
        WHERE id = $1 AND org_id = $2
        RETURNING ${COLUMNS}`,
      [where.id, where.orgId, next.name, next.cron, next.timezone, JSON.stringify(next.job), next.paused, next.nextRunAt, where.at],
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
export type ScheduleTick = { scheduleId: string; orgId: string; tick: Date | null; jobId: string | null; nextRunAt: Date | null; skipped?: QuotaName };
/** A schedule whose ticks could not be computed (e.g. a zone this runtime no longer knows): its next_run_at is cleared. */
export type ScheduleTickFailure = { scheduleId: string; orgId: string; error: Error };

/**
 * Runs up to `limit` due schedules in one transaction, by Postgres' clock: for each, one job for the latest tick at or
 * before now (after an outage the missed ticks before it do not run), last_run_at = that tick, next_run_at = the first
 * tick after now. `full` says more may be due.
 */
export async function runDueSchedules(
  pool: pg.Pool,
  limit = 100,
  /** The QUOTA_* defaults (docs/reference/tenants.md#usage-quotas-and-backpressure): a tick that would take its organization past a quota is skipped, not failed. */
  quotaDefaults: QuotaLimits = NO_QUOTAS,
): Promise<{ ticks: ScheduleTick[]; failures: ScheduleTickFailure[]; full: boolean }> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: string; org_id: string; cron: string; timezone: string; job: JobTemplate; last_run_at: Date | null; now: Date }>(
      `SELECT id, org_id, cron, timezone, job, last_run_at, now() AS now FROM schedules
        WHERE NOT paused AND next_run_at <= now()
        ORDER BY next_run_at
        LIMIT $1
          FOR UPDATE SKIP LOCKED`,
      [limit],
    );
    const ticks: ScheduleTick[] = [];
    const failures: ScheduleTickFailure[] = [];
    const jobs: NewJob[] = [];
    for (const row of rows) {
      let tick: Date | null;
      let nextRunAt: Date | null;
      try {
        tick = latestTick(row, row.now);
        nextRunAt = nextTick(row, row.now);
      } catch (error) {
        failures.push({ scheduleId: row.id, orgId: row.org_id, error: error as Error });
        continue;
      }
      // A tick at or before the last one already has its job (a clock stepped back, an edit racing a tick).
      const fresh = tick !== null && (row.last_run_at === null || tick > row.last_run_at);
      const jobId = fresh ? newId() : null;
      if (jobId) {
        jobs.push({
          id: jobId,
          orgId: row.org_id,
          type: row.job.type,
          payloadJson: JSON.stringify(row.job.payload),
          payload: row.job.payload,
          maxRetries: row.job.max_retries,
          priority: row.job.priority,
          concurrencyKey: row.job.concurrency_key ?? null,
          concurrencyLimit: row.job.concurrency_key ? (row.job.concurrency_limit ?? 1) : null,
          rateLimit: row.job.rate_limit ?? null,
          timeoutMs: row.job.timeout_ms ?? null,
          createdAt: row.now,
          scheduleId: row.id,
        });
      }
      ticks.push({ scheduleId: row.id, orgId: row.org_id, tick: fresh ? tick : null, jobId, nextRunAt });
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
    await client.query(
      `UPDATE schedules s SET last_run_at = COALESCE(u.last_run_at, s.last_run_at), next_run_at = u.next_run_at
         FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[]) AS u(id, last_run_at, next_run_at)
        WHERE s.id = u.id`,
      [
        [...ticks.map((t) => t.scheduleId), ...failures.map((f) => f.scheduleId)],
        [...ticks.map((t) => t.tick), ...failures.map(() => null)],
        [...ticks.map((t) => t.nextRunAt), ...failures.map(() => null)],
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
