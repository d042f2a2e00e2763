// Group commit of the worker protocol's outcome reports (docs/reference/lifecycle.md#your-own-workers): reports that arrive together (a worker at
// concurrency 50 completes many jobs at once) are checked against their leases by one statement, written by one
// writeOutcomes call — one statement, one commit — and their leases dropped by one more, as the built-in workers'
// bookkeeper batches theirs. A report is answered once the batch it joined has committed, so nothing is acknowledged
// that is not stored; one whose lease is not live (lapsed, superseded, ended) changes nothing.
import { dropLeases, liveLeases, writeOutcomes, type LiveLease, type LogRow, type Outcome } from "@conveyor/db";
import type { JobStatus } from "@conveyor/contracts";
import type pg from "pg";

/** Most reports in one batch. */
const BATCH_MAX = 200;

/** A report: the lease it is made under, and the log lines and outcome it records given that live lease. */
export type Report = { orgId: string; jobId: string; token: string; build(lease: LiveLease): { logs: LogRow[]; outcome: Outcome } };

type Pending = Report & { resolve(status: JobStatus | undefined): void; reject(error: unknown): void };

export class OutcomeWriter {
  private queue: Pending[] = [];
  private flushing = false;

  constructor(private readonly pool: pg.Pool) {}

  /** Records `report` with whatever else is waiting; answers the job's new status, or undefined when its lease is not live. */
  write(report: Report): Promise<JobStatus | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ...report, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length) {
        // Reports of the same job go in separate batches (writeOutcomes finds a job's outcome by its first place).
        const batch: Pending[] = [];
        const ids = new Set<string>();
        const rest: Pending[] = [];
        for (const item of this.queue) {
          if (batch.length < BATCH_MAX && !ids.has(item.jobId)) {
            batch.push(item);
            ids.add(item.jobId);
          } else rest.push(item);
        }
        this.queue = rest;
        try {
          const live = await liveLeases(this.pool, batch);
          const built = batch.flatMap((p) => {
            const lease = live.get(`${p.jobId} ${p.token}`);
            return lease ? [{ p, ...p.build(lease) }] : [];
          });
          const applied = await writeOutcomes(
            this.pool,
            built.flatMap((b) => b.logs),
            built.map((b) => b.outcome),
          );
          const ended = built.filter((b) => applied.has(b.outcome.id));
          await dropLeases(
            this.pool,
            ended.map((b) => b.outcome.id),
            ended.map((b) => b.outcome.fence),
          );
          for (const p of batch) p.resolve(applied.get(p.jobId));
        } catch (error) {
          for (const p of batch) p.reject(error);
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
