// ctx.progress and ctx.output (docs/reference/events.md#progress-and-live-results): what handlers report while they run, coalesced before it reaches Postgres.
// A handler may report a thousand times a second; each job's latest progress and its output since the last write wait
// here, and one round every ROUND_MS writes every waiting job's reports in two statements (job-machine/live.ts), so a
// job announces at most 4 progress events a second however often it reports. When the handler returns, its job's
// last reports are written at once (before its outcome, so they are never lost behind its final event).
import {
  OUTPUT_MAX_BYTES,
  OUTPUT_TRUNCATED_MARKER,
  OUTPUT_WRITES_PER_SECOND,
  PROGRESS_EVENTS_PER_SECOND,
  PROGRESS_MESSAGE_MAX_LENGTH,
  type JobProgress,
} from "@conveyor/contracts";
import { appendOutput, recordProgress, storedOutputBytes, type OutputAppend, type ProgressReport } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import type pg from "pg";

/** Time between two rounds: what keeps each job at PROGRESS_EVENTS_PER_SECOND (and its output appends as few). */
export const ROUND_MS = 1000 / Math.min(PROGRESS_EVENTS_PER_SECOND, OUTPUT_WRITES_PER_SECOND);

/** Jobs per progress statement: a round of a thousand running jobs is four statements written side by side. */
const STATEMENT_JOBS = 250;

/** One attempt's reports, as its handler's context offers them. */
export type LiveReporter = {
  progress(fraction: number, message?: string): void;
  output(chunk: string): void;
  /** Writes what still waits; resolves once it is in Postgres (or could not be written, which is logged). */
  flush(): Promise<void>;
};

type JobState = {
  jobId: string;
  fence: string;
  progress?: JobProgress;
  output: string;
  /** Bytes of output the job has stored, once read (a retry continues after what earlier attempts wrote). */
  stored?: number;
  truncated: boolean;
  /** The write of this job's reports under way, if any. */
  writing?: Promise<void>;
  /** When a round last announced this job's progress (Date.now()), if one has. */
  announcedAt?: number;
};

/** Cuts `text` to at most `bytes` bytes of UTF-8 without splitting a character. */
export function cutUtf8(text: string, bytes: number): string {
  const buffer = Buffer.from(text, "utf8");
  if (buffer.length <= bytes) return text;
  let end = Math.max(0, bytes);
  while (end > 0 && (buffer[end]! & 0xc0) === 0x80) end--;
  return buffer.subarray(0, end).toString("utf8");
}

/** Whether a reported fraction can be recorded: a number from 0 to 1. */
export const validFraction = (fraction: unknown): fraction is number =>
  typeof fraction === "number" && Number.isFinite(fraction) && fraction >= 0 && fraction <= 1;

export class LiveRecorder {
  private readonly jobs = new Map<string, JobState>();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;

  constructor(private readonly deps: { pool: pg.Pool; logger: Logger; roundMs?: number }) {}

  /** The reporter of one attempt; `warn` writes a line to the job's log (a handler's bad report, once per attempt). */
  attempt(jobId: string, fence: string, warn: (message: string) => void): LiveReporter {
    let warned = false;
    const state = (): JobState => {
      let job = this.jobs.get(jobId);
      if (!job || job.fence !== fence) {
        job = { jobId, fence, output: "", truncated: false };
        this.jobs.set(jobId, job);
      }
      return job;
    };
    return {
      progress: (fraction, message) => {
        if (!validFraction(fraction)) {
          if (!warned) warn(`ctx.progress was called with ${JSON.stringify(fraction) ?? String(fraction)}, not a number from 0 to 1; ignored.`);
          warned = true;
          return;
        }
        const text = typeof message === "string" ? message.slice(0, PROGRESS_MESSAGE_MAX_LENGTH) : null;
        state().progress = { fraction, message: text, at: new Date().toISOString() };
        this.schedule();
      },
      output: (chunk) => {
        if (typeof chunk !== "string" || chunk.length === 0) return;
        const job = state();
        if (job.truncated) return;
        // Postgres' text cannot hold NUL.
        job.output += chunk.replaceAll("\u0000", "");
        this.schedule();
      },
      flush: async () => {
        const job = this.jobs.get(jobId);
        if (!job || job.fence !== fence) return;
        await job.writing;
        if (job.progress || job.output) await this.finalRound(job);
        this.jobs.delete(jobId);
      },
    };
  }

  /** Stops the rounds (the attempts' own flushes still write). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private lastRound = 0;
  private finals: JobState[] = [];
  private finalWrite: Promise<void> | undefined;

  /**
   * Writes a finishing attempt's last reports with those of every other attempt finishing meanwhile: one statement
   * (and one commit) for all of them, started on the next turn of the event loop, rather than one per job.
   */
  private finalRound(job: JobState): Promise<void> {
    this.finals.push(job);
    this.finalWrite ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      const jobs = this.finals;
      this.finals = [];
      this.finalWrite = undefined;
      return this.write(jobs, true);
    });
    return this.finalWrite;
  }

  /** Starts a round once ROUND_MS have passed since the last one began (at once if they have). */
  private schedule(): void {
    if (this.timer || this.round) return;
    const wait = Math.max(0, this.lastRound + (this.deps.roundMs ?? ROUND_MS) - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.lastRound = Date.now();
      this.round = this.write([...this.jobs.values()].filter((j) => !j.writing && (j.progress || j.output))).finally(() => {
        this.round = undefined;
        if ([...this.jobs.values()].some((j) => j.progress || j.output)) this.schedule();
      });
    }, wait);
    this.timer.unref();
  }

  /**
   * Writes the waiting reports of `jobs` (progress, then output), marking each job as being written meanwhile. An
   * attempt's `last` report that comes within a round of its previous event is stored without an event of its own:
   * the attempt's terminal event carries the job with it, and the job keeps to PROGRESS_EVENTS_PER_SECOND.
   */
  private async write(jobs: JobState[], last = false): Promise<void> {
    if (jobs.length === 0) return;
    const now = Date.now();
    const roundMs = this.deps.roundMs ?? ROUND_MS;
    const progress: ProgressReport[] = [];
    const output: { job: JobState; chunk: string }[] = [];
    for (const job of jobs) {
      if (job.progress) {
        const announce = !last || job.announcedAt === undefined || now - job.announcedAt >= roundMs;
        if (announce) job.announcedAt = now;
        progress.push({ jobId: job.jobId, fence: job.fence, progress: job.progress, announce });
      }
      if (job.output) output.push({ job, chunk: job.output });
      job.progress = undefined;
      job.output = "";
    }
    let done!: () => void;
    const writing = new Promise<void>((resolve) => (done = resolve));
    for (const job of jobs) job.writing = writing;
    try {
      // In statements of at most STATEMENT_JOBS jobs, side by side: each commits (and its events become readable)
      // as soon as it is done, instead of every job's report waiting for the largest statement.
      const chunks: ProgressReport[][] = [];
      for (let i = 0; i < progress.length; i += STATEMENT_JOBS) chunks.push(progress.slice(i, i + STATEMENT_JOBS));
      await Promise.all([
        ...chunks.map((chunk) =>
          recordProgress(this.deps.pool, chunk).catch((error: Error) => {
            this.deps.logger.warn("could not record jobs' progress; the next report will", { jobs: chunk.length, error: error.message });
          }),
        ),
        this.append(output),
      ]);
    } finally {
      for (const job of jobs) job.writing = undefined;
      done();
    }
  }

  private async append(pending: { job: JobState; chunk: string }[]): Promise<void> {
    if (pending.length === 0) return;
    try {
      const unknown = pending.filter((p) => p.job.stored === undefined).map((p) => p.job.jobId);
      if (unknown.length) {
        const stored = await storedOutputBytes(this.deps.pool, unknown);
        for (const { job } of pending) job.stored ??= stored.get(job.jobId) ?? 0;
      }
      const appends: OutputAppend[] = [];
      for (const { job, chunk } of pending) {
        const offset = job.stored!;
        let text = chunk;
        if (offset + Buffer.byteLength(text, "utf8") > OUTPUT_MAX_BYTES) {
          // What fits, then the marker once; later chunks are dropped.
          text = cutUtf8(text, OUTPUT_MAX_BYTES - offset) + OUTPUT_TRUNCATED_MARKER;
          job.truncated = true;
        }
        appends.push({ jobId: job.jobId, fence: job.fence, offset, chunk: text });
        job.stored = offset + Buffer.byteLength(text, "utf8");
      }
      const written = new Set(await appendOutput(this.deps.pool, appends));
      // A job whose append did not land is another attempt's now (or finished): it reads its length again if it writes.
      for (const { job } of pending) if (!written.has(job.jobId)) job.stored = undefined;
    } catch (error) {
      for (const { job } of pending) job.stored = undefined;
      this.deps.logger.warn("could not append jobs' output; it is lost", { jobs: pending.length, error: (error as Error).message });
    }
  }
}

const recorders = new WeakMap<pg.Pool, LiveRecorder>();

/** The one recorder of a worker process' pool: every attempt's reports share its rounds. */
export function liveRecorderFor(deps: { pool: pg.Pool; logger: Logger }): LiveRecorder {
  let recorder = recorders.get(deps.pool);
  if (!recorder) recorders.set(deps.pool, (recorder = new LiveRecorder(deps)));
  return recorder;
}
