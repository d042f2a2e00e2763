import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://localhost:6379";

/** A key prefix no other test file uses. */
export function testRedisPrefix(): string {
  return `conveyor-test-${randomBytes(5).toString("hex")}`;
}

/**
 * Deletes every key under `prefix` (a test file's own keys) from the shared Redis: Conveyor's, named under the hash
 * tag `{prefix}` (redisKeyPrefix), and any under the bare prefix.
 */
export async function deleteRedisPrefix(prefix: string, url = TEST_REDIS_URL): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    for (const pattern of prefix.startsWith("{") ? [`${prefix}:*`] : [`${prefix}:*`, `{${prefix}}:*`]) {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
        cursor = next;
        if (keys.length) await redis.unlink(...keys);
      } while (cursor !== "0");
    }
  } finally {
    redis.disconnect();
  }
}
