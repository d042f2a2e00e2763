// The leader's worker reaper (issue 38): a worker that died without a graceful stop (SIGKILL, a lost host) leaves its
// row in the worker registry, shown as gone once its heartbeat is three intervals old; after GONE_KEEP_MS the row is
// deleted, so the Workers view shows a recent crash but not every replica a deployment ever ran. Every minute.
import type pg from "pg";
import { reapGoneWorkers } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import { WakeLoop } from "@conveyor/queue";
import type { LeaderTask } from "./leadership";

/** How long a gone worker stays in the registry (and on the Workers view) before it is deleted: 15 minutes. */
export const GONE_KEEP_MS = 15 * 60_000;

export class WorkerReaper implements LeaderTask {
  readonly name = "worker-reaper";
  private readonly loop: WakeLoop;

  constructor(private readonly options: { pool: pg.Pool; logger: Logger; intervalMs?: number; keepMs?: number }) {
    this.loop = new WakeLoop({
      round: async () => void (await this.reap()),
      everyMs: options.intervalMs ?? 60_000,
      quietMs: 0,
      warn: (error) => options.logger.warn(`the worker reaper failed; trying again in the next round: ${error.message}`),
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One round: deletes the rows of workers gone for longer than the keep time; answers how many went. */
  reap(): Promise<number> {
    return reapGoneWorkers(this.options.pool, this.options.keepMs ?? GONE_KEEP_MS);
  }
}
