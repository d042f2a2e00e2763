// A worker whose queue connections are slow to open (a distant or busy Redis) while its registry heartbeat is short:
// a heartbeat that comes before the queue workers have started must report none of them busy, not crash the
// process. Redis is reached through a proxy that holds each new connection back for a while, so the queue workers'
// start takes several heartbeats.
import net from "node:net";
import { spawnService, suiteStorage, TEST_REDIS_URL, waitFor } from "@conveyor/testkit";

/** A TCP proxy to `target` that starts forwarding each new connection only after `holdMs`. */
async function slowProxy(target: URL, holdMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.pause();
    setTimeout(() => {
      const upstream = net.connect(Number(target.port), target.hostname, () => {
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
      sockets.add(upstream);
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on("error", end).on("close", end);
      upstream.on("error", end).on("close", end);
    }, holdMs);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  const url = new URL(TEST_REDIS_URL);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const suite = suiteStorage();

it("keeps beating while its queue workers start, and then runs", async () => {
  const proxy = await slowProxy(new URL(TEST_REDIS_URL), 1_500);
  const worker = spawnService("worker", {
    ...suite.env(),
    REDIS_URL: proxy.url,
    WORKER_HEARTBEAT_MS: "200",
    WORKER_TYPES: "webhook,send_sms,chat_notify",
    WORKER_METRICS_PORT: "0",
  });
  try {
    await worker.waitForOutput(/worker started/, 60_000);
    // Its registry row has been beaten since: the process is alive and says it is.
    await waitFor(
      async () => (await suite.database.db.pool.query("SELECT 1 FROM workers WHERE heartbeat_at > now() - interval '1 second'")).rowCount === 1,
      "a fresh heartbeat",
      10_000,
      100,
    );
  } finally {
    const code = await worker.stop("SIGTERM");
    await proxy.close();
    expect(worker.output()).not.toMatch(/before initialization|ReferenceError/);
    expect(code).toBe(0);
  }
}, 120_000);
