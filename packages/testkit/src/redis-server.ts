// A private redis-server on a spare port, for tests that stop, wipe or misconfigure Redis: the machine's
// shared Redis (which CI uses right after) is never touched.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";
import { waitFor } from "./wait";

export type PrivateRedis = {
  port: number;
  url: string;
  /** Starts the server (again) on the same port. */
  start(): Promise<void>;
  /** Stops the server; queued data is lost (no persistence), as with a real Redis restart without AOF. */
  stop(): Promise<void>;
};

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject).listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts a private redis-server; `args` are extra server options such as ["--maxmemory-policy", "allkeys-lru"]. */
export async function startPrivateRedis(args: string[] = []): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  const ping = async () => {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on("error", () => {});
    try {
      await client.connect();
      return (await client.ping()) === "PONG";
    } finally {
      client.disconnect();
    }
  };

  const handle: PrivateRedis = {
    port,
    url,
    async start() {
      child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", ...args], { stdio: "ignore" });
      await waitFor(ping, `redis-server on port ${port}`, 10_000);
    },
    async stop() {
      // A process killed by a signal has a null exitCode and a signalCode.
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child!.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    },
  };
  await handle.start();
  return handle;
}
