// Waitpoint expiry (docs/reference/lifecycle.md#waitpoints-and-durable-steps): the leader's loop that ends waitpoints whose timeout has passed. Each round expires
// what is due, a batch per transaction (packages/db/src/jobs/waitpoints.ts: each expiry writes its event and settles the
// jobs waiting on it — a failed dependency, or a suspended ctx.waitFor told it timed out), then sleeps until the
// next expiry, at most a second. A completion racing an expiry ends in one state: both update only a waiting row.
import type pg from "pg";
import { expireWaitpoints, nextWaitpointExpiry } from "@conveyor/db";
import { WakeLoop } from "@conveyor/queue";
import type { Logger } from "@conveyor/logger";
import type { LeaderTask } from "../leadership/leadership";

export type WaitpointExpiryOptions = {
  pool: pg.Pool;
  logger: Logger;
  /** Longest sleep between rounds. Default 1 s. */
  maxSleepMs?: number;
  /** Waitpoints per transaction. Default 500. */
  batch?: number;
};

export class WaitpointExpiry implements LeaderTask {
  readonly name = "waitpoint-expiry";
  private readonly loop: WakeLoop;

  constructor(private readonly options: WaitpointExpiryOptions) {
    this.loop = new WakeLoop({
      round: () => this.round(),
      retryMs: options.maxSleepMs ?? 1_000,
      warn: (error) => options.logger.warn(`waitpoint expiry round failed; retrying: ${error.message}`),
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async round(): Promise<number> {
    const maxSleepMs = this.options.maxSleepMs ?? 1_000;
    const batch = this.options.batch ?? 500;
    for (;;) {
      if (!this.loop.isActive) return maxSleepMs;
      const expired = await expireWaitpoints(this.options.pool, batch);
      if (expired.length) this.options.logger.info("waitpoints expired", { count: expired.length });
      if (expired.length < batch) break;
    }
    const next = await nextWaitpointExpiry(this.options.pool);
    return next === null ? maxSleepMs : Math.min(maxSleepMs, Math.max(10, next.getTime() - Date.now() + 5));
  }
}
