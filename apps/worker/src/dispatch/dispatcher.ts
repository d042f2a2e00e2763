// The dispatcher: the leader's loop that hands due jobs from Postgres to BullMQ in envelopes (docs/reference/lifecycle.md#envelopes: one BullMQ
// job carries 1..ENVELOPE_MAX job ids; the decision itself — time, priority, fairness, limits — is
// packages/db/src/flow/dispatch.ts). BullMQ holds at most `rounds` rounds of each type's worker slots waiting, counted in
// jobs, so a later, higher-priority or other organization's job never waits behind a long backlog there. Woken by
// NOTIFY (new jobs, retries due, finished attempts) and by a short tick (jobs falling due).
import type pg from "pg";
import type { TypeRateLimit } from "@conveyor/contracts";
import {
  closeHandOverConnection,
  DISPATCH_CHANNEL,
  dispatchLimits,
  findDueWork,
  handOverConnection,
  jobsInFlight,
  msUntilNextDue,
  orgsOf,
  NotificationListener,
  recentHandOvers,
  recordTypeState,
  takeDueJobs,
  typesWithDueJobs,
  returnToLine,
  type DispatchedEnvelope,
  type DueWork,
} from "@conveyor/db";
import { WakeLoop } from "@conveyor/queue";
import type { Logger } from "@conveyor/logger";
import type { JobQueues, RedisClient } from "@conveyor/queue";
import { capacityOf } from "./capacity";
import { DispatchWakes } from "./dispatch-wakes";
import { HAND_OVER_SPANS, startHandOverSpans } from "./hand-over-span";
import type { LeaderTask } from "../leadership/leadership";
import { restoreMissing } from "./redis-repair";

/** How often BullMQ's waiting count is looked at while a type has a backlog. */
const BACKLOG_POLL_MS = 5;
/** Batches of one type being handed to BullMQ at once. */
const MAX_HAND_OVERS = 2;
/** How far back a new leader checks its predecessor's hand-overs. */
const RECOVER_WITHIN_MS = 120_000;
/** How often a dispatcher waiting for the dispatch lock tries again. */
const LOCK_RETRY_MS = 500;

export type DispatcherOptions = {
  pool: pg.Pool;
  /** Fail-fast connection for reading capacity. */
  redis: RedisClient;
  /** Queues on a fail-fast connection: a hand-over Redis refuses is rolled back and tried again. */
  queues: JobQueues;
  prefix: string;
  logger: Logger;
  /** ORG_CONCURRENCY_LIMIT: most jobs of one org in flight per type (0 = no cap); an org's queue setting overrides it. */
  orgCap: number;
  /** TYPE_RATE_LIMITS: deployment-wide starts per period, per type. */
  typeRateLimits?: Map<string, TypeRateLimit>;
  /** Rounds of worker slots that may wait in BullMQ per type. Default 2. */
  rounds?: number;
  /** How often due jobs are looked for without a wake-up (jobs falling due). Default 250 ms. */
  tickMs?: number;
  /** ENVELOPE_MAX: most jobs one envelope carries. Default 64. */
  envelopeMax?: number;
};

/** How many envelopes' sizes are remembered per type: more than ever wait in BullMQ at once. */
const SIZES_KEPT = 4_096;

export class Dispatcher implements LeaderTask {
  readonly name = "dispatcher";
  private listener: NotificationListener | undefined;
  /** The connection hand-overs are marked on, with synchronous_commit off (a lost mark is a harmless re-hand-over). */
  private marker: pg.PoolClient | undefined;
  private readonly loop: WakeLoop;
  /** Set by every wake-up: the due work must be read again. */
  private stale = true;
  /** The wake-ups since the due work was last read: of which types it must be read again. */
  private readonly wakes: DispatchWakes;
  /** Per type, the last organization served: the next round starts after it. */
  private readonly rotation = new Map<string, string>();
  /** Types known to have due jobs that did not fit in BullMQ yet. */
  private readonly backlog = new Set<string>();
  /** Per type, the jobs and batches being handed to BullMQ right now. */
  private readonly handing = new Map<string, { jobs: number; batches: number }>();
  private readonly handOvers = new Set<Promise<void>>();
  private readonly slots = new Map<string, { slots: number; workers: number; until: number }>();
  /**
   * Per type, the sizes of the envelopes handed over, oldest first. BullMQ's list is first in, first out and only
   * this dispatcher fills it, so the envelopes still waiting are the newest: the jobs waiting are the sum of the
   * last `waiting` sizes.
   */
  private readonly sizes = new Map<string, number[]>();
  /** Per type, the priorities and organizations with due jobs, kept while a backlog drains. */
  private readonly work = new Map<string, DueWork>();
  private lastHandOverFailure = 0;
  private lastLockWarning = 0;

  constructor(private readonly options: DispatcherOptions) {
    this.wakes = new DispatchWakes(options.tickMs ?? 250);
    this.loop = new WakeLoop({
      round: () => this.round(),
      everyMs: options.tickMs ?? 250,
      // Redis or Postgres away: the rows stay waiting.
      warn: (error) => options.logger.warn(`dispatcher round failed; retrying: ${error.message}`),
    });
  }

  private get active(): boolean {
    return this.loop.isActive;
  }

  async start(): Promise<void> {
    await this.recover();
    this.listener = new NotificationListener({
      pool: this.options.pool,
      channel: DISPATCH_CHANNEL,
      // A new job's NOTIFY names its types: only those need to be looked at.
      onNotify: (payload) => this.wake(payload ? payload.split(" ") : undefined),
      // The tick covers the time without.
      onError: (error) => this.options.logger.warn(`dispatcher cannot LISTEN yet (ticking instead): ${error.message}`),
    });
    await this.listener.openOrRetry();
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.listener?.close();
    this.listener = undefined;
    await this.loop.stop();
    if (this.marker) await closeHandOverConnection(this.marker);
    this.marker = undefined;
  }

  /**
   * The connection the rounds run on (marks need no durable commit: see handOverConnection), opened on first use. Postgres
   * going away ends it, between rounds too: it is then dropped (an error on a held connection with no listener
   * would end the process) and the next round opens another.
   */
  private async markerConnection(): Promise<pg.PoolClient | null> {
    if (this.marker) return this.marker;
    const marker = await handOverConnection(this.options.pool);
    if (!marker) {
      // Another dispatcher (a leader whose lease just lapsed) is still handing over: wait for it to stop.
      if (Date.now() - this.lastLockWarning > 30_000) this.options.logger.info("another dispatcher still holds the dispatch lock; waiting for it to stop");
      this.lastLockWarning = Date.now();
      return null;
    }
    marker.on("error", () => {
      // Once stop() has returned it to the pool, the pool deals with it.
      if (this.marker !== marker) return;
      this.marker = undefined;
      marker.release(true);
    });
    this.marker = marker;
    return marker;
  }

  /**
   * Runs a round now, or right after the one in progress; what is due is read again first: of `types` only (their new
   * jobs), or of every type.
   */
  wake(types?: readonly string[]): void {
    // What is due may have changed (new jobs, jobs back in line, time passing).
    this.wakes.add(types);
    this.stale = true;
    this.loop.wake();
  }

  /**
   * A previous leader may have died between marking jobs dispatched and handing them to BullMQ: those Redis does
   * not hold go back in line now, not when the reconciler next looks.
   */
  private async recover(): Promise<void> {
    try {
      const recent = await recentHandOvers(this.options.pool, RECOVER_WITHIN_MS);
      const restored = await restoreMissing(
        this.options,
        recent.map((job) => ({ id: job.jobId, type: job.type, status: job.status, envelopeId: job.envelopeId })),
      );
      if (restored) this.options.logger.info(`put back in line ${restored} job(s) a previous dispatcher had not handed over`);
    } catch (error) {
      this.options.logger.warn(`could not check the previous dispatcher's hand-overs; the reconciler will: ${(error as Error).message}`);
    }
  }

  /**
   * Hands over due jobs until none is due or BullMQ holds enough: per type, up to `rounds` rounds of its worker
   * slots may wait in BullMQ (the jobs running or finishing delay nobody). While a type still has due jobs,
   * BullMQ's waiting count (one cheap Redis call) is watched every few milliseconds, and Postgres is only asked
   * again when there is room for a whole round. Resolves with the time until the next waiting job falls due, so a
   * delayed job or a retry starts on time (the tick is the safety net).
   */
  private async round(): Promise<number | null> {
    const rounds = this.options.rounds ?? 2;
    const marker = await this.markerConnection();
    if (!marker) return LOCK_RETRY_MS;
    // The earliest moment a limit holding jobs back lets one go (a rate limit's window, a provider's Retry-After).
    let wakeAt = Infinity;
    // Every round starts from what is due now (new jobs, jobs back in line, time passing); within a round, a wake-up
    // makes it read again before its next take.
    this.stale = true;
    let lookedAtAll = false;
    do {
      if (this.stale) {
        // Woken (new jobs, jobs back in line, the tick): what is due is read again.
        this.stale = false;
        this.work.clear();
        // New jobs of named types only: those types are looked at (dispatch-wakes.ts); else every type with due jobs.
        const named = this.wakes.take();
        if (named === null) lookedAtAll = true;
        for (const type of named ?? (await typesWithDueJobs(marker))) this.backlog.add(type);
      }
      for (const type of [...this.backlog]) {
        const { slots, workers } = await this.slotsOf(type, marker);
        // No live worker serves this type: its jobs stay pending, visibly, until one does.
        if (slots === 0) {
          this.backlog.delete(type);
          continue;
        }
        // Jobs being handed over count as waiting: they will be in a moment.
        const handing = this.handing.get(type) ?? { jobs: 0, batches: 0 };
        if (handing.batches >= MAX_HAND_OVERS) continue;
        const after = this.rotation.get(type) ?? null;
        // After a wake-up the due work is read with its limits, at the same time as BullMQ's waiting count (a lone
        // job waits for both); while a backlog drains, the work is kept and only the limits are read again.
        const kept = this.work.get(type);
        const [envelopesWaiting, found] = await Promise.all([
          this.options.queues.queue(type).getWaitingCount(),
          kept?.length ? undefined : findDueWork(marker, type, after, this.options.orgCap),
        ]);
        if (found) this.work.set(type, found.work);
        const room = slots * rounds - this.jobsWaiting(type, envelopesWaiting) - handing.jobs;
        if (room < slots) continue;
        const work = this.work.get(type)!;
        const limits = found?.limits ?? (await dispatchLimits(marker, type, orgsOf(work), this.options.orgCap));
        if (limits.typePausedUntil) {
          // A provider asked to wait (429 with Retry-After): nothing of this type starts before then.
          this.backlog.delete(type);
          wakeAt = Math.min(wakeAt, limits.typePausedUntil.getTime());
          continue;
        }
        if (limits.nextFreeAt) wakeAt = Math.min(wakeAt, limits.nextFreeAt.getTime());
        const inFlightByOrg = limits.orgCaps.size > 0 ? await jobsInFlight(marker, type) : new Map<string, number>();
        const takenAt = Date.now();
        const envelopes = await takeDueJobs(marker, {
          type,
          work,
          room,
          inFlightByOrg,
          limits,
          after,
          traceParents: HAND_OVER_SPANS,
          envelopeSize: (taken) => envelopeSize(taken, slots, workers, this.options.envelopeMax ?? 64),
        });
        const taken = envelopes.reduce((n, e) => n + e.jobs.length, 0);
        // Handing over (Redis) overlaps with taking the next batch (Postgres).
        if (taken) this.startHandOver(type, envelopes, taken, takenAt);
        // Fewer than there was room for: nothing more is due for this type (or the rest is capped) until woken.
        if (taken === 0 || (taken < room && work.length === 0)) this.backlog.delete(type);
      }
      if (this.backlog.size) await new Promise((resolve) => setTimeout(resolve, BACKLOG_POLL_MS));
    } while (this.active && (this.backlog.size || this.stale));
    await Promise.all(this.handOvers);
    wakeAt = this.wakes.limitsFree(wakeAt, lookedAtAll);
    const nextDue = await msUntilNextDue(marker);
    const untilFree = wakeAt === Infinity ? null : Math.max(0, wakeAt - Date.now());
    const next = nextDue === null ? untilFree : untilFree === null ? nextDue : Math.min(nextDue, untilFree);
    this.wakes.planned(next);
    return next;
  }

  /**
   * Worker slots serving `type` and the live workers they belong to, read from Redis at most once a second, and
   * written down with this leader's limits for the type (waiting_for reads them: no_worker, rate_limit, org_concurrency).
   */
  private async slotsOf(type: string, marker: pg.PoolClient): Promise<{ slots: number; workers: number }> {
    const cached = this.slots.get(type);
    if (cached && cached.until > Date.now()) return cached;
    const { slots, workers } = await capacityOf(this.options.redis, this.options.prefix, type);
    await recordTypeState(marker, { type, slots, rateLimit: this.options.typeRateLimits?.get(type) ?? null, orgConcurrencyLimit: this.options.orgCap });
    const fresh = { slots, workers, until: Date.now() + 1_000 };
    this.slots.set(type, fresh);
    return fresh;
  }

  /** Jobs waiting in BullMQ for `type`, given how many envelopes wait there: the newest ones this dispatcher handed. */
  private jobsWaiting(type: string, envelopesWaiting: number): number {
    const sizes = this.sizes.get(type);
    if (!sizes || envelopesWaiting === 0) return 0;
    let jobs = 0;
    for (let i = sizes.length - 1; i >= Math.max(0, sizes.length - envelopesWaiting); i--) jobs += sizes[i]!;
    // Envelopes this dispatcher did not hand (a predecessor's, the reconciler's): one job each, at least.
    return jobs + Math.max(0, envelopesWaiting - sizes.length);
  }

  private startHandOver(type: string, envelopes: DispatchedEnvelope[], jobs: number, takenAt: number): void {
    const handing = this.handing.get(type) ?? { jobs: 0, batches: 0 };
    this.handing.set(type, { jobs: handing.jobs + jobs, batches: handing.batches + 1 });
    const endSpans = startHandOverSpans(
      envelopes.flatMap((e) => e.jobs),
      takenAt,
    );
    const done = this.handOver(type, envelopes)
      .then(() => endSpans?.())
      .catch((error: Error) => {
        endSpans?.(error);
        if (Date.now() - this.lastHandOverFailure > 30_000)
          this.options.logger.warn(`dispatcher could not hand jobs to BullMQ; they wait for the next round: ${error.message}`);
        this.lastHandOverFailure = Date.now();
      })
      .finally(() => {
        const now = this.handing.get(type)!;
        this.handing.set(type, { jobs: now.jobs - jobs, batches: now.batches - 1 });
        this.handOvers.delete(done);
      });
    this.handOvers.add(done);
  }

  private async handOver(type: string, envelopes: DispatchedEnvelope[]): Promise<void> {
    try {
      await this.options.queues.enqueue(envelopes.map((e) => ({ id: e.id, type, jobIds: e.jobs.map((job) => job.jobId) })));
    } catch (error) {
      // BullMQ refused them (Redis away): back in line for the next round.
      await returnToLine(
        this.options.pool,
        envelopes.flatMap((e) => e.jobs.map((job) => job.jobId)),
      );
      this.backlog.delete(type);
      throw error;
    }
    let sizes = this.sizes.get(type);
    if (!sizes) this.sizes.set(type, (sizes = []));
    sizes.push(...envelopes.map((e) => e.jobs.length));
    if (sizes.length > SIZES_KEPT) sizes.splice(0, sizes.length - SIZES_KEPT);
    const last = envelopes[envelopes.length - 1]!.jobs;
    this.rotation.set(type, last[last.length - 1]!.orgId);
  }
}

/**
 * How many jobs an envelope carries when `taken` jobs of a type are handed over at once (docs/reference/lifecycle.md#envelopes): every live worker
 * gets a share (a burst is spread over all of them), no envelope holds more than a worker has slots (a worker never
 * holds jobs it cannot start) or `max`, and a short queue gets envelopes of one.
 */
export function envelopeSize(taken: number, slots: number, workers: number, max: number): number {
  const live = Math.max(1, workers);
  return Math.max(1, Math.min(max, Math.floor(slots / live), Math.ceil(taken / live)));
}
