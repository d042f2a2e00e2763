// A private Redis Cluster of three masters (no replicas) on given ports, made of Debian's redis-server and joined
// with `redis-cli --cluster create`. For tests and benchmarks that run Conveyor against a cluster; the machine's
// shared Redis is never touched. Each node also listens on its port + 10000 (the cluster bus).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { waitFor } from "./wait";

export type PrivateRedisCluster = {
  ports: number[];
  /** `host:port,…` of every node, as REDIS_CLUSTER_NODES takes it. */
  nodes: string;
  /** A URL of the first node (credentials only, for REDIS_URL beside REDIS_CLUSTER_NODES). */
  url: string;
  /** The port of the master that serves `slot`. */
  ownerOf(slot: number): Promise<number>;
  /**
   * Reshards `slot` to the master on `toPort` as `redis-cli --cluster reshard` does — IMPORTING on the target,
   * MIGRATING on the source, MIGRATE of its keys `batch` at a time with `pauseMs` between (clients meanwhile get ASK
   * and TRYAGAIN answers), then the slot assigned to the target on every master.
   */
  moveSlot(slot: number, toPort: number, options?: { batch?: number; pauseMs?: number }): Promise<void>;
  /** Stops every node and removes their files. */
  stop(): Promise<void>;
};

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false)).listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** Asks one Redis (a cluster node, a sentinel) something on a short-lived connection. */
export async function askRedis<T>(port: number, ask: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on("error", () => {});
  try {
    await redis.connect();
    return await ask(redis);
  } finally {
    redis.disconnect();
  }
}

/** Starts three masters on `ports` (each and its bus port + 10000 must be free) and joins them into a cluster. */
export async function startRedisCluster(ports: [number, number, number]): Promise<PrivateRedisCluster> {
  for (const port of ports) {
    if (!(await portIsFree(port)) || !(await portIsFree(port + 10_000))) throw new Error(`port ${port} or its cluster bus port ${port + 10_000} is in use`);
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), "conveyor-redis-cluster-"));
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(
      children.map((child) => {
        if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        return exited;
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) {
      const args = ["--port", String(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes", "--cluster-config-file", path.join(dir, `nodes-${port}.conf`)];
      args.push("--dir", dir, "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction");
      children.push(spawn("redis-server", args, { stdio: "ignore" }));
    }
    for (const port of ports) await waitFor(() => askRedis(port, async (r) => (await r.ping()) === "PONG"), `redis-server on port ${port}`, 10_000);
    const created = spawnSync("redis-cli", ["--cluster", "create", ...ports.map((p) => `127.0.0.1:${p}`), "--cluster-replicas", "0", "--cluster-yes"], {
      encoding: "utf8",
      timeout: 30_000,
    });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    // Every node has learned every slot's owner.
    for (const port of ports) {
      await waitFor(
        () => askRedis(port, async (r) => /cluster_state:ok/.test((await r.call("CLUSTER", "INFO")) as string)),
        `node ${port} sees the cluster ok`,
        20_000,
        100,
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const ownerOf = (slot: number) =>
    askRedis(ports[0], async (r) => {
      const ranges = (await r.call("CLUSTER", "SLOTS")) as [number, number, [string, number, string]][];
      const range = ranges.find(([from, to]) => from <= slot && slot <= to);
      if (!range) throw new Error(`slot ${slot} has no owner`);
      return Number(range[2][1]);
    });
  const nodeId = (port: number) => askRedis(port, async (r) => (await r.call("CLUSTER", "MYID")) as string);
  return {
    ports,
    nodes: ports.map((p) => `127.0.0.1:${p}`).join(","),
    url: `redis://127.0.0.1:${ports[0]}`,
    ownerOf,
    async moveSlot(slot, toPort, { batch = 10, pauseMs = 0 } = {}) {
      const fromPort = await ownerOf(slot);
      if (fromPort === toPort) return;
      const [fromId, toId] = [await nodeId(fromPort), await nodeId(toPort)];
      await askRedis(toPort, (r) => r.call("CLUSTER", "SETSLOT", slot, "IMPORTING", fromId));
      await askRedis(fromPort, (r) => r.call("CLUSTER", "SETSLOT", slot, "MIGRATING", toId));
      for (;;) {
        const keys = (await askRedis(fromPort, (r) => r.call("CLUSTER", "GETKEYSINSLOT", slot, batch))) as string[];
        if (keys.length === 0) break;
        await askRedis(fromPort, (r) => r.call("MIGRATE", "127.0.0.1", toPort, "", 0, 5_000, "KEYS", ...keys));
        if (pauseMs) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
      // The target first, so the slot is never without an owner that knows it.
      for (const port of [toPort, fromPort, ...ports.filter((p) => p !== toPort && p !== fromPort)]) {
        await askRedis(port, (r) => r.call("CLUSTER", "SETSLOT", slot, "NODE", toId));
      }
    },
    stop,
  };
}
