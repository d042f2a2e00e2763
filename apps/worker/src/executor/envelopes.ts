// The worker's side of envelopes (docs/reference/lifecycle.md#envelopes): one BullMQ job carries the ids of many jobs of one type. Per served type,
// an EnvelopeWorker fetches envelopes from BullMQ only while it has a free slot (slots count jobs, not envelopes),
// claims an envelope's jobs in one statement — as many as it has slots for; the claim is the fence, so a cancelled,
// finished or duplicate job is simply not started — runs them, and completes the envelope in BullMQ once every job it
// started has its outcome recorded. Its lock is kept while that takes; a worker that dies leaves the envelope to
// BullMQ's stalled check, which gives it to another worker, whose claim takes the attempts over. On shutdown the jobs
// it has not started go back in line in one statement.
import { Worker, type Job } from "bullmq";
import { queueName } from "@conveyor/contracts";
import { returnToLine, type ClaimedJob, type ClaimWait } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import type { EnvelopeData, RedisClient } from "@conveyor/queue";
import type { AttemptRunner } from "./attempt";
import type { Bookkeeper } from "./bookkeeper";

/** A count of free job slots that envelopes wait on in arrival order. */
export class Slots {
  private free: number;
  private closed = false;
  private readonly waiters: (() => void)[] = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  get available(): number {
    return this.free;
  }

  /** Waits for at least one free slot, then takes up to `wanted`; answers how many were taken (0 once closed). */
  async take(wanted: number): Promise<number> {
    while (!this.closed && (this.free === 0 || this.waiters.length > 0)) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
      if (this.free > 0) break;
    }
    if (this.closed) return 0;
    const taken = Math.min(wanted, this.free);
    this.free -= taken;
    return taken;
  }

  give(count = 1): void {
    this.free += count;
    while (this.free > 0 && this.waiters.length) this.waiters.shift()!();
  }

  /** Wakes every waiter (shutdown): they take nothing, and nothing more is taken. */
  close(): void {
    this.closed = true;
    while (this.waiters.length) this.waiters.shift()!();
  }
}

export type EnvelopeWorkerOptions = {
  type: string;
  redis: RedisClient;
  prefix: string;
  /** Jobs run at once (WORKER_CONCURRENCY). */
  concurrency: number;
  lockMs: number;
  workerName: string;
  /**
   * This worker's id in the worker registry: every attempt's fence begins with it (`<holder>:<type>:<n>`), which names
   * the worker as the job's holder in Postgres — no other delivery takes the job over while it lives (docs/reference/lifecycle.md#storage-and-leases).
   */
  holder: string;
  bookkeeper: Bookkeeper;
  pool: import("pg").Pool;
  logger: Logger;
  runAttempt: AttemptRunner;
  onSkipped?(): void;
};

type Active = { token: string; unclaimed: string[] };

export class EnvelopeWorker {
  private readonly bull: Worker<EnvelopeData>;
  private readonly slots: Slots;
  /** Envelopes delivered to this worker and not completed, by BullMQ job id. */
  private readonly active = new Map<string, Active>();
  private readonly runs = new Set<Promise<void>>();
  private fetching: Promise<void> | undefined;
  private lockTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private sequence = 0;
  /** Jobs whose handlers are running now. */
  running = 0;
  /** Their ids (the worker registry's heartbeat reads them; nothing on the hot path does). */
  readonly runningIds = new Set<string>();

  constructor(private readonly options: EnvelopeWorkerOptions) {
    this.slots = new Slots(options.concurrency);
    // No processor: envelopes are fetched by hand (fetchLoop), only while a slot is free.
    this.bull = new Worker<EnvelopeData>(queueName(options.type), null, {
      connection: options.redis,
      prefix: options.prefix,
      lockDuration: options.lockMs,
      stalledInterval: options.lockMs,
      // Lost attempts are counted in Postgres (interruptions), which fails a job that keeps crashing workers.
      maxStalledCount: 1_000,
      name: options.workerName,
      // Idle workers wait on BullMQ's marker this long per call; a new envelope wakes them at once.
      drainDelay: 5,
    });
    this.bull.on("error", (error) => options.logger.warn(`queue ${options.type}: ${error.message}`));
  }

  async start(): Promise<void> {
    await this.bull.waitUntilReady();
    void this.bull.startStalledCheckTimer();
    this.lockTimer = setInterval(() => void this.extendLocks(), Math.max(500, Math.floor(this.options.lockMs / 2)));
    this.lockTimer.unref();
    this.fetching = this.fetchLoop();
  }

  /** Jobs claimed and running or waiting for their outcome, in all envelopes. */
  get envelopes(): number {
    return this.active.size;
  }

  private async fetchLoop(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      // One envelope at a time waits for slots: fetching more while one waits would only hold jobs other workers could run.
      if (this.slots.available === 0 || this.claimPending()) {
        await this.slotFreed();
        continue;
      }
      const token = `${this.options.holder}:${this.options.type}:${this.sequence++}`;
      let envelope: Job<EnvelopeData> | undefined;
      try {
        envelope = await this.bull.getNextJob(token, { block: true });
        failures = 0;
      } catch (error) {
        if (this.stopping) break;
        if (failures++ % 50 === 0) this.options.logger.warn(`cannot fetch envelopes of ${this.options.type} yet: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 20 * failures)));
        continue;
      }
      if (!envelope) continue;
      const run = this.runEnvelope(envelope, token).finally(() => this.runs.delete(run));
      this.runs.add(run);
    }
  }

  /** Whether a delivered envelope still has jobs waiting for slots. */
  private claimPending(): boolean {
    for (const active of this.active.values()) if (active.unclaimed.length > 0) return true;
    return false;
  }

  /**
   * Resolves when a slot frees or an envelope finishes claiming (checked again by the loop), or after 50 ms at most.
   * The loop waits here once per freed slot under load, so the 50 ms fallback is one timer re-armed each time
   * (refresh), not a new timer per wait: thousands of stale timers a second were firing for nothing.
   */
  private slotFreed(): Promise<void> {
    return new Promise((resolve) => {
      this.wakeFetch = resolve;
      if (this.wakeTimer) this.wakeTimer.refresh();
      else {
        this.wakeTimer = setTimeout(() => this.wake(), 50);
        this.wakeTimer.unref();
      }
    });
  }

  private wakeFetch: (() => void) | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;

  private wake(): void {
    const wake = this.wakeFetch;
    this.wakeFetch = undefined;
    wake?.();
  }

  private async runEnvelope(envelope: Job<EnvelopeData>, token: string): Promise<void> {
    const ids = Array.isArray(envelope.data?.ids) ? envelope.data.ids.filter((id) => typeof id === "string") : [];
    const active: Active = { token, unclaimed: [...ids] };
    this.active.set(envelope.id!, active);
    const settled: Promise<unknown>[] = [];
    try {
      while (active.unclaimed.length && !this.stopping) {
        const taken = await this.slots.take(active.unclaimed.length);
        if (this.stopping || taken === 0) {
          this.slots.give(taken);
          break;
        }
        const batch = active.unclaimed.splice(0, taken);
        let claims: (ClaimedJob | ClaimWait | null)[];
        try {
          claims = await this.options.bookkeeper.claimAll(batch, token);
        } catch (error) {
          // Not claimed (the bookkeeper retries while Postgres is away; this is anything else): back in line.
          this.slots.give(taken);
          active.unclaimed.unshift(...batch);
          throw error;
        }
        claims.forEach((claim, i) => {
          if (claim === null) {
            // Finished, cancelled, unknown, back in line, or claimed by a newer delivery: nothing to start.
            this.slots.give();
            this.options.onSkipped?.();
            this.options.logger.debug("skipping a job that is finished, cancelled or unknown in Postgres", { jobId: batch[i] });
          } else settled.push(this.runJob(claim, token));
        });
        this.wake();
      }
    } catch (error) {
      this.options.logger.warn(`an envelope of ${this.options.type} could not be claimed; its jobs go back in line: ${(error as Error).message}`);
    }
    try {
      await Promise.all(settled);
      // Shutdown, or a claim that failed: the jobs not started go back in line now (start()'s release covers the rest).
      if (active.unclaimed.length) await returnToLine(this.options.pool, active.unclaimed.splice(0));
      await envelope.moveToCompleted(null, token, false);
    } catch (error) {
      // The envelope's lock was lost (it stalled and went to another worker, or Redis lost it): Postgres decides.
      this.options.logger.debug(`could not complete an envelope of ${this.options.type}: ${(error as Error).message}`);
    } finally {
      this.active.delete(envelope.id!);
      this.wake();
    }
  }

  /** Runs one claimed job in the slot taken for it; resolves when its outcome is recorded. */
  private async runJob(claim: ClaimedJob | ClaimWait, fence: string): Promise<void> {
    this.running++;
    this.runningIds.add(claim.id);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.running--;
      this.runningIds.delete(claim.id);
      this.slots.give();
      this.wake();
    };
    try {
      // Only a claim that waits for a rate limit's window goes through whenFree (no promise of its own per job else).
      const claimed = "retryAt" in claim ? await this.whenFree(claim, fence) : claim;
      if (!claimed) return;
      const { settled } = await this.options.runAttempt(claimed, fence);
      release();
      await settled;
    } finally {
      release();
    }
  }

  /** A rate limit's window frees within a moment (start.ts): wait for it and claim again, rather than go back in line. */
  private async whenFree(claim: ClaimedJob | ClaimWait, fence: string): Promise<ClaimedJob | null> {
    while ("retryAt" in claim) {
      const { retryAt } = claim;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, retryAt.getTime() - Date.now())));
      const [again] = await this.options.bookkeeper.claimAll([claim.id], fence);
      if (!again) return null;
      claim = again;
    }
    return claim;
  }

  private async extendLocks(): Promise<void> {
    if (this.active.size === 0) return;
    const entries = [...this.active];
    await this.bull
      .extendJobLocks(
        entries.map(([id]) => id),
        entries.map(([, a]) => a.token),
        this.options.lockMs,
      )
      .catch((error: Error) => this.options.logger.warn(`could not extend the locks of ${this.options.type}'s envelopes: ${error.message}`));
  }

  /** Stops fetching; the jobs of delivered envelopes not started yet go back in line, in one statement. */
  async stopFetching(): Promise<void> {
    this.stopping = true;
    this.slots.close();
    this.wake();
    const unstarted = [...this.active.values()].flatMap((a) => a.unclaimed.splice(0));
    if (unstarted.length) await returnToLine(this.options.pool, unstarted);
  }

  /** Resolves when every envelope delivered to this worker has completed (its jobs' outcomes recorded). */
  async drained(): Promise<void> {
    while (this.runs.size) await Promise.allSettled([...this.runs]);
  }

  /**
   * Closes the BullMQ worker. Called once every delivered envelope has completed (drained), so it does not wait for
   * the fetch blocked on BullMQ's marker (up to `drainDelay`): its connection is closed at once.
   */
  async close(): Promise<void> {
    this.stopping = true;
    clearInterval(this.lockTimer);
    clearTimeout(this.wakeTimer);
    await this.bull.close(true);
    await this.fetching;
  }
}
