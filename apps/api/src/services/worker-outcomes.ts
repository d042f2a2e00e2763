// Group commit of the worker protocol's reports (SPEC §26): outcomes and log lines that arrive together (a worker at
// concurrency 50 completes many jobs at once) are written by one writeOutcomes call — one statement, one commit — and
// their leases dropped by one more, as the built-in workers' bookkeeper batches theirs. A report waits for the batch it
// joined to commit before it is answered, so nothing is acknowledged that is not stored.
import { dropLeases, writeOutcomes, type LogRow, type Outcome } from "@conveyor/db";
import type { JobStatus } from "@conveyor/contracts";
import type pg from "pg";

/** Most outcomes in one statement. */
const BATCH_MAX = 200;

type Pending = { logs: LogRow[]; outcome: Outcome | null; resolve(status: JobStatus | undefined): void; reject(error: unknown): void };

export class OutcomeWriter {
  private queue: Pending[] = [];
  private flushing = false;

  constructor(private readonly pool: pg.Pool) {}

  /** Writes `logs` and `outcome` (under its lease token) with whatever else is waiting; answers the job's new status, or undefined when the fence was lost. */
  write(logs: LogRow[], outcome: Outcome | null): Promise<JobStatus | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ logs, outcome, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length) {
        // Outcomes of the same job go in separate batches (writeOutcomes finds a job's outcome by its first place).
        const batch: Pending[] = [];
        const ids = new Set<string>();
        const rest: Pending[] = [];
        for (const item of this.queue) {
          const id = item.outcome?.id;
          if (batch.length < BATCH_MAX && (id === undefined || !ids.has(id))) {
            batch.push(item);
            if (id !== undefined) ids.add(id);
          } else rest.push(item);
        }
        this.queue = rest;
        try {
          const outcomes = batch.flatMap((p) => (p.outcome ? [p.outcome] : []));
          const applied = await writeOutcomes(
            this.pool,
            batch.flatMap((p) => p.logs),
            outcomes,
          );
          const ended = outcomes.filter((o) => applied.has(o.id));
          await dropLeases(
            this.pool,
            ended.map((o) => o.id),
            ended.map((o) => o.fence),
          );
          for (const p of batch) p.resolve(p.outcome ? applied.get(p.outcome.id) : undefined);
        } catch (error) {
          for (const p of batch) p.reject(error);
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
