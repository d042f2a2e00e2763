// Redis connections. Producers (the API, the reconciler) fail fast while Redis is away, because Postgres
// already holds the job and the reconciler will enqueue it later; workers wait and reconnect forever.
// One server (REDIS_URL), a master found through Sentinel (REDIS_SENTINELS) or a Redis Cluster
// (REDIS_CLUSTER_NODES). Every key lives under the hash tag `{REDIS_PREFIX}` (redisKeyPrefix), so in a cluster they
// all hash to one slot: BullMQ's multi-key scripts, our pipelines and our scripts work unchanged.
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from "ioredis";
import { StartupError, maskUrl } from "@conveyor/config";

/** A connection to one Redis server (direct or through Sentinel) or to a Redis Cluster. */
export type RedisClient = Redis | Cluster;
export { Cluster, Redis };

/**
 * The prefix of every Conveyor key and channel: REDIS_PREFIX as a hash tag. Redis Cluster hashes only the part in
 * braces, so all of a deployment's keys share one slot (decisions: "Redis Cluster: one hash tag").
 */
export function redisKeyPrefix(prefix: string): string {
  return `{${prefix}}`;
}

/** The Redis channel the API publishes cancelled running job ids on and every worker listens to (`prefix`: redisKeyPrefix's). */
export const cancelChannel = (prefix: string): string => `${prefix}:cancel`;

export type RedisRole = "producer" | "worker";

/**
 * Where Redis is: a URL (`redis://[user:password@]host:port[/db]`), or with Sentinel the URL's credentials and
 * database plus the sentinels to ask for the current master of `sentinelName`.
 */
export type RedisTarget =
  | string
  | { url: string; sentinels: { host: string; port: number }[]; sentinelName: string; sentinelPassword?: string }
  | { url: string; clusterNodes: { host: string; port: number }[] };

/**
 * The target the REDIS_* settings name: REDIS_SENTINELS (host:port,…) switches from REDIS_URL's host to Sentinel,
 * REDIS_CLUSTER_NODES (host:port,…) to a Redis Cluster; REDIS_URL then gives only the credentials (and TLS).
 */
export function redisTarget(config: {
  REDIS_URL: string;
  REDIS_SENTINELS?: string;
  REDIS_SENTINEL_NAME?: string;
  REDIS_SENTINEL_PASSWORD?: string;
  REDIS_CLUSTER_NODES?: string;
}): RedisTarget {
  if (config.REDIS_CLUSTER_NODES) {
    if (config.REDIS_SENTINELS) throw new StartupError("Set either REDIS_SENTINELS or REDIS_CLUSTER_NODES, not both.");
    if (Number(new URL(config.REDIS_URL).pathname.slice(1) || 0) !== 0) {
      throw new StartupError("A Redis Cluster has only database 0: remove the database number from REDIS_URL.");
    }
    return { url: config.REDIS_URL, clusterNodes: parseHostPorts(config.REDIS_CLUSTER_NODES, 6379) };
  }
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
  return parseHostPorts(text, 26379);
}

/** `host:port,host:port`, where a port of `defaultPort` may be left out. */
export function parseHostPorts(text: string, defaultPort: number): { host: string; port: number }[] {
  return text
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const match = /^(\[[0-9a-fA-F:]+\]|[^:\s]+)(?::(\d{1,5}))?$/.exec(entry);
      const port = Number(match?.[2] ?? defaultPort);
      if (!match || port < 1 || port > 65535) throw new Error(`"${entry}" is not host:port`);
      return { host: match[1]!.replace(/^\[|\]$/g, ""), port };
    });
}

/** The target without credentials, for messages. */
export function describeRedis(target: RedisTarget): string {
  if (typeof target === "string") return maskUrl(target);
  if ("clusterNodes" in target) return `Redis Cluster via ${target.clusterNodes.map((n) => `${n.host}:${n.port}`).join(", ")}`;
  return `Sentinel master "${target.sentinelName}" via ${target.sentinels.map((s) => `${s.host}:${s.port}`).join(", ")}`;
}

export function createRedis(target: RedisTarget, role: RedisRole): RedisClient {
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
  if (typeof target === "string") return new Redis(target, base);
  if ("clusterNodes" in target) return createCluster(target, base);
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
  });
}

/**
 * Redis Cluster: the nodes given are only where to start; the client learns the others and the slot map, follows
 * MOVED/ASK while slots migrate, and reloads the map after a failover. Reads go to masters (a replica may lag).
 */
function createCluster(target: { url: string; clusterNodes: { host: string; port: number }[] }, base: RedisOptions): Cluster {
  const url = new URL(target.url);
  const { retryStrategy, enableOfflineQueue, lazyConnect, enableAutoPipelining, ...perNode } = base;
  const options: ClusterOptions = {
    clusterRetryStrategy: retryStrategy,
    enableOfflineQueue,
    lazyConnect,
    enableAutoPipelining,
    scaleReads: "master",
    slotsRefreshTimeout: 2_000,
    redisOptions: {
      ...perNode,
      ...(url.username && { username: decodeURIComponent(url.username) }),
      ...(url.password && { password: decodeURIComponent(url.password) }),
      ...(url.protocol === "rediss:" && { tls: {} }),
    },
    // Managed clusters announce node addresses that TLS certificates name: keep them rather than resolving them.
    ...(url.protocol === "rediss:" && { dnsLookup: (address, callback) => callback(null, address) }),
  };
  return new Cluster(target.clusterNodes, options);
}

/** Resolves once `redis` is connected, or rejects with its last error after `timeoutMs`. */
export function waitForRedis(redis: RedisClient, timeoutMs: number): Promise<void> {
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
export async function connectRedis(target: RedisTarget, role: RedisRole, timeoutMs = 5_000): Promise<RedisClient> {
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
 * INFO, because managed Redis services often forbid CONFIG GET. In a cluster every master must say so.
 */
export async function checkRedis(redis: RedisClient): Promise<RedisHealth> {
  let infos: string[];
  try {
    const servers = redis instanceof Cluster ? redis.nodes("master") : [redis];
    if (servers.length === 0) throw new Error("no master is known yet");
    infos = await Promise.all(servers.map((server) => server.info("memory")));
  } catch (error) {
    return { ok: false, reason: `Redis is unreachable: ${(error as Error).message}` };
  }
  const policies = infos.map((info) => /^maxmemory_policy:(\S+)/m.exec(info)?.[1] ?? "unknown");
  const policy = policies.find((p) => p !== "noeviction") ?? "noeviction";
  if (policy !== "noeviction") {
    return { ok: false, evictionPolicy: policy, reason: `Redis maxmemory-policy is ${policy}; it must be noeviction or Redis may silently drop queued jobs` };
  }
  return { ok: true, evictionPolicy: policy };
}
