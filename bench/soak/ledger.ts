// The soak's books (docs/reference/time.md#partitions-and-retention): every job it sent has a sequence number carried in its payload as `soak-<n>`, so
// that what a provider fake received, what Postgres holds and what retention deleted can all be tied back to it.
// Arrays are typed and sized once for the whole run (millions of jobs), never a Map of ids.

/** What became of a sequence number, as far as the soak knows. */
export const enum Fate {
  Unsent = 0,
  /** POST /jobs answered 202. */
  Accepted = 1,
  /** POST /jobs answered something else, or the request failed: the job was never promised. */
  Refused = 2,
  /** Seen final (done, failed, cancelled) in Postgres just before a retention pass, which may then delete it. */
  Settled = 3,
}

export const MARKER = /soak-(\d+)/;

export class Ledger {
  readonly fate: Uint8Array;
  /** Milliseconds since the run began when POST /jobs was sent (the job is created during that request). */
  readonly sentAt: Float64Array;
  /** Requests the providers received per job. */
  readonly deliveries: Uint8Array;
  /** Milliseconds since the run began of the first delivery, and of the last one (a duplicate's). */
  readonly firstDelivery: Float64Array;
  readonly lastDelivery: Float64Array;
  /** Final status seen at settlement: 1 done, 2 failed, 3 cancelled. */
  readonly settledStatus: Uint8Array;
  sent = 0;

  constructor(readonly capacity: number) {
    this.fate = new Uint8Array(capacity);
    this.sentAt = new Float64Array(capacity);
    this.deliveries = new Uint8Array(capacity);
    this.firstDelivery = new Float64Array(capacity);
    this.lastDelivery = new Float64Array(capacity);
    this.settledStatus = new Uint8Array(capacity);
  }

  next(at: number): number {
    if (this.sent >= this.capacity) throw new Error(`the ledger holds ${this.capacity} jobs; raise --capacity`);
    this.sentAt[this.sent] = at;
    return this.sent++;
  }

  /**
   * Records a provider's request; answers, for a first delivery, its start lateness: ms from the POST that created
   * the job to the handler's request reaching the provider (the API's own latency included); else null.
   */
  delivered(seq: number, at: number): number | null {
    if (seq >= this.capacity) return null;
    const n = this.deliveries[seq]!;
    this.deliveries[seq] = Math.min(255, n + 1);
    this.lastDelivery[seq] = at;
    if (n > 0) return null;
    this.firstDelivery[seq] = at;
    return Math.max(0, at - this.sentAt[seq]!);
  }

  settle(seq: number, status: string): void {
    if (seq >= this.capacity || this.fate[seq] === Fate.Refused || this.fate[seq] === Fate.Unsent) return;
    this.fate[seq] = Fate.Settled;
    this.settledStatus[seq] = status === "done" ? 1 : status === "failed" ? 2 : 3;
  }
}

/** p-th percentile (0..1) of `values`, sorted in place; NaN for none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  values.sort((a, b) => a - b);
  return values[Math.min(values.length - 1, Math.floor(p * values.length))]!;
}
