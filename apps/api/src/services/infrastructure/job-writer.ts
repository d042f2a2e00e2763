// Group commit for job inserts. Requests arriving while an insert is in flight are written together in the
// next multi-row INSERT, so a burst of POST /jobs costs a few statements instead of one per request. A
// request is answered once its rows are committed. Nothing goes to Redis: the insert puts each job in the
// dispatcher's queue and wakes the dispatcher (a worker), which hands it to BullMQ when it is due.
import type pg from "pg";
import type { JobStatus } from "@conveyor/contracts";
import {
  debounceJob,
  inTransaction,
  insertJobIdempotently,
  insertJobs,
  jobStatuses,
  type Debounced,
  type IdempotentInsert,
  type NewJob,
  type Refused,
} from "@conveyor/db";

/** What a graph's transaction writes before its jobs (JobWriter.insertGraph). */
export type GraphPrelude = (tx: pg.PoolClient) => Promise<void>;

/**
 * A check an organization's creations must pass in their transaction (its quotas), keyed by the organization: SQL sent
 * in one message with the COMMIT (answering the milliseconds it waited for a lock, in its one column), and what its
 * failure means (null: not a refusal).
 */
export type WriterGuard = { orgId: string; sql: string; refusal(error: unknown): Error | null };

type Entry = { jobs: NewJob[]; guard?: WriterGuard; resolve(refused: Refused): void; reject(error: unknown): void };

/** The dedupe keys of an entry's jobs, as `org key` strings: two rows with one key cannot share a statement. */
const dedupeKeys = (entry: Entry) => entry.jobs.flatMap((job) => (job.dedupe ? [`${job.orgId} ${job.dedupe.key}`] : []));

/** What job creation writes through: the shared writer, or one that enforces an organization's quotas (admission/). */
export type JobInserter = Pick<JobWriter, "insert" | "insertIdempotently" | "insertGraph" | "debounce">;

export type JobWriterOptions = {
  pool: pg.Pool;
  /** Statements in flight at once. Default 4. */
  maxInFlight?: number;
  /** Rows per statement (entries are never split). Default 2000. */
  maxRows?: number;
  /** Told each committed write's milliseconds from sending it to its commit (backpressure on commit latency). */
  onCommitted?: (ms: number) => void;
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

  /**
   * Resolves once `jobs` are committed to Postgres, with the ids of those a dedupe key refused (not inserted). Jobs of
   * one call must not share a dedupe key. With a `guard` (an organization's quotas), the statement runs in a
   * transaction that runs each guard of its entries after the insert, with the COMMIT, organization by organization in
   * id order (so two statements never wait for each other's locks in a cycle); a guard that fails fails the statement,
   * and its entries are then written one by one, so only the entry past the quota gets the error.
   */
  insert(jobs: NewJob[], guard?: WriterGuard): Promise<Refused> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ jobs, guard, resolve, reject });
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

  /**
   * Inserts jobs with dependencies in a transaction of their own (never grouped with other requests); answers each
   * job's status as that transaction left it (a dispatcher may move them on once it commits). `before` writes first in
   * that transaction what the jobs may depend on and must commit with them (a batch's waitpoints).
   */
  insertGraph(jobs: NewJob[], before?: GraphPrelude): Promise<JobStatus[]> {
    return inTransaction(this.options.pool, async (tx) => {
      await before?.(tx);
      await insertJobs(tx, jobs);
      return jobStatuses(
        tx,
        jobs.map((j) => j.id),
      );
    });
  }

  /** Creates a debounced job or replaces the waiting one holding its key (job-machine/debounce.ts). */
  debounce(job: NewJob & { debounceKey: string }, debounceMs: number): Promise<Debounced> {
    return debounceJob(this.options.pool, job, debounceMs);
  }

  private flush(): void {
    if (this.inFlight >= this.maxInFlight || this.waiting.length === 0) return;
    const batch: Entry[] = [];
    const keys = new Set<string>();
    let rows = 0;
    for (let i = 0; i < this.waiting.length && rows < this.maxRows;) {
      const entry = this.waiting[i]!;
      const entryKeys = dedupeKeys(entry);
      if (batch.length && rows + entry.jobs.length > this.maxRows) break;
      // An entry whose dedupe key is already in this statement waits for the next one, keeping its turn.
      if (entryKeys.some((key) => keys.has(key))) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      batch.push(entry);
      rows += entry.jobs.length;
      for (const key of entryKeys) keys.add(key);
    }
    this.inFlight++;
    void this.write(batch).finally(() => {
      this.inFlight--;
      this.flush();
    });
  }

  private async write(batch: Entry[]): Promise<void> {
    try {
      const started = performance.now();
      // Waiting for an organization's quota lock is not the database's latency: left out of what is reported.
      let waited = 0;
      const rows = batch.flatMap((e) => e.jobs);
      const guards = [...new Map(batch.flatMap((e) => (e.guard ? [[e.guard.orgId, e.guard] as const] : []))).values()].sort((a, b) =>
        a.orgId < b.orgId ? -1 : 1,
      );
      const commit = async (tx: pg.PoolClient) => {
        const results = (await tx.query(`${guards.map((g) => g.sql).join("; ")}; COMMIT`)) as unknown as pg.QueryResult<{ waited_ms: number }>[];
        for (const result of results) waited += Number(result.rows?.[0]?.waited_ms ?? 0);
      };
      const refused = guards.length
        ? await inTransaction(this.options.pool, (tx) => insertJobs(tx, rows), { commit }).catch((error: unknown) => {
            throw (guards.length === 1 && guards[0]!.refusal(error)) || error;
          })
        : await insertJobs(this.options.pool, rows);
      this.options.onCommitted?.(performance.now() - started - waited);
      for (const entry of batch) entry.resolve(new Map(entry.jobs.flatMap((job) => (refused.has(job.id) ? [[job.id, refused.get(job.id)!]] : []))));
    } catch (error) {
      if (batch.length === 1) return batch[0]!.reject(error);
      // One bad entry must not fail its neighbours: write them one by one.
      await Promise.all(batch.map((entry) => this.write([entry])));
    }
  }
}
