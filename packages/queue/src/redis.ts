// Redis connections. Producers (the API, the reconciler) fail fast while Redis is away, because Postgres
// already holds the job and the reconciler will enqueue it later; workers wait and reconnect forever.
import { Redis, type RedisOptions } from "ioredis";
import { StartupError, maskUrl } from "@conveyor/config";

export { Redis };

export type RedisRole = "producer" | "worker";

/**
 * Where Redis is: a URL (`redis://[user:password@]host:port[/db]`), or with Sentinel the URL's credentials and
 * database plus the sentinels to ask for the current master of `sentinelName`.
 */
export type RedisTarget = string | { url: string; sentinels: { host: string; port: number }[]; sentinelName: string; sentinelPassword?: string };

/** The target the REDIS_* settings name: REDIS_SENTINELS (host:port,…) switches from REDIS_URL's host to Sentinel. */
export function redisTarget(config: {
  REDIS_URL: string;
  REDIS_SENTINELS?: string;
  REDIS_SENTINEL_NAME?: string;
  REDIS_SENTINEL_PASSWORD?: string;
}): RedisTarget {
  if (!config.REDIS_SENTINELS) return config.REDIS_URL;
  return {
    url: config.REDIS_URL,
    sentinels: parseSentinels(config.REDIS_SENTINELS),
    sentinelName: config.REDIS_SENTINEL_NAME ?? "mymaster",
    ...(config.REDIS_SENTINEL_PASSWORD && { sentinelPassword: config.REDIS_SENTINEL_PASSWORD }),
  };
}

/** `host:port,host:port` (a port of 26379 may be left out). */
export function parseSentinels(text: string): { host: string; port: number }[] {
  return text
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const match = /^(\[[0-9a-fA-F:]+\]|[^:\s]+)(?::(\d{1,5}))?$/.exec(entry);
      const port = Number(match?.[2] ?? 26379);
      if (!match || port < 1 || port > 65535) throw new Error(`"${entry}" is not host:port`);
      return { host: match[1]!.replace(/^\[|\]$/g, ""), port };
    });
}

/** The target without credentials, for messages. */
export function describeRedis(target: RedisTarget): string {
  return typeof target === "string"
    ? maskUrl(target)
    : `Sentinel master "${target.sentinelName}" via ${target.sentinels.map((s) => `${s.host}:${s.port}`).join(", ")}`;
}

export function createRedis(target: RedisTarget, role: RedisRole, extra: RedisOptions = {}): Redis {
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
  if (typeof target === "string") return new Redis(target, { ...base, ...extra });
  // Sentinel: the URL gives the credentials and database; the sentinels say which node is the master now. After a
  // failover the old master answers READONLY until it is told: reconnect then, through the sentinels, to the new one.
  const url = new URL(target.url);
  return new Redis({
    sentinels: target.sentinels,
    name: target.sentinelName,
    ...(target.sentinelPassword && { sentinelPassword: target.sentinelPassword }),
    ...(url.username && { username: decodeURIComponent(url.username) }),
    ...(url.password && { password: decodeURIComponent(url.password) }),
    db: Number(url.pathname.slice(1) || 0),
    ...(url.protocol === "rediss:" && { tls: {}, enableTLSForSentinelMode: true }),
    reconnectOnError: (error) => (error.message.startsWith("READONLY") ? 2 : false),
    ...base,
    ...extra,
  });
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
export async function connectRedis(target: RedisTarget, role: RedisRole, timeoutMs = 5_000): Promise<Redis> {
  const redis = createRedis(target, role);
  try {
    await waitForRedis(redis, timeoutMs);
    return redis;
  } catch (error) {
    redis.disconnect();
    throw new StartupError(redisUnreachableMessage(error, target));
  }
}

/** One line for a process that cannot reach Redis at start-up. */
export function redisUnreachableMessage(error: unknown, target: RedisTarget): string {
  const code = (error as { code?: string }).code;
  return (
    `Cannot reach Redis at ${describeRedis(target)}${code ? ` (${code})` : ""}. ` +
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
