// Backpressure on Postgres commit latency (docs/reference/tenants.md#usage-quotas-and-backpressure's "or commit latency past its threshold"): the p99 of the API's
// grouped job inserts (../job-writer.ts reports how long each took from sending the statement to its commit being
// acknowledged — the time a request waits on Postgres to make its jobs durable) over the last few seconds. Whom to shed
// while it is past BACKPRESSURE_COMMIT_P99_MS is backpressure.ts's to decide, from the demand it counts as creations
// are admitted: nothing here knows an organization. Purely in-process: nothing is read from a database that is
// already slow.
/** The span the p99 is taken over (and the demand backpressure.ts counts beside it). */
export const COMMIT_LATENCY_WINDOW_MS = 5_000;
/** Fewer inserts than this in the window decide nothing (one slow commit after a quiet spell is not a trend). */
export const COMMIT_LATENCY_MIN_SAMPLES = 10;
/** Samples kept at most (the newest): enough for a p99, bounded under any load. */
const MAX_SAMPLES = 2_000;

export class CommitLatency {
  /** [time, milliseconds] of the latest inserts, oldest first. */
  private samples: [number, number][] = [];

  constructor(private readonly now: () => number = Date.now) {}

  /** An insert's time from sending to its acknowledged commit. */
  record(ms: number): void {
    this.samples.push([this.now(), ms]);
    if (this.samples.length > MAX_SAMPLES) this.samples.splice(0, this.samples.length - MAX_SAMPLES);
  }

  /** The p99 of the window's inserts, or null with too few of them. */
  p99(): number | null {
    const since = this.now() - COMMIT_LATENCY_WINDOW_MS;
    let first = 0;
    while (first < this.samples.length && this.samples[first]![0] < since) first++;
    if (first) this.samples.splice(0, first);
    if (this.samples.length < COMMIT_LATENCY_MIN_SAMPLES) return null;
    const sorted = this.samples.map(([, ms]) => ms).sort((a, b) => a - b);
    return sorted[Math.ceil(sorted.length * 0.99) - 1]!;
  }
}
