// The ticker: the leader's loop that runs due schedules (docs/reference/time.md#time-priority-and-fairness). Each round runs every due schedule, a batch per
// transaction (packages/db/src/schedules/schedules.ts: the row lock and the next_run_at condition make one job per tick even
// with two leaders), then sleeps until the earliest next_run_at, at most a second — so an edit that makes a schedule
// due sooner is seen within a second too. The jobs go through insertJobs, which queues them and wakes the dispatcher.
import type pg from "pg";
import { msUntilNextTick, NO_QUOTAS, runDueSchedules, type QuotaLimits } from "@conveyor/db";
import { WakeLoop } from "@conveyor/queue";
import type { Logger } from "@conveyor/logger";
import type { LeaderTask } from "../leadership/leadership";

export type SchedulerOptions = {
  pool: pg.Pool;
  logger: Logger;
  /** Longest sleep between rounds. Default 1 s. */
  maxSleepMs?: number;
  /** Schedules per transaction. Default 100. */
  batch?: number;
  /** The QUOTA_* defaults: a tick past its organization's quota is skipped and recorded (docs/reference/tenants.md#usage-quotas-and-backpressure). Default: none. */
  quotas?: QuotaLimits;
};

export class Scheduler implements LeaderTask {
  readonly name = "scheduler";
  private readonly loop: WakeLoop;

  constructor(private readonly options: SchedulerOptions) {
    this.loop = new WakeLoop({
      round: () => this.round(),
      retryMs: options.maxSleepMs ?? 1_000,
      // Postgres away: the schedules stay due and run (their latest tick) once it is back.
      warn: (error) => options.logger.warn(`scheduler round failed; retrying: ${error.message}`),
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Runs what is due; resolves with how long to sleep. */
  private async round(): Promise<number> {
    const maxSleepMs = this.options.maxSleepMs ?? 1_000;
    for (;;) {
      if (!this.loop.isActive) return maxSleepMs;
      const { ticks, failures, full } = await runDueSchedules(this.options.pool, this.options.batch ?? 100, this.options.quotas ?? NO_QUOTAS);
      for (const failure of failures) {
        this.options.logger.error("schedule cannot be computed; it will not tick until it is edited", {
          scheduleId: failure.scheduleId,
          orgId: failure.orgId,
          error: failure.error.message,
        });
      }
      for (const tick of ticks) {
        if (tick.skipped)
          this.options.logger.warn("schedule tick skipped: its organization is at a quota", {
            scheduleId: tick.scheduleId,
            orgId: tick.orgId,
            quota: tick.skipped,
          });
        this.options.logger.debug("schedule ticked", { scheduleId: tick.scheduleId, orgId: tick.orgId, jobId: tick.jobId, tick: tick.tick?.toISOString() });
      }
      if (!full) break;
    }
    const untilNext = await msUntilNextTick(this.options.pool);
    // A few ms past the tick, so Postgres' clock has reached it when the round starts.
    return untilNext === null ? maxSleepMs : Math.min(maxSleepMs, Math.max(10, Math.ceil(untilNext) + 5));
  }
}
