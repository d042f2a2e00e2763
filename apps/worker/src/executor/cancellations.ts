// Tells a running attempt that someone cancelled its job (docs/reference/lifecycle.md#steering: within 2 s, on whichever replica runs it).
// The API publishes the job id on a Redis channel the moment it records the request; in case a message is lost
// (Redis restarting, a subscriber reconnecting), every second the worker also asks Postgres which of its running
// jobs have a cancellation requested.
import { JobCancelledError } from "@conveyor/contracts";
import type pg from "pg";
import { cancelRequestedAmong } from "@conveyor/db";
import type { Logger } from "@conveyor/logger";
import { cancelChannel, type RedisClient } from "@conveyor/queue";

export type CancelWatch = {
  /** Calls `onCancel` (once) if the job is cancelled while watched; the returned function stops watching. */
  watch(jobId: string, onCancel: (reason: JobCancelledError) => void): () => void;
};

export type CancelWatcherOptions = {
  pool: pg.Pool;
  /** A connection of its own: a subscribed Redis connection can do nothing else. */
  subscriber: RedisClient;
  prefix: string;
  logger: Logger;
  /** How often Postgres is asked. Default 1 s. */
  pollMs?: number;
};

export class CancelWatcher implements CancelWatch {
  private readonly watched = new Map<string, (reason: JobCancelledError) => void>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(private readonly options: CancelWatcherOptions) {}

  watch(jobId: string, onCancel: (reason: JobCancelledError) => void): () => void {
    this.watched.set(jobId, onCancel);
    return () => {
      if (this.watched.get(jobId) === onCancel) this.watched.delete(jobId);
    };
  }

  async start(): Promise<void> {
    const channel = cancelChannel(this.options.prefix);
    this.options.subscriber.on("message", (from: string, message: string) => {
      if (from === channel) for (const jobId of message.split("\n")) this.cancel(jobId);
    });
    await this.options.subscriber
      .subscribe(channel)
      .catch((error: Error) => this.options.logger.warn(`cannot subscribe to cancellations yet: ${error.message}`));
    this.timer = setInterval(() => void this.poll(), this.options.pollMs ?? 1_000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.options.subscriber.disconnect();
  }

  private cancel(jobId: string): void {
    const onCancel = this.watched.get(jobId);
    if (!onCancel) return;
    this.watched.delete(jobId);
    onCancel(new JobCancelledError("a user"));
  }

  private async poll(): Promise<void> {
    if (this.polling || this.watched.size === 0) return;
    this.polling = true;
    try {
      for (const id of await cancelRequestedAmong(this.options.pool, [...this.watched.keys()])) this.cancel(id);
    } catch (error) {
      this.options.logger.debug("could not check for cancellations", { error: (error as Error).message });
    } finally {
      this.polling = false;
    }
  }
}
