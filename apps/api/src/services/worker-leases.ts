// The long-poll of POST /worker/lease (SPEC §26, ROBUSTNESS 59): a caller with nothing to lease waits in memory, not
// in Postgres. One LISTEN per API process on the dispatcher's channel (a new job's NOTIFY names its types) wakes the
// waiters of those types; a waiter also wakes when the earliest waiting job of its types falls due, or a lease of them
// lapses (asked once per empty attempt). So an idle poll costs one timer and a set entry, and 1,000 of them cost
// the API nothing per second — no query runs for them until there is work.
import { DISPATCH_CHANNEL, leaseJobs, msUntilLeasable, NotificationListener, type LeasedJob, type LeaseRequest } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import type pg from "pg";

type Waiter = { orgId: string; types: ReadonlySet<string>; wake(): void };

/** Without LISTEN (Postgres away for a moment), waiters look again this often. */
const UNLISTENED_POLL_MS = 1_000;

export class LeaseHub {
  private readonly waiters = new Set<Waiter>();
  private listener: NotificationListener | undefined;
  private starting: Promise<void> | undefined;
  private stopped = false;
  private lastWarning = 0;

  constructor(private readonly options: { pool: pg.Pool; logger: Logger }) {}

  /** Waiters now, and whether the hub holds its LISTEN connection (for tests and the bench). */
  stats(): { waiting: number; listening: boolean } {
    return { waiting: this.waiters.size, listening: this.listener?.listening ?? false };
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
    for (const waiter of this.waiters) if (types === null || types.some((t) => waiter.types.has(t))) waiter.wake();
  }

  /**
   * Leases jobs for `request`, waiting up to `waitMs` for some when none can be leased now. Resolves early with []
   * when `signal` aborts (the caller went away) or the hub stops.
   */
  async lease(request: LeaseRequest, waitMs: number, signal: AbortSignal): Promise<LeasedJob[]> {
    if (waitMs > 0 && !this.stopped) await this.listen();
    const deadline = Date.now() + waitMs;
    for (;;) {
      // Registered before looking, so a NOTIFY that arrives while the lease statement runs is not missed.
      let woken = false;
      let wake: () => void = () => {};
      const wakened = new Promise<void>((resolve) => {
        wake = () => {
          woken = true;
          resolve();
        };
      });
      const waiter: Waiter = { orgId: request.orgId, types: new Set(request.types), wake };
      this.waiters.add(waiter);
      try {
        const jobs = await leaseJobs(this.options.pool, request);
        if (jobs.length || Date.now() >= deadline || signal.aborted || this.stopped) return jobs;
        if (woken) continue;
        const next = await msUntilLeasable(this.options.pool, request.orgId, request.types);
        const listening = this.listener?.listening ?? false;
        const wait = Math.min(deadline - Date.now(), next ?? Infinity, listening ? Infinity : UNLISTENED_POLL_MS);
        if (wait > 0 && !woken) await waitFor(wakened, wait, signal);
      } finally {
        this.waiters.delete(waiter);
      }
    }
  }

  /** Wakes every waiter (they answer with what they have) and stops listening. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const waiter of this.waiters) waiter.wake();
    this.listener?.close();
    await this.starting?.catch(() => {});
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
