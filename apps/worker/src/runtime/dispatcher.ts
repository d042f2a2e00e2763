// The dispatcher: the leader's loop that hands due jobs from Postgres to BullMQ (the decision itself — time,
// priority, fairness, caps — is packages/db/src/dispatch.ts). BullMQ holds at most `rounds` rounds of each type's
// worker slots waiting, so a later, higher-priority or other organization's job never waits behind a long backlog
// there. Woken by NOTIFY (new jobs, retries due, finished attempts) and by a short tick (jobs falling due).
import type pg from "pg";
import {
  DISPATCH_CHANNEL,
  findDueWork,
  jobsInFlight,
  msUntilNextDue,
  NotificationListener,
  recentHandOvers,
  takeDueJobs,
  typesWithDueJobs,
  undispatch,
  type DispatchCandidate,
  type DueWork,
} from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import { jobKey, type JobQueues, type Redis } from "@conveyor/queue";
import { capacityOf } from "./capacity";
import type { LeaderTask } from "./leadership";

/** How often BullMQ's waiting count is looked at while a type has a backlog. */
const BACKLOG_POLL_MS = 5;
/** Batches of one type being handed to BullMQ at once. */
const MAX_HAND_OVERS = 2;
/** How far back a new leader checks its predecessor's hand-overs. */
const RECOVER_WITHIN_MS = 120_000;

export type DispatcherOptions = {
  pool: pg.Pool;
  /** Fail-fast connection for reading capacity. */
  redis: Redis;
  /** Queues on a fail-fast connection: a hand-over Redis refuses is rolled back and tried again. */
  queues: JobQueues;
  prefix: string;
  logger: Logger;
  /** ORG_CONCURRENCY_LIMIT: most jobs of one org in flight per type (0 = no cap). */
  orgCap: number;
  /** Rounds of worker slots that may wait in BullMQ per type. Default 2. */
  rounds?: number;
  /** How often due jobs are looked for without a wake-up (jobs falling due). Default 250 ms. */
  tickMs?: number;
  onDispatched?(type: string, count: number): void;
};

export class Dispatcher implements LeaderTask {
  readonly name = "dispatcher";
  private listener: NotificationListener | undefined;
  /** The connection hand-overs are marked on, with synchronous_commit off (a lost mark is a harmless re-hand-over). */
  private marker: pg.PoolClient | undefined;
  private timer: NodeJS.Timeout | undefined;
  private dueTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  /** Set by every wake-up: the due work must be read again. */
  private stale = true;
  private active = false;
  /** Per type, the last organization served: the next round starts after it. */
  private readonly rotation = new Map<string, string>();
  /** Types known to have due jobs that did not fit in BullMQ yet. */
  private readonly backlog = new Set<string>();
  /** Per type, the jobs and batches being handed to BullMQ right now. */
  private readonly handing = new Map<string, { jobs: number; batches: number }>();
  private readonly handOvers = new Set<Promise<void>>();
  private readonly slots = new Map<string, { slots: number; until: number }>();
  /** Per type, the priorities and organizations with due jobs, kept while a backlog drains. */
  private readonly work = new Map<string, DueWork>();
  private lastFailure = 0;

  constructor(private readonly options: DispatcherOptions) {}

  async start(): Promise<void> {
    this.active = true;
    await this.recover();
    this.listener = new NotificationListener({
      pool: this.options.pool,
      channel: DISPATCH_CHANNEL,
      onNotify: () => this.wake(),
      // The tick covers the time without.
      onError: (error) => this.options.logger.warn(`dispatcher cannot LISTEN yet (ticking instead): ${error.message}`),
    });
    await this.listener.openOrRetry();
    this.timer = setInterval(() => this.wake(), this.options.tickMs ?? 250);
    this.wake();
  }

  async stop(): Promise<void> {
    this.active = false;
    clearInterval(this.timer);
    clearTimeout(this.dueTimer);
    this.listener?.close();
    this.listener = undefined;
    await this.running;
    this.marker?.release();
    this.marker = undefined;
  }

  /**
   * The connection the rounds run on (marks need no durable commit: see takeDueJobs), opened on first use. Postgres
   * going away ends it, between rounds too: it is then dropped (an error on a held connection with no listener
   * would end the process) and the next round opens another.
   */
  private async markerConnection(): Promise<pg.PoolClient> {
    if (this.marker) return this.marker;
    const marker = await this.options.pool.connect();
    marker.on("error", () => {
      // Once stop() has returned it to the pool, the pool deals with it.
      if (this.marker !== marker) return;
      this.marker = undefined;
      marker.release(true);
    });
    try {
      await marker.query("SET synchronous_commit = off");
    } catch (error) {
      marker.release(true);
      throw error;
    }
    this.marker = marker;
    return marker;
  }

  /** Runs a round now, or right after the one in progress. */
  wake(): void {
    if (!this.active) return;
    // What is due may have changed (new jobs, jobs back in line, time passing): read it again before the next take.
    this.stale = true;
    if (this.running) return;
    this.running = this.round()
      .catch((error: Error) => {
        // Redis or Postgres away: the rows stay waiting; log once in a while, not at every tick.
        if (Date.now() - this.lastFailure > 30_000) this.options.logger.warn(`dispatcher round failed; retrying: ${error.message}`);
        this.lastFailure = Date.now();
      })
      .finally(() => {
        this.running = null;
        if (this.stale) this.wake();
      });
  }

  /**
   * A previous leader may have died between marking jobs dispatched and handing them to BullMQ: those Redis does
   * not hold go back in line now, not when the reconciler next looks.
   */
  private async recover(): Promise<void> {
    try {
      const recent = await recentHandOvers(this.options.pool, RECOVER_WITHIN_MS);
      if (recent.length === 0) return;
      const pipeline = this.options.redis.pipeline();
      for (const job of recent) pipeline.exists(jobKey(this.options.prefix, job.type, job.jobId));
      const results = (await pipeline.exec()) ?? [];
      const lost = recent.filter((_, i) => results[i]?.[1] === 0).map((job) => job.jobId);
      if (lost.length)
        this.options.logger.info(`put back in line ${await undispatch(this.options.pool, lost)} job(s) a previous dispatcher had not handed over`);
    } catch (error) {
      this.options.logger.warn(`could not check the previous dispatcher's hand-overs; the reconciler will: ${(error as Error).message}`);
    }
  }

  /**
   * Hands over due jobs until none is due or BullMQ holds enough: per type, up to `rounds` rounds of its worker
   * slots may wait in BullMQ (the jobs running or finishing delay nobody). While a type still has due jobs,
   * BullMQ's waiting count (one cheap Redis call) is watched every few milliseconds, and Postgres is only asked
   * again when there is room for a whole round.
   */
  private async round(): Promise<void> {
    const rounds = this.options.rounds ?? 2;
    const marker = await this.markerConnection();
    do {
      if (this.stale) {
        // Woken (new jobs, jobs back in line, the tick): what is due is read again.
        this.stale = false;
        this.work.clear();
        for (const type of await typesWithDueJobs(marker)) this.backlog.add(type);
      }
      for (const type of [...this.backlog]) {
        const slots = await this.slotsOf(type);
        // No live worker serves this type: its jobs stay pending, visibly, until one does.
        if (slots === 0) {
          this.backlog.delete(type);
          continue;
        }
        // Jobs being handed over count as waiting: they will be in a moment.
        const handing = this.handing.get(type) ?? { jobs: 0, batches: 0 };
        if (handing.batches >= MAX_HAND_OVERS) continue;
        const room = slots * rounds - (await this.options.queues.queue(type).getWaitingCount()) - handing.jobs;
        if (room < slots) continue;
        const inFlightByOrg = this.options.orgCap > 0 ? await jobsInFlight(marker, type) : new Map<string, number>();
        const after = this.rotation.get(type) ?? null;
        let work = this.work.get(type);
        if (!work?.length) this.work.set(type, (work = await findDueWork(marker, type, after)));
        const taken = await takeDueJobs(marker, { type, work, room, inFlightByOrg, orgCap: this.options.orgCap, after });
        // Handing over (Redis) overlaps with taking the next batch (Postgres).
        if (taken.length) this.startHandOver(type, taken);
        // Fewer than there was room for: nothing more is due for this type (or the rest is capped) until woken.
        if (taken.length === 0 || (taken.length < room && work.length === 0)) this.backlog.delete(type);
      }
      if (this.backlog.size) await new Promise((resolve) => setTimeout(resolve, BACKLOG_POLL_MS));
    } while (this.active && (this.backlog.size || this.stale));
    await Promise.all(this.handOvers);
    await this.sleepUntilNextDue(marker);
  }

  /** A delayed job or a retry starts on time: wake when the next one falls due (the tick is the safety net). */
  private async sleepUntilNextDue(marker: pg.PoolClient): Promise<void> {
    clearTimeout(this.dueTimer);
    const ms = await msUntilNextDue(marker);
    if (ms === null || !this.active) return;
    this.dueTimer = setTimeout(() => this.wake(), Math.max(0, Math.ceil(ms)));
    this.dueTimer.unref();
  }

  /** Worker slots serving `type`, read from Redis at most once a second. */
  private async slotsOf(type: string): Promise<number> {
    const cached = this.slots.get(type);
    if (cached && cached.until > Date.now()) return cached.slots;
    const slots = await capacityOf(this.options.redis, this.options.prefix, type);
    this.slots.set(type, { slots, until: Date.now() + 1_000 });
    return slots;
  }

  private startHandOver(type: string, taken: DispatchCandidate[]): void {
    const handing = this.handing.get(type) ?? { jobs: 0, batches: 0 };
    this.handing.set(type, { jobs: handing.jobs + taken.length, batches: handing.batches + 1 });
    const done = this.handOver(type, taken)
      .catch((error: Error) => {
        if (Date.now() - this.lastFailure > 30_000)
          this.options.logger.warn(`dispatcher could not hand jobs to BullMQ; they wait for the next round: ${error.message}`);
        this.lastFailure = Date.now();
      })
      .finally(() => {
        const now = this.handing.get(type)!;
        this.handing.set(type, { jobs: now.jobs - taken.length, batches: now.batches - 1 });
        this.handOvers.delete(done);
      });
    this.handOvers.add(done);
  }

  private async handOver(type: string, taken: DispatchCandidate[]): Promise<void> {
    try {
      await this.options.queues.enqueue(taken.map((job) => ({ id: job.jobId, type })));
    } catch (error) {
      // BullMQ refused them (Redis away): back in line for the next round.
      await undispatch(
        this.options.pool,
        taken.map((job) => job.jobId),
      );
      this.backlog.delete(type);
      throw error;
    }
    this.rotation.set(type, taken[taken.length - 1]!.orgId);
    this.options.onDispatched?.(type, taken.length);
  }
}
