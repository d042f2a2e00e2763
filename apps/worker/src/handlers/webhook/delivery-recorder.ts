// Delivery attempts are recorded in batches: every attempt that finishes while one batch is being written goes into
// the next, one statement each. At a thousand deliveries a second that is a few dozen statements, not a thousand.
// A caller waits for its own attempt to be recorded (and learns whether its endpoint was disabled by it).
import type pg from "pg";
import { WEBHOOK_DISABLE_AFTER_MS } from "@conveyor/contracts";
import { recordDeliveryAttempts, type DeliveryAttempt } from "@conveyor/db";

type Waiting = { attempt: DeliveryAttempt; resolve(disabled: boolean): void; reject(error: unknown): void };

export class DeliveryRecorder {
  private queue: Waiting[] = [];
  private writing: Promise<void> | null = null;

  constructor(
    private readonly pool: pg.Pool,
    /** After how long a run of failures disables an endpoint. Default 3 days. */
    private readonly disableAfterMs = WEBHOOK_DISABLE_AFTER_MS,
  ) {}

  /** Records one attempt; resolves true when this batch disabled the attempt's endpoint. */
  record(attempt: DeliveryAttempt): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.queue.push({ attempt, resolve, reject });
      // Attempts finishing in the same turn of the event loop share the first batch.
      if (!this.writing) this.writing = new Promise<void>((started) => setImmediate(started)).then(() => this.write());
    });
  }

  private async write(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue;
      this.queue = [];
      try {
        const attempts = batch.map((w) => w.attempt);
        // An endpoint deleted while the batch was written breaks its foreign key; written again, the batch leaves it out.
        const disabled = new Set(
          await recordDeliveryAttempts(this.pool, attempts, this.disableAfterMs).catch((error: { code?: string }) => {
            if (error.code !== "23503") throw error;
            return recordDeliveryAttempts(this.pool, attempts, this.disableAfterMs);
          }),
        );
        for (const w of batch) w.resolve(disabled.has(w.attempt.endpointId));
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    this.writing = null;
  }
}
