// How many jobs of each type the live worker replicas can run at once. Each worker announces its concurrency per
// served type in Redis every few seconds; the dispatcher keeps about two rounds of that in flight per type, so
// BullMQ never holds a long backlog in which priority and fairness would no longer apply.
import type { RedisClient } from "@conveyor/queue";

const ANNOUNCE_MS = 2_000;
/** An announcement older than this is a worker that went away. */
const FRESH_MS = 10_000;

export type CapacityOptions = { redis: RedisClient; prefix: string; workerName: string; types: readonly string[]; concurrency: number };

const key = (prefix: string, type: string) => `${prefix}:capacity:${type}`;

/** Announces this worker's slots while it runs. */
export class CapacityAnnouncer {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: CapacityOptions) {}

  start(): void {
    const announce = () => {
      const pipeline = this.options.redis.pipeline();
      const value = `${this.options.concurrency}:${Date.now() + FRESH_MS}`;
      for (const type of this.options.types) pipeline.hset(key(this.options.prefix, type), this.options.workerName, value);
      pipeline.exec().catch(() => {});
    };
    announce();
    this.timer = setInterval(announce, ANNOUNCE_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    const pipeline = this.options.redis.pipeline();
    for (const type of this.options.types) pipeline.hdel(key(this.options.prefix, type), this.options.workerName);
    await pipeline.exec().catch(() => {});
  }
}

/** Slots of live workers serving `type`, in all (0 when no worker serves it), and how many workers they belong to. */
export async function capacityOf(redis: RedisClient, prefix: string, type: string, now = Date.now()): Promise<{ slots: number; workers: number }> {
  const announced = await redis.hgetall(key(prefix, type));
  let slots = 0;
  let workers = 0;
  const gone: string[] = [];
  for (const [worker, value] of Object.entries(announced)) {
    const [concurrency, freshUntil] = value.split(":").map(Number);
    if (freshUntil !== undefined && freshUntil > now) {
      slots += concurrency ?? 0;
      workers++;
    } else gone.push(worker);
  }
  if (gone.length) await redis.hdel(key(prefix, type), ...gone);
  return { slots, workers };
}
