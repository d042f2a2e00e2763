// Retention (docs/reference/lifecycle.md#steering), run by the leader: finished jobs older than JOB_RETENTION_DAYS are deleted with their logs,
// events and artifacts, a small batch per statement. Each batch is sized to take about `batchMs` and followed by a
// pause three times as long, so the deletes use at most a quarter of one connection, come in short bursts that the queue's
// own statements slip between, and never hold a lock or the event readers' horizon for long; a backlog of millions
// still goes at thousands of jobs a second. A partitioned table's task first drops the partitions wholly past the
// cut-off (dropWhole), and its batches delete only from the DEFAULT partition.
import type pg from "pg";
import { deleteFinishedJobs, dropPartitionsBefore, type PartitionedTable } from "@conveyor/db";
import { WakeLoop } from "@conveyor/queue";
import type { Logger } from "@conveyor/logger";
import type { LeaderTask } from "../leadership/leadership";

const DAY_MS = 24 * 60 * 60 * 1000;

export type RetentionOptions = {
  pool: pg.Pool;
  logger: Logger;
  /** JOB_RETENTION_DAYS: finished jobs older than this are deleted (counted from finished_at). */
  days: number;
  /** How often a sweep starts while leading (it also starts at once). Default 60 s. */
  intervalMs?: number;
  /** The duration one delete statement aims at. Default 20 ms. */
  batchMs?: number;
  /** The pause after a batch, as a multiple of the time it took. Default 3. */
  pauseFactor?: number;
  /** Jobs per statement: where it starts, and its bounds. Default 200, 10..5,000. */
  batch?: { initial: number; min: number; max: number };
  /** The time "now" is, for the cut-off. */
  now?: () => Date;
  onDeleted?(count: number): void;
};

export class Retention implements LeaderTask {
  readonly name: string = "retention";
  private readonly loop: WakeLoop;
  private stopping = false;
  private size: number;
  private readonly bounds: { initial: number; min: number; max: number };

  constructor(protected readonly options: RetentionOptions) {
    this.bounds = options.batch ?? { initial: 200, min: 10, max: 5_000 };
    this.size = this.bounds.initial;
    this.loop = new WakeLoop({
      round: async () => void (await this.sweep()),
      everyMs: options.intervalMs ?? 60_000,
      quietMs: 0,
      warn: (error) => options.logger.warn(`${this.name} sweep failed; trying again in the next one: ${error.message}`),
    });
  }

  start(): void {
    if (this.options.days <= 0) return;
    this.stopping = false;
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop.stop();
  }

  /**
   * Deletes every job that finished before now − `days`, batch by batch, until none is left or the task is
   * stopped; answers how many it deleted. With `days` 0 it keeps everything.
   */
  async sweep(): Promise<number> {
    if (this.options.days <= 0) return 0;
    const before = new Date((this.options.now?.() ?? new Date()).getTime() - this.options.days * DAY_MS);
    await this.dropWhole(before);
    let total = 0;
    for (;;) {
      const started = performance.now();
      const deleted = await this.deleteBatch(before, this.size);
      const took = performance.now() - started;
      total += deleted;
      if (deleted) this.options.onDeleted?.(deleted);
      if (deleted < this.size || this.stopping) break;
      this.size = this.resize(took);
      await new Promise((resolve) => setTimeout(resolve, Math.min(took * (this.options.pauseFactor ?? 3), 2_000)));
    }
    if (total) this.options.logger.info(`${this.name}: deleted ${total} ${this.noun} before ${before.toISOString()}`);
    return total;
  }

  /** Deletes at most `limit` of what this task removes, older than `before`; answers how many. */
  protected deleteBatch(before: Date, limit: number): Promise<number> {
    return deleteFinishedJobs(this.options.pool, { before, limit });
  }

  /**
   * For a partitioned table (docs/reference/time.md#partitions-and-retention): drops the partitions whose whole range
   * is before `before`, before the batches delete what is left in its DEFAULT partition. None for jobs (yet).
   */
  protected async dropWhole(before: Date): Promise<void> {
    if (!this.partitioned) return;
    const { dropped, blocked } = await dropPartitionsBefore(this.options.pool, this.partitioned, before);
    if (dropped.length) this.options.logger.info(`${this.name}: dropped partition(s) ${dropped.join(", ")} (all before ${before.toISOString()})`);
    if (blocked)
      this.options.logger.info(`${this.name}: a reader held ${this.partitioned.table} past the lock timeout; dropping its next partition at the next sweep`);
  }

  /** The partitioned table whose whole partitions this task drops; none when it deletes in batches only. */
  protected readonly partitioned: PartitionedTable | null = null;

  /** What the log line says was deleted. */
  protected readonly noun: string = "job(s) finished";

  /** The next batch's size: towards `batchMs` per statement, by at most ×2 or ÷2 at a time. */
  private resize(tookMs: number): number {
    const target = this.options.batchMs ?? 20;
    const factor = Math.min(2, Math.max(0.5, target / Math.max(tookMs, 1)));
    return Math.round(Math.min(this.bounds.max, Math.max(this.bounds.min, this.size * factor)));
  }
}
