// Where a heavy read (lists, search, stats, usage, the audit log) goes when a replica is configured (docs/reference/high-availability.md#high-availability): to the
// replica, unless the person or key asking changed something in the last DATABASE_READ_AFTER_WRITE_MS — then to the
// primary, so they read their own change. "Changed something" is any state-changing request, marked before its
// handler runs (a mark is never later than the write it covers), in Redis so every API replica sees it, and in this
// process too, so a Redis hiccup on the mark still sends this replica's next read to the primary. A mark that
// cannot be read sends the read to the primary as well: a lost mark may only cost the primary a read.
import type pg from "pg";
import type { Database } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import type { RedisClient } from "@conveyor/queue";

export type ReadRoutingOptions = {
  db: Database;
  redis: RedisClient;
  /** Redis key prefix (the hash tag form, as for every other key). */
  prefix: string;
  /** How long after a write the writer's reads stay on the primary. */
  windowMs: number;
  logger: Logger;
};

/** Who "just acted": an API key, or a person (their token and their console session alike). */
export type Actor = { orgId: string; userId: string; apiKeyId?: string };

const actorKey = (actor: Actor) => `${actor.orgId}:${actor.apiKeyId ?? actor.userId}`;

export class ReadRouting {
  private readonly recent = new Map<string, number>();

  constructor(private readonly options: ReadRoutingOptions) {}

  /** Whether a replica serves reads at all (DATABASE_READ_URL set). */
  get replicated(): boolean {
    return this.options.db.read !== this.options.db.pool;
  }

  /** Records that `actor` is changing something now. Nothing to do without a replica. */
  async wrote(actor: Actor): Promise<void> {
    if (!this.replicated) return;
    const key = actorKey(actor);
    const until = Date.now() + this.options.windowMs;
    this.recent.set(key, until);
    if (this.recent.size > 10_000) this.sweep();
    await this.options.redis.set(this.redisKey(key), "1", "PX", this.options.windowMs).catch((error: Error) => {
      this.options.logger.debug("could not mark a recent writer in Redis", { error: error.message });
    });
  }

  /** The pool `actor`'s heavy read should use: the replica, or the primary while their own write may not be on it. */
  async poolFor(actor: Actor): Promise<pg.Pool> {
    const { db } = this.options;
    if (!this.replicated) return db.pool;
    const key = actorKey(actor);
    if ((this.recent.get(key) ?? 0) > Date.now()) return db.pool;
    try {
      return (await this.options.redis.exists(this.redisKey(key))) ? db.pool : db.read;
    } catch {
      return db.pool;
    }
  }

  private redisKey(key: string): string {
    return `${this.options.prefix}:recent-writer:${key}`;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, until] of this.recent) if (until <= now) this.recent.delete(key);
  }
}
