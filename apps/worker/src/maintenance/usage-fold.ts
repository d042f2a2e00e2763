// The leader's usage fold (docs/reference/tenants.md#usage-quotas-and-backpressure): usage is written into 16 stripes per organization, day and type so concurrent
// transactions do not queue on one row (migration 20261128061720_usage_quotas); once a day is over (two days back, to
// be clear of late writers) its stripes are folded into one row, so GET /usage over 400 days reads one row per day and
// type. Every 10 minutes while leading; the sums never change.
import type pg from "pg";
import { foldUsage } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import { PeriodicTask } from "./periodic-task";

export class UsageFold extends PeriodicTask {
  readonly name = "usage-fold";

  constructor(private readonly options: { pool: pg.Pool; logger: Logger; intervalMs?: number }) {
    super(options.logger, options.intervalMs ?? 600_000, "usage fold");
  }

  protected round(): Promise<unknown> {
    return this.fold();
  }

  /** Folds every finished day's stripes, a batch per statement; answers the rows folded away. */
  async fold(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10);
    let total = 0;
    for (;;) {
      const folded = await foldUsage(this.options.pool, before);
      total += folded;
      if (folded < 50_000 || !this.loop.isActive) break;
    }
    return total;
  }
}
