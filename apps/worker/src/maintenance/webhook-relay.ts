// The webhook relay: the leader's loop that turns events into delivery jobs (docs/reference/events.md#events). Each round reads the events
// after the relay's cursor, creates a `_webhook_delivery` job per matching endpoint and moves the cursor, in one
// transaction (packages/db/src/events/webhook-relay.ts). Woken by NOTIFY on `conveyor_events`, and by a short tick for events
// that were still above the horizon when their notification came.
import type pg from "pg";
import { WEBHOOK_DELIVERY_MAX_RETRIES } from "@conveyor/contracts";
import { EVENTS_CHANNEL, NotificationListener, relayEventsToWebhooks } from "@conveyor/db";
import { WakeLoop } from "@conveyor/queue";
import type { Logger } from "@conveyor/logger";
import type { LeaderTask } from "../leadership/leadership";

export type WebhookRelayOptions = {
  pool: pg.Pool;
  logger: Logger;
  /** Events per round. Default 1,000. */
  batch?: number;
  /** How often to look without a wake-up. Default 250 ms. */
  tickMs?: number;
  /**
   * Least time between the starts of two rounds. Default 50 ms. Busy workers write events many times a second, and
   * each wake-up would otherwise be a round: this gathers them, for at most this much delay.
   */
  minIntervalMs?: number;
  onRelayed?(deliveries: number): void;
};

export class WebhookRelay implements LeaderTask {
  readonly name = "webhook relay";
  private listener: NotificationListener | undefined;
  private readonly loop: WakeLoop;

  constructor(private readonly options: WebhookRelayOptions) {
    this.loop = new WakeLoop({
      round: () => this.rounds(),
      everyMs: options.tickMs ?? 250,
      minGapMs: options.minIntervalMs ?? 50,
      retryMs: options.tickMs ?? 250,
      warn: (error) => options.logger.warn(`webhook relay round failed; retrying: ${error.message}`),
    });
  }

  async start(): Promise<void> {
    this.listener = new NotificationListener({
      pool: this.options.pool,
      channel: EVENTS_CHANNEL,
      onNotify: () => this.loop.wake(),
      onError: (error) => this.options.logger.warn(`webhook relay cannot LISTEN yet (ticking instead): ${error.message}`),
    });
    await this.listener.openOrRetry();
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.listener?.close();
    this.listener = undefined;
    await this.loop.stop();
  }

  private async rounds(): Promise<void> {
    const limit = this.options.batch ?? 1_000;
    for (;;) {
      if (!this.loop.isActive) return;
      const { events, deliveries } = await relayEventsToWebhooks(this.options.pool, { limit, maxRetries: WEBHOOK_DELIVERY_MAX_RETRIES });
      if (deliveries) this.options.onRelayed?.(deliveries);
      if (events < limit) return;
    }
  }
}
