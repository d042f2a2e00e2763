// The leader's worker reaper (issue 38): a worker that died without a graceful stop (SIGKILL, a lost host) leaves its
// row in the worker registry, shown as gone once its heartbeat is three intervals old; after GONE_KEEP_MS the row is
// deleted, so the Workers view shows a recent crash but not every replica a deployment ever ran. Every minute.
import type pg from "pg";
import { reapGoneWorkers } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import { PeriodicTask } from "./periodic-task";

/** How long a gone worker stays in the registry (and on the Workers view) before it is deleted: 15 minutes. */
export const GONE_KEEP_MS = 15 * 60_000;

export class WorkerReaper extends PeriodicTask {
  readonly name = "worker-reaper";

  constructor(private readonly options: { pool: pg.Pool; logger: Logger; intervalMs?: number; keepMs?: number }) {
    super(options.logger, options.intervalMs ?? 60_000, "the worker reaper");
  }

  protected round(): Promise<unknown> {
    return this.reap();
  }

  /** One round: deletes the rows of workers gone for longer than the keep time; answers how many went. */
  reap(): Promise<number> {
    return reapGoneWorkers(this.options.pool, this.options.keepMs ?? GONE_KEEP_MS);
  }
}
