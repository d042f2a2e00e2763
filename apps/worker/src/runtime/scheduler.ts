// The ticker: the leader's loop that runs due schedules (SPEC §9). Each round runs every due schedule, a batch per
// transaction (packages/db/src/schedules.ts: the row lock and the next_run_at condition make one job per tick even
// with two leaders), then sleeps until the earliest next_run_at, at most a second — so an edit that makes a schedule
// due sooner is seen within a second too. The jobs go through insertJobs, which queues them and wakes the dispatcher.
import type pg from "pg";
import { msUntilNextTick, runDueSchedules } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import type { LeaderTask } from "./leadership";

export type SchedulerOptions = {
  pool: pg.Pool;
  logger: Logger;
  /** Longest sleep between rounds. Default 1 s. */
  maxSleepMs?: number;
  /** Schedules per transaction. Default 100. */
  batch?: number;
};

export class Scheduler implements LeaderTask {
  readonly name = "scheduler";
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private active = false;
  private lastFailure = 0;

  constructor(private readonly options: SchedulerOptions) {}

  start(): void {
    this.active = true;
    this.wake();
  }

  async stop(): Promise<void> {
    this.active = false;
    clearTimeout(this.timer);
    await this.running;
  }

  private wake(): void {
    if (!this.active || this.running) return;
    const maxSleepMs = this.options.maxSleepMs ?? 1_000;
    this.running = this.round()
      .catch((error: Error) => {
        // Postgres away: the schedules stay due and run (their latest tick) once it is back.
        if (Date.now() - this.lastFailure > 30_000) this.options.logger.warn(`scheduler round failed; retrying: ${error.message}`);
        this.lastFailure = Date.now();
        return maxSleepMs;
      })
      .then((sleepMs) => {
        this.running = null;
        if (this.active) this.timer = setTimeout(() => this.wake(), sleepMs);
      });
  }

  /** Runs what is due; resolves with how long to sleep. */
  private async round(): Promise<number> {
    const maxSleepMs = this.options.maxSleepMs ?? 1_000;
    for (;;) {
      if (!this.active) return maxSleepMs;
      const { ticks, failures, full } = await runDueSchedules(this.options.pool, this.options.batch ?? 100);
      for (const failure of failures) {
        this.options.logger.error("schedule cannot be computed; it will not tick until it is edited", {
          scheduleId: failure.scheduleId,
          orgId: failure.orgId,
          error: failure.error.message,
        });
      }
      for (const tick of ticks) {
        this.options.logger.debug("schedule ticked", { scheduleId: tick.scheduleId, orgId: tick.orgId, jobId: tick.jobId, tick: tick.tick?.toISOString() });
      }
      if (!full) break;
    }
    const untilNext = await msUntilNextTick(this.options.pool);
    // A few ms past the tick, so Postgres' clock has reached it when the round starts.
    return untilNext === null ? maxSleepMs : Math.min(maxSleepMs, Math.max(10, Math.ceil(untilNext) + 5));
  }
}
