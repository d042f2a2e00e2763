// Quota blocks (docs/reference/tenants.md#usage-quotas-and-backpressure, issue 36; migration 20261128130000_quota_blocks): while an organization is far from its
// quotas, this process takes a block of them (jobs of the UTC day and month, pending jobs, payload bytes) under the
// organization's quota lock, once per block, and spends it here: the creations it covers go through the shared
// grouped insert like those of an organization without a quota — no transaction, no lock, no extra statement. Every
// quota check counts what a block may still add as used, so the quotas stay exact whatever the number of processes.
// Near a limit the block is given back and creations take the exact check (quotas.ts). A block is renewed only when
// none of the inserts that spent from it is in flight, so the row it leaves never forgets a job not yet counted; a
// crashed process's block is under-used until its period ends, a process that stops gives its blocks back (close).
import { randomUUID } from "node:crypto";
import type pg from "pg";
import {
  jsonbTextBytes,
  QUOTA_NAMES,
  releaseQuotaBlocks,
  renewQuotaBlock,
  type NewJob,
  type QuotaBlockAllowance,
  type QuotaBlockSizes,
  type QuotaLimits,
} from "@conveyor/db";

/** After a renewal that granted nothing (or failed), how long an organization's creations take the exact check. */
const RETRY_BLOCK_MS = 1_000;

const NOTHING: QuotaBlockAllowance = { jobs: 0, pendingJobs: 0, bytes: 0 };

type Block = {
  /** The UTC day the block is for ('' before the first grant). */
  day: string;
  limits: QuotaLimits | null;
  /** What may still be spent here. */
  left: QuotaBlockAllowance;
  /** Creations spent from it whose insert has not settled. */
  inFlight: number;
  settled: (() => void)[];
  renewing: Promise<void> | null;
  retryAt: number;
};

/** A creation paid from a block: `settle` once its insert has answered, with the ids a dedupe key refused (not stored). */
export type BlockSpend = { settle(notInserted?: { has(id: string): boolean }): void };

// The limits are one cached object per organization until the cache renews it: the same object is the same limits.
const sameLimits = (a: QuotaLimits | null, b: QuotaLimits) => a === b || (a !== null && QUOTA_NAMES.every((name) => a[name] === b[name]));

export class QuotaBlocks {
  /** This process's blocks are held under this id. */
  readonly holder = randomUUID();
  private readonly blocks = new Map<string, Block>();
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly sizes?: QuotaBlockSizes,
  ) {}

  /**
   * Pays for `jobs` (created at `at`) from the organization's block, renewing it when it is short; null: the block
   * cannot pay (near a limit, or the database would not grant one) and the creation takes the exact check.
   */
  async spend(orgId: string, limits: QuotaLimits, at: Date, jobs: readonly NewJob[]): Promise<BlockSpend | null> {
    if (this.closed) return null;
    const day = utcDay(at);
    // What the creation takes of each quota in force (nothing of the others).
    const periods = limits.jobs_per_day !== null || limits.jobs_per_month !== null;
    const bytes = limits.payload_bytes_max === null ? null : jobs.map((job) => jsonbTextBytes(job.payloadJson));
    let allBytes = 0;
    if (bytes) for (const n of bytes) allBytes += n;
    const need: QuotaBlockAllowance = { jobs: periods ? jobs.length : 0, pendingJobs: limits.pending_max === null ? 0 : jobs.length, bytes: allBytes };
    let block = this.blocks.get(orgId);
    if (!block) this.blocks.set(orgId, (block = { day: "", limits: null, left: { ...NOTHING }, inFlight: 0, settled: [], renewing: null, retryAt: 0 }));
    for (let renewed = false; ; renewed = true) {
      while (block.renewing) await block.renewing;
      if (block.day === day && sameLimits(block.limits, limits) && fits(block.left, need)) break;
      if (renewed || Date.now() < block.retryAt || this.closed) return null;
      block.renewing = this.renew(orgId, block, limits, at, day).finally(() => (block.renewing = null));
    }
    block.left = { jobs: block.left.jobs - need.jobs, pendingJobs: block.left.pendingJobs - need.pendingJobs, bytes: block.left.bytes - need.bytes };
    block.inFlight++;
    return new Spend(block, jobs, need, bytes);
  }

  /** Gives back every block once the inserts that spent from them have settled (the process is stopping). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.blocks.values()].map((block) => this.settledAll(block)));
    if (this.blocks.size) await releaseQuotaBlocks(this.pool, this.holder);
  }

  private settledAll(block: Block): Promise<void> {
    return block.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => block.settled.push(resolve));
  }

  private async renew(orgId: string, block: Block, limits: QuotaLimits, at: Date, day: string): Promise<void> {
    await this.settledAll(block);
    // What is left of a block of another day is not kept: its row moves to the new day.
    const keep = block.day === day ? block.left : NOTHING;
    block.left = { ...NOTHING };
    block.limits = limits;
    block.day = day;
    try {
      const granted = await renewQuotaBlock(this.pool, orgId, this.holder, limits, at, keep, this.sizes);
      if (granted) block.left = granted;
      else block.retryAt = Date.now() + RETRY_BLOCK_MS;
    } catch {
      // Whether the row changed is not known: nothing is spent from it (it may stay counted: never over a quota).
      block.retryAt = Date.now() + RETRY_BLOCK_MS;
    }
  }
}

/** A creation paid from a block (a class: one object per creation, no closure). */
class Spend implements BlockSpend {
  private open = true;

  constructor(
    private readonly block: Block,
    private readonly jobs: readonly NewJob[],
    private readonly need: QuotaBlockAllowance,
    private readonly bytes: number[] | null,
  ) {}

  settle(notInserted?: { has(id: string): boolean }): void {
    if (!this.open) return;
    this.open = false;
    const { block, jobs, need, bytes } = this;
    // Jobs a dedupe key refused were not stored: what they took goes back to the block.
    if (notInserted) {
      for (let i = 0; i < jobs.length; i++) {
        if (!notInserted.has(jobs[i]!.id)) continue;
        const { left } = block;
        block.left = { jobs: left.jobs + (need.jobs && 1), pendingJobs: left.pendingJobs + (need.pendingJobs && 1), bytes: left.bytes + (bytes?.[i] ?? 0) };
      }
    }
    if (--block.inFlight === 0) for (const resolve of block.settled.splice(0)) resolve();
  }
}

/** `at`'s UTC day (YYYY-MM-DD), kept for the second it was last asked: every creation asks. */
let lastDay = { second: -1, day: "" };
function utcDay(at: Date): string {
  const second = Math.floor(at.getTime() / 1000);
  if (second !== lastDay.second) lastDay = { second, day: at.toISOString().slice(0, 10) };
  return lastDay.day;
}

/** Whether what is left pays for `need` (which is nothing of the quotas not in force). */
function fits(left: QuotaBlockAllowance, need: QuotaBlockAllowance): boolean {
  return left.jobs >= need.jobs && left.pendingJobs >= need.pendingJobs && left.bytes >= need.bytes;
}
