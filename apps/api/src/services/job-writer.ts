// Group commit for job inserts. Requests arriving while an insert is in flight are written together in the
// next multi-row INSERT, so a burst of POST /jobs costs a few statements instead of one per request. A
// request is answered once its rows are committed. Nothing goes to Redis: the insert puts each job in the
// dispatcher's queue and wakes the dispatcher (a worker), which hands it to BullMQ when it is due.
import type pg from "pg";
import { insertJobIdempotently, insertJobs, type IdempotentInsert, type NewJob } from "@conveyor/db";

type Entry = { jobs: NewJob[]; resolve(): void; reject(error: unknown): void };

export type JobWriterOptions = {
  pool: pg.Pool;
  /** Statements in flight at once. Default 4. */
  maxInFlight?: number;
  /** Rows per statement (entries are never split). Default 2000. */
  maxRows?: number;
};

export class JobWriter {
  private readonly waiting: Entry[] = [];
  private inFlight = 0;
  private readonly maxInFlight: number;
  private readonly maxRows: number;

  constructor(private readonly options: JobWriterOptions) {
    this.maxInFlight = options.maxInFlight ?? 4;
    this.maxRows = options.maxRows ?? 2000;
  }

  /** Resolves once `jobs` are committed to Postgres. */
  insert(jobs: NewJob[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ jobs, resolve, reject });
      // Let the requests of this turn of the event loop join the batch.
      if (this.inFlight < this.maxInFlight) setImmediate(() => this.flush());
    });
  }

  /**
   * Inserts `job` unless the org used `key` within its lifetime (then the job that key made is returned); of
   * concurrent requests with one key exactly one creates a job.
   */
  insertIdempotently(job: NewJob, idempotency: { key: string; requestHash: Buffer; ttlMs: number }): Promise<IdempotentInsert> {
    return insertJobIdempotently(this.options.pool, job, idempotency.key, idempotency.requestHash, idempotency.ttlMs);
  }

  private flush(): void {
    if (this.inFlight >= this.maxInFlight || this.waiting.length === 0) return;
    const batch: Entry[] = [];
    let rows = 0;
    while (this.waiting.length && (batch.length === 0 || rows + this.waiting[0]!.jobs.length <= this.maxRows)) {
      const entry = this.waiting.shift()!;
      batch.push(entry);
      rows += entry.jobs.length;
    }
    this.inFlight++;
    void this.write(batch).finally(() => {
      this.inFlight--;
      this.flush();
    });
  }

  private async write(batch: Entry[]): Promise<void> {
    try {
      await insertJobs(
        this.options.pool,
        batch.flatMap((e) => e.jobs),
      );
      for (const entry of batch) entry.resolve();
    } catch (error) {
      if (batch.length === 1) return batch[0]!.reject(error);
      // One bad entry must not fail its neighbours: write them one by one.
      await Promise.all(batch.map((entry) => this.write([entry])));
    }
  }
}
