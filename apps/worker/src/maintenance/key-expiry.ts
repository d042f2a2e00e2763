// The leader's key expiry: idempotency keys past their 24 hours and dedupe keys past their window are deleted in
// Postgres (expireKeys in @conveyor/db) on the reconciler's interval — Postgres upkeep, kept out of the Redis
// reconciler.
import type pg from "pg";
import { expireKeys } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import { PeriodicTask } from "./periodic-task";

export class KeyExpiry extends PeriodicTask {
  readonly name = "key-expiry";

  constructor(private readonly options: { pool: pg.Pool; logger: Logger; intervalMs: number }) {
    super(options.logger, options.intervalMs, "key expiry");
  }

  protected round(): Promise<unknown> {
    return this.runOnce();
  }

  /** One round: a batch of each kind of key; answers how many went. */
  runOnce(): Promise<{ idempotencyKeys: number; dedupeKeys: number }> {
    return expireKeys(this.options.pool);
  }
}
