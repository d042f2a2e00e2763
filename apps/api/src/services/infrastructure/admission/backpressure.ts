// Backpressure (docs/reference/tenants.md#usage-quotas-and-backpressure): while the deployment's due backlog is over BACKPRESSURE_DUE_MAX, new jobs from the
// organizations holding the largest share of it are refused with 429 `overloaded`, and everyone else is still served.
// Which organizations: the fewest of the largest holders whose backlog together covers the excess over the limit (a
// flood of one organization names it alone; two equal floods name both), so an organization with little due is never
// shed for another's flood. The figure is read at most once per BACKPRESSURE_REFRESH_MS per process, in the
// background of the requests that need it (a request never waits for it); /readyz does not look at it. Between two
// reads, each admission adds the jobs it lets in to the figure (per process and organization), so parallel batches
// inside one read's second cannot overshoot the limit. A read takes off exactly the jobs its snapshot holds: those
// whose write had ended when it took its connection, and of the writes under way then, those it finds committed (a
// write can commit before the snapshot and report after it); what is admitted and not yet in a snapshot stays counted.
// Counted twice, an organization would be shed under the limit.
// With BACKPRESSURE_COMMIT_P99_MS, commit latency sheds too, with the same rule and the same 429: while the p99 of
// the API's inserts (commit-latency.ts) is past it, the organizations asking for most of the creations are shed — the
// fewest of the largest askers whose share covers the part of the demand that would bring the p99 back to the
// threshold if latency grew with the load (1 − threshold / p99). Demand counts refused requests too, so a flood that
// is being refused stays the largest asker and a quiet organization is not shed in its place.
import { readDueBacklog } from "@conveyor/db";
import type { AppDeps } from "../../../context";
import { AppError } from "../errors";
import { COMMIT_LATENCY_WINDOW_MS, CommitLatency } from "./commit-latency";

export const BACKPRESSURE_REFRESH_MS = 1_000;
/** What a refused client is told to wait: about the time a worker fleet needs to take a bite out of the backlog. */
export const OVERLOADED_RETRY_AFTER_SECONDS = 10;

/** The organizations to shed: the largest holders, largest first, until their backlog covers `due - max`. */
export function organizationsToShed(byOrg: readonly { orgId: string; due: number }[], due: number, max: number): Set<string> {
  const shed = new Set<string>();
  let covered = 0;
  for (const { orgId, due: held } of byOrg) {
    if (covered >= due - max) break;
    shed.add(orgId);
    covered += held;
  }
  return shed;
}

/** Requests to create jobs per organization (admitted or not) over about the commit latency's window. */
export class Demand {
  /** Requests per organization in the current and the previous half window. */
  private current = new Map<string, number>();
  private previous = new Map<string, number>();
  private since: number;

  constructor(private readonly now: () => number = Date.now) {
    this.since = now();
  }

  /** An organization asked to create jobs (admitted or not). */
  asked(orgId: string): void {
    this.rotate();
    this.current.set(orgId, (this.current.get(orgId) ?? 0) + 1);
  }

  /** Requests per organization over about the window, largest first. */
  byOrg(): { orgId: string; due: number }[] {
    this.rotate();
    const asked = new Map(this.previous);
    for (const [orgId, n] of this.current) asked.set(orgId, (asked.get(orgId) ?? 0) + n);
    return [...asked].map(([orgId, due]) => ({ orgId, due })).sort((a, b) => b.due - a.due || (a.orgId < b.orgId ? -1 : 1));
  }

  private rotate(): void {
    const now = this.now();
    if (now - this.since < COMMIT_LATENCY_WINDOW_MS / 2) return;
    // A whole window without asking forgets everything; otherwise the current half becomes the previous one.
    this.previous = now - this.since < COMMIT_LATENCY_WINDOW_MS ? this.current : new Map<string, number>();
    this.current = new Map();
    this.since = now;
  }
}

/** An admitted creation's write under way: its jobs' ids, and how many of them a read has already found committed. */
export type Flight = { orgId: string; ids: readonly string[]; count: number; seen: number };

/** Most ids of writes under way a read looks up (past them, a write that commits before the snapshot counts twice until the next read). */
const FLIGHT_IDS_CHECKED = 10_000;

/** A 429 `overloaded`, with what it is for (`reason`: the label of /metrics' refusals). */
export class OverloadedError extends AppError {
  constructor(
    readonly reason: "overloaded" | "commit_latency",
    message: string,
  ) {
    super("overloaded", message, undefined, { "Retry-After": String(OVERLOADED_RETRY_AFTER_SECONDS) });
  }
}

export class Backpressure {
  /** The last read: the due backlog (capped just past the limit) and, when over it, each organization's share. */
  private read: { due: number; byOrg: readonly { orgId: string; due: number }[] } = { due: 0, byOrg: [] };
  /** Jobs this process admitted whose write has not ended yet, per organization: this read's and the last one's. */
  private pending = new Map<string, number>();
  private pendingBefore = new Map<string, number>();
  /** Jobs this process wrote that no read has seen yet, per organization. */
  private written = new Map<string, number>();
  /** Admitted creations whose write is under way (still counted in `pending` until a read finds them or they end). */
  private readonly flights = new Set<Flight>();
  /** Every count above together. */
  private addedTotal = 0;
  /** The organizations shed by the read plus the additions; null once either changed (computed on the next ask). */
  private shed: Set<string> | null = new Set();
  private readAt = 0;
  private reading: Promise<void> | null = null;
  private lastWarning = 0;
  /** With BACKPRESSURE_COMMIT_P99_MS: the inserts' commit latency, and who asks for creations meanwhile. */
  private readonly latency: { commits: CommitLatency; demand: Demand } | null;
  private latencyShed = new Set<string>();
  private latencyAt = 0;

  constructor(private readonly deps: Pick<AppDeps, "config" | "db" | "logger">) {
    this.latency = deps.config.BACKPRESSURE_COMMIT_P99_MS === undefined ? null : { commits: new CommitLatency(), demand: new Demand() };
  }

  /** A grouped job insert took `ms` from sending to its commit (job-writer.ts reports every one). */
  recordCommit(ms: number): void {
    this.latency?.commits.record(ms);
  }

  /**
   * Throws 429 `overloaded` when `orgId` is among the organizations being shed; otherwise counts the `count` jobs it
   * is about to add into the backlog until a read sees them (wrote() or forget() says how the write ended).
   */
  refuseIfShed(orgId: string, count = 1): void {
    this.refuseIfShedByLatency(orgId);
    const max = this.deps.config.BACKPRESSURE_DUE_MAX;
    if (max === undefined) return;
    if (Date.now() - this.readAt >= BACKPRESSURE_REFRESH_MS && !this.reading) this.reading = this.refresh(max).finally(() => (this.reading = null));
    if (this.shedNow(max).has(orgId)) {
      throw new OverloadedError(
        "overloaded",
        "The deployment is over its backlog limit and your organization holds most of it; no job was created. Retry after the time in Retry-After.",
      );
    }
    this.count(this.pending, orgId, count);
  }

  /** Whether admitted jobs are counted at all (BACKPRESSURE_DUE_MAX is set): only then must a write say how it ended. */
  get counts(): boolean {
    return this.deps.config.BACKPRESSURE_DUE_MAX !== undefined;
  }

  /** An admitted creation's write of the jobs `ids` (`count` admitted) begins; wrote() or forget() says how it ended. */
  writing(orgId: string, ids: readonly string[], count: number): Flight {
    const flight = { orgId, ids, count, seen: 0 };
    if (this.counts) this.flights.add(flight);
    return flight;
  }

  /** The write ended with its jobs committed: those no read has found yet stay counted until a read whose snapshot holds them. */
  wrote(flight: Flight): void {
    if (!this.counts) return;
    this.flights.delete(flight);
    this.count(this.written, flight.orgId, this.unpend(flight.orgId, flight.count - flight.seen));
  }

  /** Admitted jobs that were not added after all (a quota refused them, the write failed): they leave the count. */
  forget(orgId: string, count: number, flight?: Flight): void {
    if (!this.counts) return;
    if (flight) this.flights.delete(flight);
    this.unpend(orgId, count - (flight?.seen ?? 0));
  }

  /** Takes up to `count` of the organization's pending jobs off (the older read's first); answers how many. */
  private unpend(orgId: string, count: number): number {
    let left = count;
    for (const counts of [this.pendingBefore, this.pending]) {
      const n = Math.min(left, counts.get(orgId) ?? 0);
      this.count(counts, orgId, -n);
      left -= n;
    }
    return count - left;
  }

  private count(counts: Map<string, number>, orgId: string, n: number): void {
    if (n === 0) return;
    const now = (counts.get(orgId) ?? 0) + n;
    if (now > 0) counts.set(orgId, now);
    else counts.delete(orgId);
    this.addedTotal += n;
    this.shed = null;
  }

  /** The organizations to shed by the last read plus this process's additions since (recomputed only after a change). */
  private shedNow(max: number): Set<string> {
    if (this.shed) return this.shed;
    const due = this.read.due + this.addedTotal;
    if (due <= max) return (this.shed = new Set());
    const byOrg = new Map(this.read.byOrg.map((o) => [o.orgId, o.due]));
    for (const counts of [this.pendingBefore, this.pending, this.written]) for (const [orgId, n] of counts) byOrg.set(orgId, (byOrg.get(orgId) ?? 0) + n);
    const ranked = [...byOrg].map(([orgId, held]) => ({ orgId, due: held })).sort((a, b) => b.due - a.due || (a.orgId < b.orgId ? -1 : 1));
    return (this.shed = organizationsToShed(ranked, due, max));
  }

  private refuseIfShedByLatency(orgId: string): void {
    const threshold = this.deps.config.BACKPRESSURE_COMMIT_P99_MS;
    if (!this.latency || threshold === undefined) return;
    this.latency.demand.asked(orgId);
    if (Date.now() - this.latencyAt >= BACKPRESSURE_REFRESH_MS) {
      this.latencyAt = Date.now();
      const p99 = this.latency.commits.p99();
      const demand = p99 !== null && p99 > threshold ? this.latency.demand.byOrg() : [];
      const total = demand.reduce((n, o) => n + o.due, 0);
      this.latencyShed = demand.length ? organizationsToShed(demand, total, total * (threshold / p99!)) : new Set();
    }
    if (!this.latencyShed.has(orgId)) return;
    throw new OverloadedError(
      "commit_latency",
      "The deployment's database is committing slowly and your organization asks for most of the new jobs; no job was created. Retry after the time in Retry-After.",
    );
  }

  /** Reads the figure now (tests, and the first request after a quiet spell use the one read in the background). */
  async refresh(max = this.deps.config.BACKPRESSURE_DUE_MAX): Promise<void> {
    if (max === undefined) return;
    // What was written before the read's snapshot is in what it reads; what is written after stays counted. The mark
    // is taken once the read holds a connection, right before its statement; of the writes under way then, the read
    // looks up which committed before its snapshot.
    let before = new Map<string, number>();
    let underWay: Flight[] = [];
    try {
      const backlog = await readDueBacklog(this.deps.db.pool, max, undefined, () => {
        before = new Map(this.written);
        underWay = [...this.flights];
        return underWay.flatMap((f) => f.ids).slice(0, FLIGHT_IDS_CHECKED);
      });
      this.read = {
        due:
          backlog.due > max
            ? Math.max(
                backlog.due,
                backlog.byOrg.reduce((n, o) => n + o.due, 0),
              )
            : backlog.due,
        byOrg: backlog.byOrg,
      };
      for (const [orgId, n] of before) this.count(this.written, orgId, -Math.min(n, this.written.get(orgId) ?? 0));
      for (const flight of underWay) {
        const seen = Math.min(flight.count, flight.ids.filter((id) => backlog.seen.has(id)).length);
        if (seen <= flight.seen) continue;
        // In this read now: off the count of what is under way, or, for a write that ended meanwhile, of what it wrote.
        if (this.flights.has(flight)) this.unpend(flight.orgId, seen - flight.seen);
        else this.count(this.written, flight.orgId, -Math.min(seen - flight.seen, this.written.get(flight.orgId) ?? 0));
        flight.seen = seen;
      }
      // An admission whose write never said how it ended (a request that failed between the two) is not counted
      // forever: pending through a whole read, it is let go.
      for (const [orgId, n] of this.pendingBefore) this.count(this.pendingBefore, orgId, -n);
      [this.pendingBefore, this.pending] = [this.pending, this.pendingBefore];
      this.shed = null;
    } catch (error) {
      // Keep the last figure: a slow read must not open the gates or close them for everyone.
      if (Date.now() - this.lastWarning > 30_000) {
        this.lastWarning = Date.now();
        this.deps.logger.warn("backpressure: the due backlog could not be read", { error: { message: (error as Error).message } });
      }
    } finally {
      this.readAt = Date.now();
    }
  }

  /** Waits for a read in progress (a test's or shutdown's). */
  async settle(): Promise<void> {
    await this.reading;
  }
}
