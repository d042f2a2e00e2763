// Backfill (docs/reference/time.md#alerts): the runs of a past range of a schedule's ticks, each made once however often the range is
// sent — schedule_runs holds one row per tick that has its job, for the ticker's runs and the backfill's alike.
// Backfilled runs are made now (their jobs are due at once) and ignore overlap: a backfill is an explicit request.
import type pg from "pg";
import { ticksBetween } from "@conveyor/contracts";
import { newId } from "../core/ids";
import { inTransaction } from "../core/transaction";
import { insertJobs } from "../job-machine";
import { enforceQuotas, hasQuota, type QuotaLimits } from "../usage/quotas";
import { claimRuns, scheduledJob, type JobTemplate } from "./schedules";

export type BackfillRun = { tick: Date; jobId: string; created: boolean };

/**
 * Makes the runs of the schedule's ticks in [from, to] that have none yet, in one transaction (a quota refusal,
 * QuotaExceededError, makes none). Null when the schedule is not the organization's; "too_many" past `max` ticks.
 */
export async function backfillSchedule(
  pool: pg.Pool,
  where: { orgId: string; id: string },
  range: { from: Date; to: Date; max: number },
  limits: QuotaLimits,
  /** Runs in the transaction once the runs are made (the audit entry). */
  record?: (tx: pg.PoolClient, runs: BackfillRun[]) => Promise<void>,
): Promise<BackfillRun[] | "too_many" | null> {
  return inTransaction(pool, async (tx) => {
    // FOR SHARE: a delete or an edit waits for the backfill; two backfills do not wait for each other (the runs' key settles them).
    const { rows } = await tx.query<{ id: string; org_id: string; cron: string; timezone: string; job: JobTemplate; now: Date }>(
      "SELECT id, org_id, cron, timezone, job, now() AS now FROM schedules WHERE id = $1 AND org_id = $2 FOR SHARE",
      [where.id, where.orgId],
    );
    const schedule = rows[0];
    if (!schedule) return null;
    const ticks = ticksBetween(schedule, range.from, range.to, range.max);
    if (ticks.length > range.max) return "too_many";
    const claimed = await claimRuns(
      tx,
      schedule.id,
      ticks.map((tick) => ({ tick, jobId: newId() })),
    );
    await insertJobs(
      tx,
      claimed.map((run) => scheduledJob(schedule, run.jobId, schedule.now)),
    );
    if (claimed.length > 0 && hasQuota(limits)) await enforceQuotas(tx, schedule.org_id, limits, schedule.now);
    const made = new Set(claimed.map((run) => run.jobId));
    const { rows: all } = await tx.query<{ tick: Date; job_id: string }>(
      "SELECT tick, job_id FROM schedule_runs WHERE schedule_id = $1 AND tick = ANY($2::timestamptz[]) ORDER BY tick",
      [schedule.id, ticks],
    );
    const runs = all.map((r) => ({ tick: r.tick, jobId: r.job_id, created: made.has(r.job_id) }));
    await record?.(tx, runs);
    return runs;
  });
}

/**
 * Deletes at most `limit` run records of ticks before `before` (retention: JOB_RETENTION_DAYS, when their jobs go
 * too), and answers how many. A backfill of a range that old makes its runs again, as the jobs are gone.
 */
export async function deleteScheduleRunsBefore(db: pg.Pool | pg.PoolClient, options: { before: Date; limit: number }): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM schedule_runs WHERE (schedule_id, tick) IN (SELECT schedule_id, tick FROM schedule_runs WHERE tick < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [options.before, options.limit],
  );
  return rowCount ?? 0;
}
