// A LISTEN that outlives its connection, for the loops woken by NOTIFY (the dispatcher, the webhook relay, the API's
// event tail). Notifications only wake: each loop also ticks or polls, so a connection being replaced costs latency,
// never work.
import type pg from "pg";
import { sessionPool } from "./client";

export type NotificationListenerOptions = {
  pool: pg.Pool;
  channel: string;
  /** `payload`: what the notifier said ("" when nothing). */
  onNotify(payload: string): void;
  /** A LISTEN that could not be made (the first, or one replacing a lost connection). */
  onError(error: Error): void;
  /** How long to wait before listening again. Default 1 s. */
  retryMs?: number;
};

/**
 * Listens on `channel` on a connection of its own. A lost connection is replaced `retryMs` later, and again after
 * every failure, until `close()`. The connection is closed, never returned to the pool: a LISTENing connection lent
 * to someone else would hand them its notifications.
 */
export class NotificationListener {
  private client: pg.PoolClient | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly options: NotificationListenerOptions) {}

  /** Whether it holds a LISTENing connection now. */
  get listening(): boolean {
    return this.client !== undefined;
  }

  /** Listens now; a failure is thrown and nothing is kept (no retry either). */
  async open(): Promise<void> {
    // A LISTEN keeps state on its connection: never through a transaction pooler.
    const client = await sessionPool(this.options.pool).connect();
    client.on("notification", (message) => this.options.onNotify(message.payload ?? ""));
    client.on("error", () => {
      if (this.client !== client) return;
      this.drop();
      this.later();
    });
    try {
      await client.query(`LISTEN ${this.options.channel}`);
    } catch (error) {
      client.release(true);
      throw error;
    }
    // Closed while connecting: nobody wants it any more.
    if (this.closed) return client.release(true);
    this.client = client;
  }

  /** Like open(), but a failure is reported and tried again later instead of thrown. */
  async openOrRetry(): Promise<void> {
    try {
      await this.open();
    } catch (error) {
      this.options.onError(error as Error);
      this.later();
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
    this.drop();
  }

  private later(): void {
    if (this.closed) return;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => void this.openOrRetry(), this.options.retryMs ?? 1_000);
    this.retry.unref();
  }

  private drop(): void {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    client.removeAllListeners("notification");
    client.release(true);
  }
}
