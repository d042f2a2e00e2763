// One tail of the event log per API process, shared by every event stream it serves (docs/reference/events.md#events). It LISTENs on
// `conveyor_events` on a connection of its own, reads what is new from Postgres (every org's events, below the
// horizon: see packages/db/src/events/events.ts), and hands each batch to the subscribed streams of the events' org.
// Postgres holds the data and NOTIFY only wakes the reader, so any replica serves any client. Events committed
// while an older transaction of this database was still running lie above the horizon when their notification
// arrives; the tail looks again, sooner and then later, until they can be read. It runs only while someone subscribes.
import type pg from "pg";
import { Gauge, type Registry } from "prom-client";
import { EVENTS_CHANNEL, eventHorizon, NotificationListener, readEventTexts, type EventText } from "@conveyor/db";
import { WakeLoop } from "@conveyor/queue";
import type { Logger } from "@conveyor/logger";
import { AppError } from "./errors";

/** A stream listening to the tail. The hub calls it synchronously, in event id order, never twice for one event. */
export type EventSubscriber = {
  orgId: string;
  /**
   * Set by a stream of one job's events: it is handed only batches with that job's events, and only those, so a
   * thousand browsers each following their own job cost one lookup per event, not a thousand filters per batch.
   */
  jobId?: string;
  /** Events of the subscriber's org from one batch (ids above the position it subscribed at), with their frames. */
  deliver(events: readonly EventText[], frames: () => string): void;
  /** Every HEARTBEAT_MS: a comment keeps proxies and clients from taking the stream for dead. */
  heartbeat(): void;
};

export type Subscription = {
  /** Every event up to this id was read before the subscription began; later ones will be delivered. */
  position: number;
  unsubscribe(): void;
};

export type EventHubOptions = {
  pool: pg.Pool;
  logger: Logger;
  /** Events read per query. Default 1,000. */
  pageSize?: number;
  /** How long the tail keeps listening after its last subscriber left. Default 10 s. */
  lingerMs?: number;
  /** EVENT_STREAMS_PER_ORG: subscribers one organization may have on this process (0: no cap). */
  streamsPerOrg?: number;
};

/** docs/reference/events.md#events: a comment line every 15 s. */
export const HEARTBEAT_MS = 15_000;
/** A read without a notification, in case one was missed (a LISTEN connection being replaced). */
const SAFETY_POLL_MS = 1_000;
/** First and longest wait before looking again for events that were above the horizon. */
const HORIZON_RETRY_MS = [10, 500] as const;

/** An SSE frame: the event id, its type, and the event as JSON (Postgres' JSON text has no raw line breaks). */
export const sseFrame = (event: EventText): string => `id: ${event.id}\nevent: ${event.type}\ndata: ${event.json}\n\n`;

export class EventHub {
  private readonly byOrg = new Map<string, Set<EventSubscriber>>();
  /** The subscribers of one job's events, by org and job (also in byOrg, for the cap and the heartbeat). */
  private readonly byJob = new Map<string, Set<EventSubscriber>>();
  private count = 0;
  private state: "stopped" | "starting" | "running" = "stopped";
  private starting: Promise<void> | null = null;
  private listener: NotificationListener | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private linger: NodeJS.Timeout | undefined;
  private retryMs: number = HORIZON_RETRY_MS[0];
  private lastFailure = 0;
  private readonly loop: WakeLoop;
  /** The last event id read and delivered. */
  private position = 0;
  /** Whether the last round left committed events above the horizon (behind an older open transaction). */
  private waiting = false;

  constructor(private readonly options: EventHubOptions) {
    this.loop = new WakeLoop({
      round: () => this.read(),
      everyMs: SAFETY_POLL_MS,
      warn: (error) => this.failed("event tail read failed; retrying", error),
      quietMs: 0,
    });
  }

  /** Subscribers now, and whether the tail holds its LISTEN connection (for tests and metrics). */
  stats(): { subscribers: number; listening: boolean; position: number } {
    return { subscribers: this.count, listening: this.listener?.listening ?? false, position: this.position };
  }

  /** Adds this tail's gauges to `registry`: open streams, and whether it holds its LISTEN connection. */
  observe(registry: Registry): void {
    const subscribers = () => this.count;
    const listening = () => (this.listener?.listening ? 1 : 0);
    const waiting = () => (this.waiting ? 1 : 0);
    new Gauge({
      name: "conveyor_event_streams",
      help: "Event streams (GET /events, GET /jobs/{id}/events) open on this API process.",
      registers: [registry],
      collect() {
        this.set(subscribers());
      },
    });
    new Gauge({
      name: "conveyor_event_tail_listening",
      help: "1 while this API process listens for events (it does while streams are open, and for a while after).",
      registers: [registry],
      collect() {
        this.set(listening());
      },
    });
    new Gauge({
      name: "conveyor_event_tail_waiting",
      help: "1 while committed events wait above the horizon: an older write transaction of this database is still open.",
      registers: [registry],
      collect() {
        this.set(waiting());
      },
    });
  }

  /** The tail's position now: every event up to it has been read and delivered. */
  current(): number {
    return this.position;
  }

  /** Starts the tail if needed, then subscribes. Rejects when Postgres cannot be reached. */
  async subscribe(subscriber: EventSubscriber): Promise<Subscription> {
    clearTimeout(this.linger);
    this.linger = undefined;
    if (this.state !== "running") await (this.starting ??= this.start().finally(() => (this.starting = null)));
    let subscribers = this.byOrg.get(subscriber.orgId);
    // Checked and added without an await in between: concurrent requests cannot both take the last place.
    const cap = this.options.streamsPerOrg ?? 0;
    if (cap > 0 && (subscribers?.size ?? 0) >= cap) {
      throw new AppError(
        "too_many_streams",
        `Your organization has ${cap} event streams open on this server, the most it may (EVENT_STREAMS_PER_ORG). Close one, or share one stream of GET /events between your consumers.`,
        undefined,
        { "Retry-After": "5" },
      );
    }
    if (!subscribers) this.byOrg.set(subscriber.orgId, (subscribers = new Set()));
    subscribers.add(subscriber);
    const jobKey = subscriber.jobId === undefined ? undefined : `${subscriber.orgId}/${subscriber.jobId}`;
    if (jobKey !== undefined) {
      let watchers = this.byJob.get(jobKey);
      if (!watchers) this.byJob.set(jobKey, (watchers = new Set()));
      watchers.add(subscriber);
    }
    this.count++;
    let subscribed = true;
    return {
      position: this.position,
      unsubscribe: () => {
        if (!subscribed) return;
        subscribed = false;
        subscribers.delete(subscriber);
        const watchers = jobKey === undefined ? undefined : this.byJob.get(jobKey);
        if (watchers?.delete(subscriber) && watchers.size === 0) this.byJob.delete(jobKey!);
        if (subscribers.size === 0 && this.byOrg.get(subscriber.orgId) === subscribers) this.byOrg.delete(subscriber.orgId);
        if (--this.count === 0) this.linger = setTimeout(() => void this.stop(), this.options.lingerMs ?? 10_000).unref();
      },
    };
  }

  /** Stops the tail now (subscribers stay subscribed but receive nothing more); for shutdown and tests. */
  async stop(): Promise<void> {
    clearTimeout(this.linger);
    this.linger = undefined;
    if (this.starting) await this.starting.catch(() => {});
    if (this.state === "stopped") return;
    this.state = "stopped";
    this.waiting = false;
    clearInterval(this.heartbeat);
    this.dropListener();
    await this.loop.stop();
  }

  private async start(): Promise<void> {
    this.state = "starting";
    try {
      this.listener = new NotificationListener({
        pool: this.options.pool,
        channel: EVENTS_CHANNEL,
        onNotify: () => this.loop.wake(),
        // A lost connection is replaced a second later; the safety poll covers the gap.
        onError: (error) => this.failed("cannot LISTEN again", error),
      });
      await this.listener.open();
      // Subscribing before the position is known: whatever commits from here on is read by the first round.
      this.position = Number(await eventHorizon(this.options.pool));
    } catch (error) {
      this.state = "stopped";
      this.dropListener();
      throw error;
    }
    this.state = "running";
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS).unref();
    this.loop.start();
  }

  private dropListener(): void {
    this.listener?.close();
    this.listener = undefined;
  }

  /** One round of the tail: every page readable now; asks to look again soon while events wait above the horizon. */
  private async read(): Promise<number | null> {
    const limit = this.options.pageSize ?? 1_000;
    for (;;) {
      const page = await readEventTexts(this.options.pool, { orgId: null, after: BigInt(this.position), limit });
      if (this.state !== "running") return null;
      if (page.events.length) this.deliver(page.events);
      if (page.events.length === limit) continue;
      this.waiting = page.waiting;
      if (!page.waiting) {
        this.retryMs = HORIZON_RETRY_MS[0];
        return null;
      }
      // Look again soon, then less often while an old transaction of this database holds the horizon back.
      const wait = this.retryMs;
      this.retryMs = Math.min(this.retryMs * 2, HORIZON_RETRY_MS[1]);
      return wait;
    }
  }

  /** Hands a batch to the subscribers of each org in it, and moves the position past it, in one synchronous step. */
  private deliver(events: EventText[]): void {
    this.position = events[events.length - 1]!.id;
    const byOrg = new Map<string, EventText[]>();
    for (const event of events) {
      if (!this.byOrg.has(event.orgId)) continue;
      const list = byOrg.get(event.orgId);
      if (list) list.push(event);
      else byOrg.set(event.orgId, [event]);
    }
    for (const [orgId, list] of byOrg) {
      let frames: string | undefined;
      const framesOnce = () => (frames ??= list.map(sseFrame).join(""));
      // A copy: a subscriber may unsubscribe (and another subscribe) while being delivered to.
      for (const subscriber of [...(this.byOrg.get(orgId) ?? [])]) {
        if (subscriber.jobId === undefined) this.handTo(subscriber, list, framesOnce);
      }
    }
    if (this.byJob.size === 0) return;
    const byJob = new Map<string, EventText[]>();
    for (const event of events) {
      // By org too: another org's stream asking for this job id must never see it.
      const key = `${event.orgId}/${event.jobId}`;
      if (!this.byJob.has(key)) continue;
      const list = byJob.get(key);
      if (list) list.push(event);
      else byJob.set(key, [event]);
    }
    for (const [key, list] of byJob) {
      let frames: string | undefined;
      const framesOnce = () => (frames ??= list.map(sseFrame).join(""));
      for (const subscriber of [...(this.byJob.get(key) ?? [])]) this.handTo(subscriber, list, framesOnce);
    }
  }

  private handTo(subscriber: EventSubscriber, list: readonly EventText[], frames: () => string): void {
    try {
      subscriber.deliver(list, frames);
    } catch (error) {
      this.options.logger.error("an event stream failed to take events", { error: (error as Error).message });
    }
  }

  private beat(): void {
    for (const subscribers of [...this.byOrg.values()]) for (const subscriber of [...subscribers]) subscriber.heartbeat();
  }

  private failed(what: string, error: Error): void {
    // Postgres away: streams stay open and catch up when it returns; log once in a while, not at every poll.
    if (Date.now() - this.lastFailure > 30_000) this.options.logger.warn(`${what}: ${error.message}`);
    this.lastFailure = Date.now();
  }
}
