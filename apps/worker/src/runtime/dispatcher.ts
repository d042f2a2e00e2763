// The dispatcher: the leader's loop that hands due jobs from Postgres to BullMQ (the decision itself — time,
// priority, fairness, caps — is packages/db/src/dispatch.ts). It keeps about `rounds` rounds of each type's worker
// slots in flight, so BullMQ never holds a backlog in which a later, higher-priority or other organization's job
// would wait behind the rest. Woken by NOTIFY (new jobs, finished attempts) and by a short tick (jobs falling due).
import type pg from "pg";
import { dispatchDueJobs, DISPATCH_CHANNEL, jobsInFlight, typesWithDueJobs } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import type { JobQueues, Redis } from "@conveyor/queue";
import { capacityOf } from "./capacity";
import type { LeaderTask } from "./leadership";

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
  /** Rounds of worker slots kept in flight per type. Default 2. */
  rounds?: number;
  /** How often due jobs are looked for without a wake-up (jobs falling due). Default 250 ms. */
  tickMs?: number;
  onDispatched?(type: string, count: number): void;
};

export class Dispatcher implements LeaderTask {
  readonly name = "dispatcher";
  private listener: pg.PoolClient | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private again = false;
  private active = false;
  /** Per type, the last organization served: the next round starts after it. */
  private readonly rotation = new Map<string, string>();
  private lastFailure = 0;

  constructor(private readonly options: DispatcherOptions) {}

  async start(): Promise<void> {
    this.active = true;
    await this.listen();
    this.timer = setInterval(() => this.wake(), this.options.tickMs ?? 250);
    this.wake();
  }

  async stop(): Promise<void> {
    this.active = false;
    clearInterval(this.timer);
    const listener = this.listener;
    this.listener = undefined;
    if (listener) {
      await listener.query(`UNLISTEN ${DISPATCH_CHANNEL}`).catch(() => {});
      listener.release();
    }
    await this.running;
  }

  /** Runs a round now, or right after the one in progress. */
  wake(): void {
    if (!this.active) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.round()
      .catch((error: Error) => {
        // Redis or Postgres away: the rows stay waiting; log once in a while, not at every tick.
        if (Date.now() - this.lastFailure > 30_000) this.options.logger.warn(`dispatcher round failed; retrying: ${error.message}`);
        this.lastFailure = Date.now();
      })
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  private async listen(): Promise<void> {
    try {
      const listener = await this.options.pool.connect();
      listener.on("notification", () => this.wake());
      // A dropped connection: listen again on a new one; the tick covers the gap.
      listener.on("error", () => {
        if (this.listener !== listener) return;
        this.listener = undefined;
        listener.release(true);
        if (this.active) setTimeout(() => void this.listen(), 1_000).unref();
      });
      await listener.query(`LISTEN ${DISPATCH_CHANNEL}`);
      this.listener = listener;
    } catch (error) {
      this.options.logger.warn(`dispatcher cannot LISTEN yet (ticking instead): ${(error as Error).message}`);
      if (this.active) setTimeout(() => void this.listen(), 1_000).unref();
    }
  }

  private async round(): Promise<void> {
    const rounds = this.options.rounds ?? 2;
    for (const type of await typesWithDueJobs(this.options.pool)) {
      if (!this.active) return;
      const slots = await capacityOf(this.options.redis, this.options.prefix, type);
      // No live worker serves this type: its jobs stay pending, visibly, until one does.
      if (slots === 0) continue;
      const inFlight = await jobsInFlight(this.options.pool, type);
      const room = slots * rounds - inFlight.total;
      // Hand over at least half a round at a time, unless workers would otherwise sit idle.
      if (room <= 0 || (room < Math.ceil(slots / 2) && inFlight.total >= slots)) continue;
      const handed = await dispatchDueJobs(
        this.options.pool,
        { type, room, inFlightByOrg: inFlight.byOrg, orgCap: this.options.orgCap, after: this.rotation.get(type) ?? null },
        (jobs) => this.options.queues.enqueue(jobs.map((job) => ({ id: job.jobId, type }))),
      );
      const last = handed[handed.length - 1];
      if (last) {
        this.rotation.set(type, last.orgId);
        this.options.onDispatched?.(type, handed.length);
      }
    }
  }
}
