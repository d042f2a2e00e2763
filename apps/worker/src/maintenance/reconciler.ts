// Gives back to Redis the live jobs it should hold and does not: jobs the dispatcher handed over and a Redis
// restart without persistence or a FLUSHALL wiped, running jobs whose worker's hand-over vanished with them.
// Postgres decides what must run; Redis is refilled from it.
//
// - One reconciler at a time across all workers (a Redis lock), and adding a job id that is already queued
//   is a no-op in BullMQ, so two reconcilers never queue a job twice.
// - A sentinel key tells a wiped Redis apart from a healthy one: when it is missing, every live job is
//   checked at once; otherwise a bounded slice of old-enough jobs is checked per cycle.
// - Done, failed and cancelled jobs are never re-enqueued, and a stray delivery of one is skipped by the claim.
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { liveJobsPage, type LiveJob, type LiveJobCursor } from "@conveyor/db";
import { WakeLoop } from "@conveyor/queue";
import type { Logger } from "@conveyor/logger";
import type { JobQueues, RedisClient } from "@conveyor/queue";
import { restoreMissing } from "../dispatch/redis-repair";

export type ReconcilerOptions = {
  pool: pg.Pool;
  redis: RedisClient;
  queues: JobQueues;
  prefix: string;
  logger: Logger;
  intervalMs: number;
  /** Jobs untouched for less than this are left alone by the incremental sweep (they may be mid-enqueue). */
  graceMs: number;
  /** Jobs checked per incremental cycle. Default 5000. */
  sliceSize?: number;
  onReenqueued?(count: number): void;
};

export type ReconcileReport = { ran: boolean; fullSweep: boolean; checked: number; reenqueued: number };

const PAGE = 500;
const RELEASE_LOCK = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

export class Reconciler {
  private readonly loop: WakeLoop;
  private first: NodeJS.Timeout | undefined;
  private cursor: LiveJobCursor | null = null;
  private readonly lockKey: string;
  private readonly sentinelKey: string;

  constructor(private readonly options: ReconcilerOptions) {
    this.lockKey = `${options.prefix}:reconciler:lock`;
    this.sentinelKey = `${options.prefix}:reconciler:sentinel`;
    this.loop = new WakeLoop({
      round: async () => void (await this.runOnce()),
      everyMs: options.intervalMs,
      quietMs: 0,
      warn: (error) => options.logger.warn("reconciler cycle failed; will try again", { error: error.message }),
    });
  }

  /** Starts cycling: the first cycle soon after start, then one every `intervalMs`. */
  start(): void {
    this.first = setTimeout(() => this.loop.start(), Math.min(1_000, this.options.intervalMs));
  }

  async stop(): Promise<void> {
    clearTimeout(this.first);
    await this.loop.stop();
  }

  /** One cycle: skipped (ran false) when another reconciler holds the lock. */
  async runOnce(): Promise<ReconcileReport> {
    const token = randomUUID();
    const locked = await this.options.redis.set(this.lockKey, token, "PX", Math.max(60_000, this.options.intervalMs * 3), "NX");
    if (locked !== "OK") return { ran: false, fullSweep: false, checked: 0, reenqueued: 0 };
    try {
      const fullSweep = (await this.options.redis.exists(this.sentinelKey)) === 0;
      const report = fullSweep ? await this.sweepAll() : await this.sweepSlice();
      if (fullSweep) await this.options.redis.set(this.sentinelKey, new Date().toISOString());
      if (report.reenqueued > 0) {
        this.options.logger.info(
          `reconciler re-enqueued ${report.reenqueued} job(s) that Redis did not hold (${fullSweep ? "full sweep after Redis lost its data" : "routine check"})`,
        );
        this.options.onReenqueued?.(report.reenqueued);
      }
      return { ran: true, fullSweep, ...report };
    } finally {
      await this.options.redis.eval(RELEASE_LOCK, 1, this.lockKey, token).catch(() => {});
    }
  }

  /** Every live job, whatever its age: RedisClient has lost its data. */
  private async sweepAll(): Promise<{ checked: number; reenqueued: number }> {
    let after: LiveJobCursor | null = null;
    let checked = 0;
    let reenqueued = 0;
    for (;;) {
      const page = await liveJobsPage(this.options.pool, { after, olderThan: null, limit: PAGE });
      if (page.length === 0) break;
      checked += page.length;
      reenqueued += await this.restore(page);
      after = { updatedAt: page[page.length - 1]!.updatedAt, id: page[page.length - 1]!.id };
    }
    this.cursor = null;
    return { checked, reenqueued };
  }

  /** The next slice of jobs older than the grace period, wrapping around at the end. */
  private async sweepSlice(): Promise<{ checked: number; reenqueued: number }> {
    const olderThan = new Date(Date.now() - this.options.graceMs);
    const budget = this.options.sliceSize ?? 5_000;
    let checked = 0;
    let reenqueued = 0;
    while (checked < budget) {
      const page = await liveJobsPage(this.options.pool, { after: this.cursor, olderThan, limit: Math.min(PAGE, budget - checked) });
      if (page.length === 0) {
        this.cursor = null;
        break;
      }
      checked += page.length;
      reenqueued += await this.restore(page);
      this.cursor = { updatedAt: page[page.length - 1]!.updatedAt, id: page[page.length - 1]!.id };
    }
    return { checked, reenqueued };
  }

  /** Restores the handed-over jobs of `page` that Redis does not hold (Postgres-waiting jobs are not Redis' to hold). */
  private restore(page: LiveJob[]): Promise<number> {
    return restoreMissing(
      this.options,
      page.filter((job) => job.dispatched),
    );
  }
}
