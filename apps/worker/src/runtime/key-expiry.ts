// The leader's key expiry: idempotency keys past their 24 hours and dedupe keys past their window are deleted in
// Postgres (expireKeys in @conveyor/db) on the reconciler's interval — Postgres upkeep, kept out of the Redis
// reconciler.
import type pg from "pg";
import { expireKeys } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import { WakeLoop } from "@conveyor/queue";
import type { LeaderTask } from "./leadership";

export class KeyExpiry implements LeaderTask {
  readonly name = "key-expiry";
  private readonly loop: WakeLoop;

  constructor(private readonly options: { pool: pg.Pool; logger: Logger; intervalMs: number }) {
    this.loop = new WakeLoop({
      round: async () => void (await this.runOnce()),
      everyMs: options.intervalMs,
      quietMs: 0,
      warn: (error) => options.logger.warn(`key expiry failed; trying again in the next round: ${error.message}`),
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One round: a batch of each kind of key; answers how many went. */
  runOnce(): Promise<{ idempotencyKeys: number; dedupeKeys: number }> {
    return expireKeys(this.options.pool);
  }
}
