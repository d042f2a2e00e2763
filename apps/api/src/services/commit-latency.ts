// Backpressure on Postgres commit latency (SPEC §22's "or commit latency past its threshold"). The API's grouped job
// inserts (job-writer.ts) report how long each took from sending the statement to its commit being acknowledged —
// the time a request waits on Postgres to make its jobs durable — and every admission reports which organization
// asked. While the p99 of the last few seconds' inserts is past BACKPRESSURE_COMMIT_P99_MS, backpressure.ts sheds the
// organizations asking for most of the creations with the due-count path's rule (`organizationsToShed`): the fewest
// of the largest askers whose share covers the excess, here the part of the demand that would bring the p99 back to
// the threshold if latency grew with the load (1 − threshold / p99). Demand counts refused requests too, so
// a flood that is being refused stays the largest asker and a quiet organization is not shed in its place. Purely
// in-process: nothing is read from a database that is already slow.
/** The span the p99 and the demand are taken over. */
export const COMMIT_LATENCY_WINDOW_MS = 5_000;
/** Fewer inserts than this in the window decide nothing (one slow commit after a quiet spell is not a trend). */
export const COMMIT_LATENCY_MIN_SAMPLES = 10;
/** Samples kept at most (the newest): enough for a p99, bounded under any load. */
const MAX_SAMPLES = 2_000;

export class CommitLatency {
  /** [time, milliseconds] of the latest inserts, oldest first. */
  private samples: [number, number][] = [];
  /** Requests per organization in the current and the previous half window. */
  private demand = new Map<string, number>();
  private previousDemand = new Map<string, number>();
  private demandSince: number;

  constructor(private readonly now: () => number = Date.now) {
    this.demandSince = now();
  }

  /** An insert's time from sending to its acknowledged commit. */
  record(ms: number): void {
    this.samples.push([this.now(), ms]);
    if (this.samples.length > MAX_SAMPLES) this.samples.splice(0, this.samples.length - MAX_SAMPLES);
  }

  /** An organization asked to create jobs (admitted or not). */
  asked(orgId: string): void {
    this.rotate();
    this.demand.set(orgId, (this.demand.get(orgId) ?? 0) + 1);
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

  /** Requests per organization over about the window, largest first. */
  demandByOrg(): { orgId: string; due: number }[] {
    this.rotate();
    const asked = new Map(this.previousDemand);
    for (const [orgId, n] of this.demand) asked.set(orgId, (asked.get(orgId) ?? 0) + n);
    return [...asked].map(([orgId, due]) => ({ orgId, due })).sort((a, b) => b.due - a.due || (a.orgId < b.orgId ? -1 : 1));
  }

  private rotate(): void {
    const now = this.now();
    if (now - this.demandSince < COMMIT_LATENCY_WINDOW_MS / 2) return;
    // A whole window without asking forgets everything; otherwise the current half becomes the previous one.
    this.previousDemand = now - this.demandSince < COMMIT_LATENCY_WINDOW_MS ? this.demand : new Map<string, number>();
    this.demand = new Map();
    this.demandSince = now;
  }
}
