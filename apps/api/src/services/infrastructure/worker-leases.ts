// The long-poll of POST /worker/lease (docs/reference/lifecycle.md#your-own-workers, docs/reference/robustness.md#r59): a caller with nothing to lease waits in memory, not
// in Postgres. One LISTEN per API process on the dispatcher's channel (a new job's NOTIFY names its types) wakes the
// waiters of those types; a waiter also wakes when the earliest waiting job of its types falls due, or a lease of them
// lapses (asked once per empty attempt). So an idle poll costs one timer and a set entry, and 1,000 of them cost
// the API nothing per second — no query runs for them until there is work. Two guards keep a crowd of polls from
// crowding out other requests: at most LEASE_ATTEMPTS_AT_ONCE attempts use Postgres at a time (the others queue in
// memory), and a NOTIFY wakes at most WAKE_PER_GROUP waiters of each group (an organization's polls for the same
// types) — one that leases a full batch wakes the next few, so a burst is drained without a stampede.
import { DISPATCH_CHANNEL, leaseJobs, msUntilLeasable, NotificationListener, type LeasedJob, type LeaseRequest } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import { OutcomeWriter } from "./worker-outcomes";
import type pg from "pg";
import { Gauge, type Registry } from "prom-client";

/** `types`: the types a NOTIFY named (their new jobs are due); none when woken otherwise. `worker`: whose poll it is. */
type Waiter = { worker: string; wake(types?: readonly string[]): void };
type Group = { types: ReadonlySet<string>; waiters: Set<Waiter> };

/** Without LISTEN (Postgres away for a moment), waiters look again this often. */
const UNLISTENED_POLL_MS = 1_000;
/** Lease attempts of this process using Postgres at once; the rest wait their turn in memory. */
const LEASE_ATTEMPTS_AT_ONCE = 4;
/** Waiters of one group a NOTIFY wakes. */
const WAKE_PER_GROUP = 4;
/** How soon an attempt that found its types being taken by another caller tries again. */
const CONTENDED_RETRY_MS = 5;
/** How long a worker that said it stops gets empty answers from this process (a late lease call leases nothing). */
const STOPPED_FOR_MS = 60_000;

/** A worker as the hub keys it: its organization and its id (another organization's worker may name the same id). */
const workerKey = (orgId: string, workerId: string) => `${orgId} ${workerId}`;

export class LeaseHub {
  private readonly groups = new Map<string, Group>();
  private listener: NotificationListener | undefined;
  private starting: Promise<void> | undefined;
  private stopped = false;
  private lastWarning = 0;
  private attempts = 0;
  private readonly queued: (() => void)[] = [];
  /** Workers ("org worker") that said they stop, until when their lease calls answer [] at once. */
  private readonly stoppedWorkers = new Map<string, number>();
  /** The group commit of this process' outcome reports. */
  readonly outcomes: OutcomeWriter;

  constructor(private readonly options: { pool: pg.Pool; logger: Logger }) {
    this.outcomes = new OutcomeWriter(options.pool);
  }

  /** Adds the gauge of long-polls waiting on this API process to `registry`. */
  observe(registry: Registry): void {
    const waiting = () => this.stats().waiting;
    new Gauge({
      name: "conveyor_worker_long_polls",
      help: "Worker-protocol lease calls (POST /worker/lease) waiting for work on this API process.",
      registers: [registry],
      collect() {
        this.set(waiting());
      },
    });
  }

  /** Waiters now, and whether the hub holds its LISTEN connection (for tests and the bench). */
  stats(): { waiting: number; listening: boolean } {
    let waiting = 0;
    for (const group of this.groups.values()) waiting += group.waiters.size;
    return { waiting, listening: this.listener?.listening ?? false };
  }

  private listen(): Promise<void> {
    this.starting ??= (async () => {
      this.listener = new NotificationListener({
        pool: this.options.pool,
        channel: DISPATCH_CHANNEL,
        onNotify: (payload) => this.notify(payload),
        onError: (error) => {
          if (Date.now() - this.lastWarning < 30_000) return;
          this.lastWarning = Date.now();
          this.options.logger.warn(`worker lease hub cannot LISTEN yet (polling instead): ${error.message}`);
        },
      });
      await this.listener.openOrRetry();
    })();
    return this.starting;
  }

  /** A dispatch NOTIFY: its payload names the types with new work, or is empty (any type). */
  private notify(payload: string): void {
    const types = payload ? payload.split(" ") : null;
    for (const group of this.groups.values()) {
      if (types === null || types.some((t) => group.types.has(t))) wakeSome(group, undefined, types ?? undefined);
    }
  }

  /** Runs `fn` when fewer than LEASE_ATTEMPTS_AT_ONCE attempts are running. */
  private async gated<T>(fn: () => Promise<T>): Promise<T> {
    if (this.attempts >= LEASE_ATTEMPTS_AT_ONCE) await new Promise<void>((resolve) => this.queued.push(resolve));
    else this.attempts++;
    try {
      return await fn();
    } finally {
      const next = this.queued.shift();
      if (next) next();
      else this.attempts--;
    }
  }

  /**
   * A worker says it stops (POST /worker/stop): its long-polls waiting on this process answer [] now, and its lease
   * calls for a minute lease nothing, so a worker shutting down is not held by its own poll for up to wait_seconds.
   */
  workerStopped(orgId: string, workerId: string): void {
    const worker = workerKey(orgId, workerId);
    const now = Date.now();
    for (const [key, until] of this.stoppedWorkers) if (until <= now) this.stoppedWorkers.delete(key);
    this.stoppedWorkers.set(worker, now + STOPPED_FOR_MS);
    for (const group of this.groups.values()) for (const waiter of group.waiters) if (waiter.worker === worker) waiter.wake();
  }

  /** Whether the worker said it stops (within the last minute): its lease calls lease nothing. */
  hasStopped(orgId: string, workerId: string): boolean {
    return (this.stoppedWorkers.get(workerKey(orgId, workerId)) ?? 0) > Date.now();
  }

  /**
   * Leases jobs for `request`, waiting up to `waitMs` for some when none can be leased now. Resolves early with []
   * when `signal` aborts (the caller went away), the worker says it stops, or the hub stops.
   */
  async lease(request: LeaseRequest, waitMs: number, signal: AbortSignal): Promise<LeasedJob[]> {
    if (waitMs > 0 && !this.stopped) await this.listen();
    const deadline = Date.now() + waitMs;
    const key = `${request.orgId} ${[...request.types].sort().join(" ")}`;
    const worker = workerKey(request.orgId, request.workerId);
    // The types the NOTIFY that woke this caller named: the next attempt need not look whether they have due jobs.
    let notified: readonly string[] | undefined;
    for (;;) {
      if (this.hasStopped(request.orgId, request.workerId)) return [];
      // The group of this organization's polls for these types (made again if it emptied meanwhile).
      let group = this.groups.get(key);
      if (!group) this.groups.set(key, (group = { types: new Set(request.types), waiters: new Set() }));
      // Registered before looking, so a NOTIFY that arrives while the lease statement runs is not missed.
      let woken = false;
      let wake: (types?: readonly string[]) => void = () => {};
      const wakened = new Promise<void>((resolve) => {
        wake = (types) => {
          if (!woken) notified = types;
          woken = true;
          resolve();
        };
      });
      const waiter: Waiter = { worker, wake };
      group.waiters.add(waiter);
      try {
        const hint = notified?.length ? { types: notified } : undefined;
        notified = undefined;
        const { jobs, contended } = await this.gated(() => leaseJobs(this.options.pool, request, hint));
        // A full batch: more may be due; the next few waiters of the group look too.
        if (jobs.length > 0 && jobs.length === request.max) wakeSome(group, waiter);
        if (jobs.length || Date.now() >= deadline || signal.aborted || this.stopped) return jobs;
        if (woken) continue;
        if (contended) {
          await waitFor(wakened, CONTENDED_RETRY_MS, signal);
          continue;
        }
        const next = await this.gated(() => msUntilLeasable(this.options.pool, request.orgId, request.types));
        const listening = this.listener?.listening ?? false;
        const wait = Math.min(deadline - Date.now(), next ?? Infinity, listening ? Infinity : UNLISTENED_POLL_MS);
        if (wait > 0 && !woken) await waitFor(wakened, wait, signal);
      } finally {
        group.waiters.delete(waiter);
        if (group.waiters.size === 0 && this.groups.get(key) === group) this.groups.delete(key);
      }
    }
  }

  /** Wakes every waiter (they answer with what they have) and stops listening. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const group of this.groups.values()) for (const waiter of group.waiters) waiter.wake();
    this.listener?.close();
    await this.starting?.catch(() => {});
  }
}

/** Wakes up to WAKE_PER_GROUP waiters of `group` (never `except`); a woken waiter leaves the group until it waits again. */
function wakeSome(group: Group, except?: Waiter, types?: readonly string[]): void {
  let woken = 0;
  for (const waiter of group.waiters) {
    if (woken >= WAKE_PER_GROUP) break;
    if (waiter === except) continue;
    group.waiters.delete(waiter);
    waiter.wake(types);
    woken++;
  }
}

/** Resolves when `wakened` does, `ms` pass, or `signal` aborts. */
function waitFor(wakened: Promise<void>, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
    void wakened.then(done);
  });
}
