// Redis connections. Producers (the API, the reconciler) fail fast while Redis is away, because Postgres
// already holds the job and the reconciler will enqueue it later; workers wait and reconnect forever.
import { Redis, type RedisOptions } from "ioredis";
import { StartupError, maskUrl } from "@conveyor/config";

export { Redis };

export type RedisRole = "producer" | "worker";

export function createRedis(url: string, role: RedisRole, extra: RedisOptions = {}): Redis {
  const base: RedisOptions = {
    // BullMQ requires this for blocking worker connections; producers bound each command instead.
    maxRetriesPerRequest: role === "worker" ? null : 1,
    enableOfflineQueue: role === "worker",
    // Reconnect with a capped backoff, forever.
    retryStrategy: (times) => Math.min(times * 200, 2_000),
    connectTimeout: 5_000,
    lazyConnect: false,
    // Auto-pipelining cost 40 % of throughput here (issue 6); BullMQ pipelines what it needs itself.
    enableAutoPipelining: false,
  };
  return new Redis(url, { ...base, ...extra });
}

/** Resolves once `redis` is connected, or rejects with its last error after `timeoutMs`. */
export function waitForRedis(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  return new Promise((resolve, reject) => {
    let lastError: Error | undefined;
    const onError = (error: Error) => (lastError = error);
    const onReady = () => finish();
    const timer = setTimeout(() => finish(lastError ?? new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    function finish(error?: Error) {
      clearTimeout(timer);
      redis.off("ready", onReady);
      redis.off("error", onError);
      if (error) reject(error);
      else resolve();
    }
    redis.on("error", onError);
    redis.once("ready", onReady);
  });
}

/** Creates a connection and waits until Redis answers; throws StartupError with one line otherwise. */
export async function connectRedis(url: string, role: RedisRole, timeoutMs = 5_000): Promise<Redis> {
  const redis = createRedis(url, role);
  try {
    await waitForRedis(redis, timeoutMs);
    return redis;
  } catch (error) {
    redis.disconnect();
    throw new StartupError(redisUnreachableMessage(error, url));
  }
}

/** One line for a process that cannot reach Redis at start-up. */
export function redisUnreachableMessage(error: unknown, url: string): string {
  const code = (error as { code?: string }).code;
  return (
    `Cannot reach Redis at ${maskUrl(url)}${code ? ` (${code})` : ""}. ` +
    "Start it (`redis-server --daemonize yes`, or `docker compose up -d redis`) or point REDIS_URL at a running server."
  );
}

export type RedisHealth = { ok: true; evictionPolicy: string } | { ok: false; reason: string; evictionPolicy?: string };

/**
 * Whether Redis answers and will not evict BullMQ's keys under memory pressure. The policy is read from
 * INFO, because managed Redis services often forbid CONFIG GET.
 */
export async function checkRedis(redis: Redis): Promise<RedisHealth> {
  let info: string;
  try {
    info = await redis.info("memory");
  } catch (error) {
    return { ok: false, reason: `Redis is unreachable: ${(error as Error).message}` };
  }
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1] ?? "unknown";
  if (policy !== "noeviction") {
    return { ok: false, evictionPolicy: policy, reason: `Redis maxmemory-policy is ${policy}; it must be noeviction or Redis may silently drop queued jobs` };
  }
  return { ok: true, evictionPolicy: policy };
}
