// Admission (docs/reference/tenants.md#usage-quotas-and-backpressure): the one place a creation asks "may this organization add these jobs, and through which
// writer?". It owns what decides that, each in its file: backpressure (backpressure.ts: the due backlog, and commit
// latency — commit-latency.ts, fed by the shared writer's commits), which answers 429 `overloaded` for the
// organizations being shed; then the quotas (quotas.ts: the limits in force, the 429 `quota_exceeded`), whose writer
// pays from this process's quota block far from a limit (quota-blocks.ts) and enforces the limits in the insert's
// transaction near one. It also makes the shared group-commit writer (../job-writer.ts), so that every insert's commit
// is reported here. It does not check a job's input (job-input.ts) nor write a job itself: what it answers is a writer.
import type { AppDeps } from "../../../context";
import type { Debounced, IdempotentInsert, NewJob, Refused } from "@conveyor/db";
import type { JobStatus } from "@conveyor/contracts";
import { JobWriter, type GraphPrelude, type JobInserter } from "../job-writer";
import { Backpressure } from "./backpressure";
import { QuotaBook } from "./quotas";

export class Admission {
  /** The shared group-commit writer: every job insert goes through it, and reports its commit latency here. */
  readonly writer: JobWriter;
  private readonly backpressure: Backpressure;
  private readonly quotas: QuotaBook;

  constructor(deps: Pick<AppDeps, "config" | "db" | "logger">) {
    this.backpressure = new Backpressure(deps);
    this.quotas = new QuotaBook(deps);
    this.writer = new JobWriter({ pool: deps.db.pool, onCommitted: (ms) => this.backpressure.recordCommit(ms) });
  }

  /**
   * What job creation calls once its input is valid: backpressure first (a shed organization gets 429 `overloaded`),
   * then the writer its quotas call for. `at`: the jobs' creation time (their UTC day and month); `count`: how many
   * jobs the creation adds (a batch's length), counted against the backlog until a read sees them. The writer
   * answered tells backpressure how its one write ended.
   */
  async admit(orgId: string, at: Date, count = 1): Promise<JobInserter> {
    this.backpressure.refuseIfShed(orgId, count);
    try {
      const writer = await this.quotas.writerFor(orgId, this.writer, at);
      return this.backpressure.counts ? new CountedWriter(writer, this.backpressure, orgId, count) : writer;
    } catch (error) {
      this.backpressure.forget(orgId, count);
      throw error;
    }
  }

  /** The organization's quotas in force (GET /quotas shows them), cached for QUOTA_CACHE_MS. */
  limitsFor(orgId: string): ReturnType<QuotaBook["limitsFor"]> {
    return this.quotas.limitsFor(orgId);
  }

  /** The API is stopping: waits for a backlog read in progress, then gives this process's quota blocks back. */
  async close(): Promise<void> {
    await this.backpressure.settle();
    await this.quotas.close();
  }
}

/** An admitted creation's writer: its write, under way and once ended, moves the admitted jobs on in backpressure's count. */
class CountedWriter implements JobInserter {
  constructor(
    private readonly inner: JobInserter,
    private readonly backpressure: Backpressure,
    private readonly orgId: string,
    private readonly count: number,
  ) {}

  insert(jobs: NewJob[]): Promise<Refused> {
    return this.ended(jobs, () => this.inner.insert(jobs));
  }

  insertIdempotently(job: NewJob, idempotency: { key: string; requestHash: Buffer; ttlMs: number }): Promise<IdempotentInsert> {
    return this.ended([job], () => this.inner.insertIdempotently(job, idempotency));
  }

  insertGraph(jobs: NewJob[], before?: GraphPrelude): Promise<JobStatus[]> {
    return this.ended(jobs, () => this.inner.insertGraph(jobs, before));
  }

  debounce(job: NewJob & { debounceKey: string }, debounceMs: number): Promise<Debounced> {
    return this.ended([job], () => this.inner.debounce(job, debounceMs));
  }

  private ended<T>(jobs: readonly NewJob[], write: () => Promise<T>): Promise<T> {
    const flight = this.backpressure.writing(
      this.orgId,
      jobs.map((j) => j.id),
      this.count,
    );
    return new Promise<T>((resolve) => resolve(write())).then(
      (result) => {
        this.backpressure.wrote(flight);
        return result;
      },
      (error: unknown) => {
        this.backpressure.forget(this.orgId, this.count, flight);
        throw error;
      },
    );
  }
}
