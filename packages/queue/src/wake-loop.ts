// The shape every background loop over the database shares (the dispatcher, the webhook relay, the scheduler,
// retention, the reconciler, the API's event tail): run a round when woken (a NOTIFY, a timer, a round asking to run
// again), never two rounds at once, once more right after a round during which it was woken, and a failing round
// warned about at most every so often rather than at every tick. Each loop is then only its round.

export type WakeLoopOptions = {
  /** One round. Resolves with milliseconds until it wants to run again (null/undefined: only when woken). */
  round(): Promise<number | null | void>;
  /** Runs a round at least this often, woken or not (e.g. jobs falling due, a safety poll). Default: never. */
  everyMs?: number;
  /** Rounds start at least this far apart: wake-ups in between are gathered into one. Default 0. */
  minGapMs?: number;
  /** How long to wait before the next round after a failed one. Default `everyMs`, else 1 s. */
  retryMs?: number;
  /** Reports a failed round; called at most once per `quietMs`. */
  warn(error: Error): void;
  /** Default 30 s. */
  quietMs?: number;
};

export class WakeLoop {
  private active = false;
  private running: Promise<void> | null = null;
  private again = false;
  private lastStart = 0;
  private lastWarning = -Infinity;
  private interval: NodeJS.Timeout | undefined;
  private later: NodeJS.Timeout | undefined;
  private gap: NodeJS.Timeout | undefined;

  constructor(private readonly options: WakeLoopOptions) {}

  get isActive(): boolean {
    return this.active;
  }

  /** Starts the loop with a round now. */
  start(): void {
    if (this.active) return;
    this.active = true;
    if (this.options.everyMs !== undefined) {
      this.interval = setInterval(() => this.wake(), this.options.everyMs);
      this.interval.unref();
    }
    this.wake();
  }

  /** Stops waking and waits for the round in progress. */
  async stop(): Promise<void> {
    this.active = false;
    clearInterval(this.interval);
    clearTimeout(this.later);
    clearTimeout(this.gap);
    await this.running;
  }

  /** Runs a round now, or right after the one in progress. */
  wake(): void {
    if (!this.active) return;
    if (this.running) {
      this.again = true;
      return;
    }
    const gap = (this.options.minGapMs ?? 0) - (Date.now() - this.lastStart);
    if (gap > 0) {
      this.gap ??= setTimeout(() => {
        this.gap = undefined;
        this.wake();
      }, gap);
      return;
    }
    this.again = false;
    this.lastStart = Date.now();
    this.running = this.options
      .round()
      .then(
        (nextMs) => nextMs,
        (error: Error) => {
          if (Date.now() - this.lastWarning >= (this.options.quietMs ?? 30_000)) {
            this.lastWarning = Date.now();
            this.options.warn(error);
          }
          return this.options.retryMs ?? this.options.everyMs ?? 1_000;
        },
      )
      .then((nextMs) => {
        this.running = null;
        if (!this.active) return;
        if (this.again) return this.wake();
        this.schedule(nextMs ?? null);
      });
  }

  /** A round of its own asks to run again in `ms` (the earliest such request wins until it fires). */
  private schedule(ms: number | null): void {
    clearTimeout(this.later);
    this.later = undefined;
    if (ms === null) return;
    this.later = setTimeout(() => this.wake(), Math.max(0, Math.ceil(ms)));
    this.later.unref();
  }
}
