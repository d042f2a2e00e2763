// Quotas on job creation (docs/reference/tenants.md#usage-quotas-and-backpressure). An organization with no quota in force goes through the shared JobWriter as
// before (the check costs one in-process cache lookup). One with a quota gets a writer that, far from the limits, pays
// for a creation from this process's quota block (quota-blocks.ts) and writes it like any other; near them (no block
// granted) every creation runs in a transaction that inserts, then enforces the quotas under the organization's lock
// (@conveyor/db quotas.ts) — still grouped with other requests by the JobWriter. Both count every block as used, so
// concurrent posts on any number of API processes never pass a limit. A refusal is 429
// `quota_exceeded` naming the quota, with RateLimit headers and Retry-After (the next UTC day or month for the period
// quotas); nothing of a refused request is stored.
import { quotaDefaults } from "@conveyor/config";
import type { JobStatus } from "@conveyor/contracts";
import {
  debounceJob,
  enforceQuotas,
  findQuotaOverrides,
  hasQuota,
  inTransaction,
  insertJobIdempotently,
  insertJobs,
  jobStatuses,
  limitsInForce,
  QuotaExceededError,
  quotaCheckSql,
  quotaPassed,
  quotaRefusal,
  readQuotaUse,
  type Debounced,
  type IdempotentInsert,
  type NewJob,
  type QuotaLimits,
  type QuotaName,
  type Refused,
} from "@conveyor/db";
import type pg from "pg";
import type { AppDeps } from "../../../context";
import { AppError } from "../errors";
import { QuotaBlocks } from "./quota-blocks";
import type { GraphPrelude, JobInserter, JobWriter } from "../job-writer";

/** How long after a refusal an organization's posts are checked before inserting. */
const REFUSED_RECHECK_MS = 1_000;

/** Each organization's quotas in force, cached for QUOTA_CACHE_MS (a setting). */
export class QuotaBook {
  private readonly cache = new Map<string, { limits: QuotaLimits; until: number }>();
  /** Organizations refused here lately: until when their posts are checked before anything is inserted. */
  private readonly refused = new Map<string, number>();
  private readonly defaults: QuotaLimits;

  /** This process's quota blocks: what it may create without the quota lock while far from the limits. */
  private readonly blocks: QuotaBlocks;

  constructor(private readonly deps: Pick<AppDeps, "config" | "db">) {
    this.defaults = quotaDefaults(deps.config);
    this.blocks = new QuotaBlocks(deps.db.pool);
  }

  /** Gives this process's quota blocks back, once the creations they paid for have settled (the API is stopping). */
  close(): Promise<void> {
    return this.blocks.close();
  }

  async limitsFor(orgId: string): Promise<QuotaLimits> {
    const cached = this.cache.get(orgId);
    if (cached && cached.until > Date.now()) return cached.limits;
    const overrides = (await findQuotaOverrides(this.deps.db.pool, [orgId])).get(orgId) ?? null;
    const limits = limitsInForce(this.defaults, overrides);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(orgId, { limits, until: Date.now() + this.deps.config.QUOTA_CACHE_MS });
    return limits;
  }

  /** The 429 of a refusal, remembering the organization for REFUSED_RECHECK_MS. */
  refusal(orgId: string, error: QuotaExceededError): AppError {
    if (this.refused.size > 10_000) this.refused.clear();
    this.refused.set(orgId, Date.now() + REFUSED_RECHECK_MS);
    return quotaExceeded(error);
  }

  /**
   * The writer for `orgId`'s creations: the shared one without a quota; with one, a writer that pays from this
   * process's quota block while far from the limits and otherwise enforces them in each creation's transaction (and,
   * shortly after a refusal, refuses at once while a quota is still used up).
   */
  async writerFor(orgId: string, shared: JobWriter, at: Date): Promise<JobInserter> {
    const limits = await this.limitsFor(orgId);
    if (!hasQuota(limits)) return shared;
    // Refused lately: while it stays at a limit, refused by one read without inserting anything (a flood past its
    // quota costs a read per post, not an insert rolled back). Otherwise nothing is read before the insert.
    if ((this.refused.get(orgId) ?? 0) > Date.now()) {
      const before = await readQuotaUse(this.deps.db.pool, orgId, limits, at);
      const full = quotaPassed(limits, before, true);
      if (full) throw this.refusal(orgId, new QuotaExceededError(full, limits[full]!, before[full], at));
    }
    return new QuotaWriter(this, this.blocks, shared, this.deps.db.pool, orgId, limits, at);
  }
}

/**
 * One creation's writer for an organization with a quota in force (made per request: a class, so that a request
 * allocates one object rather than a closure per method).
 */
class QuotaWriter implements JobInserter {
  constructor(
    private readonly book: QuotaBook,
    private readonly blocks: QuotaBlocks,
    private readonly shared: JobWriter,
    private readonly pool: pg.Pool,
    private readonly orgId: string,
    private readonly limits: QuotaLimits,
    private readonly at: Date,
  ) {}

  async insert(jobs: NewJob[]): Promise<Refused> {
    // Far from the limits: paid from this process's block, inserted like the jobs of an organization without a quota.
    const spent = await this.blocks.spend(this.orgId, this.limits, this.at, jobs);
    if (spent) {
      try {
        const refused = await this.shared.insert(jobs);
        spent.settle(refused);
        return refused;
      } finally {
        spent.settle();
      }
    }
    // Near one: grouped with other requests, in a transaction that enforces the quota with its COMMIT (job-writer.ts).
    const { orgId, limits, at } = this;
    return this.shared
      .insert(jobs, { orgId, sql: quotaCheckSql(orgId, limits, at), refusal: (error) => quotaRefusal(error, limits, at) })
      .catch((error: unknown) => this.rethrow(error));
  }

  insertGraph(jobs: NewJob[], before?: GraphPrelude): Promise<JobStatus[]> {
    return inTransaction(this.pool, async (tx) => {
      await before?.(tx);
      await insertJobs(tx, jobs);
      await this.guard(tx);
      return jobStatuses(
        tx,
        jobs.map((j) => j.id),
      );
    }).catch((error: unknown) => this.rethrow(error));
  }

  insertIdempotently(job: NewJob, idempotency: { key: string; requestHash: Buffer; ttlMs: number }): Promise<IdempotentInsert> {
    return insertJobIdempotently(this.pool, job, idempotency.key, idempotency.requestHash, idempotency.ttlMs, (tx) => this.guard(tx)).catch((error: unknown) =>
      this.rethrow(error),
    );
  }

  debounce(job: NewJob & { debounceKey: string }, debounceMs: number): Promise<Debounced> {
    return debounceJob(this.pool, job, debounceMs, (tx) => this.guard(tx)).catch((error: unknown) => this.rethrow(error));
  }

  /** The exact check, in a creation's transaction. */
  private guard(tx: pg.PoolClient): Promise<void> {
    return enforceQuotas(tx, this.orgId, this.limits, this.at);
  }

  private rethrow(error: unknown): never {
    throw error instanceof QuotaExceededError ? this.book.refusal(this.orgId, error) : error;
  }
}

const QUOTA_TEXT: Record<QuotaName, string> = {
  jobs_per_day: "jobs created per UTC day",
  jobs_per_month: "jobs created per UTC month",
  pending_max: "pending jobs held at once",
  payload_bytes_max: "payload bytes stored at once",
};

/** Seconds until the quota frees up: the next UTC day or month for the period quotas, a short wait for the others. */
export function quotaResetSeconds(quota: QuotaName, at: Date): number {
  const next =
    quota === "jobs_per_day"
      ? Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1)
      : quota === "jobs_per_month"
        ? Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)
        : at.getTime() + 30_000;
  return Math.max(1, Math.ceil((next - at.getTime()) / 1000));
}

/** The 429 of a refused creation. */
export function quotaExceeded(error: QuotaExceededError): AppError {
  const reset = quotaResetSeconds(error.quota, error.at);
  const window = error.quota === "jobs_per_day" ? 86_400 : error.quota === "jobs_per_month" ? reset : 30;
  return new AppError(
    "quota_exceeded",
    `Your organization's quota ${error.quota} (${error.limit} ${QUOTA_TEXT[error.quota]}) does not leave room for these jobs; nothing was created.`,
    [{ path: `quota.${error.quota}`, message: `allows ${error.limit}; ${error.used} in use` }],
    {
      "Retry-After": String(reset),
      "RateLimit-Limit": String(error.limit),
      "RateLimit-Remaining": String(Math.max(0, error.limit - error.used)),
      "RateLimit-Reset": String(reset),
      "RateLimit-Policy": `${error.limit};w=${window}`,
    },
  );
}
