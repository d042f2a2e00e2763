// The leader's partition maker (docs/reference/time.md#partitions-and-retention, docs/reference/robustness.md#r58):
// at leader start and every hour, the partitions of the current span and the spans ahead of every time-partitioned
// table (makePartitions in @conveyor/db). An insert never waits for it: a row whose span has no partition yet is
// stored in the table's DEFAULT partition and moved into its partition when this makes it. Being a week (the audit
// log: two months) ahead, an hour's failed round costs nothing; the next one makes what is missing.
import type pg from "pg";
import { AUDIT_LOG_PARTITIONS, makePartitions, WEBHOOK_DELIVERY_PARTITIONS, type PartitionedTable } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import { PeriodicTask } from "./periodic-task";

const HOUR_MS = 60 * 60 * 1000;

export class PartitionMaker extends PeriodicTask {
  readonly name = "partition-maker";
  private readonly tables: readonly PartitionedTable[];

  constructor(private readonly options: { pool: pg.Pool; logger: Logger; intervalMs?: number; tables?: readonly PartitionedTable[]; now?: () => Date }) {
    super(options.logger, options.intervalMs ?? HOUR_MS, "partition maker");
    this.tables = options.tables ?? [AUDIT_LOG_PARTITIONS, WEBHOOK_DELIVERY_PARTITIONS];
  }

  protected round(): Promise<unknown> {
    return this.runOnce();
  }

  /** One round: every table's missing partitions; answers the names made. A table that fails does not stop the others. */
  async runOnce(): Promise<string[]> {
    const made: string[] = [];
    const failures: string[] = [];
    for (const table of this.tables) {
      try {
        made.push(...(await makePartitions(this.options.pool, table, { now: this.options.now?.() })));
      } catch (error) {
        failures.push(`${table.table}: ${(error as Error).message}`);
      }
    }
    if (made.length) this.options.logger.info(`partition maker: made ${made.join(", ")}`);
    if (failures.length) throw new Error(failures.join("; "));
    return made;
  }
}
