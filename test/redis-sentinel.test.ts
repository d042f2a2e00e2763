// Redis behind Sentinel (docs/reference/high-availability.md#scale-out-and-observability, docs/reference/robustness.md#r47): the API and two workers find the master through three sentinels,
// and when the master is SIGKILLed under load the sentinels promote its replica and every job still ends done —
// the ones posted before, during and after the failover. Private redis-servers and sentinels on spare ports; the
// machine's shared Redis is never touched.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { parseSentinels, redisTarget } from "@conveyor/queue";
import { askRedis, freePort, startPrivateRedis, waitFor, type PrivateRedis } from "@conveyor/testkit";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

const MASTER = "conveyor-test";

let master: PrivateRedis;
let replica: PrivateRedis;
const sentinels: { port: number; child: ChildProcess }[] = [];
let stack: Stack | undefined;

const masterPort = (port: number) =>
  askRedis(port, async (redis) => Number(((await redis.call("SENTINEL", "get-master-addr-by-name", MASTER)) as string[] | null)?.[1]));

async function startSentinel(dir: string, monitored: number): Promise<void> {
  const port = await freePort();
  const conf = path.join(dir, `sentinel-${port}.conf`);
  // Sentinel rewrites its configuration file as it learns the other sentinels and the replicas.
  writeFileSync(
    conf,
    [
      `port ${port}`,
      "bind 127.0.0.1",
      `sentinel monitor ${MASTER} 127.0.0.1 ${monitored} 2`,
      `sentinel down-after-milliseconds ${MASTER} 1000`,
      `sentinel failover-timeout ${MASTER} 4000`,
      `sentinel parallel-syncs ${MASTER} 1`,
      "",
    ].join("\n"),
  );
  const child = spawn("redis-server", [conf, "--sentinel"], { stdio: "ignore" });
  sentinels.push({ port, child });
}

beforeAll(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "conveyor-sentinel-"));
  // Replication writes an RDB file for the replica's first sync: into the temporary folder, not the repository.
  master = await startPrivateRedis(["--maxmemory-policy", "noeviction", "--dir", dir]);
  replica = await startPrivateRedis(["--maxmemory-policy", "noeviction", "--dir", dir, "--replicaof", "127.0.0.1", String(master.port)]);
  const replicaClient = new Redis(replica.url);
  await waitFor(async () => /master_link_status:up/.test(await replicaClient.info("replication")), "the replica in sync", 15_000);
  replicaClient.disconnect();
  for (let i = 0; i < 3; i++) await startSentinel(dir, master.port);
  // Every sentinel knows the master and the two others (a failover needs a majority of them to agree).
  for (const { port } of sentinels) {
    await waitFor(
      async () =>
        askRedis(port, async (redis) => {
          const fields = (await redis.call("SENTINEL", "master", MASTER)) as string[];
          return Number(fields[fields.indexOf("num-other-sentinels") + 1]) === 2;
        }),
      `sentinel ${port} knows the others`,
      20_000,
      100,
    );
  }
  const env = {
    // With sentinels the URL gives only credentials and database; the stack's own clean-up reads it as a server,
    // and the replica is the one alive at the end.
    REDIS_URL: replica.url,
    REDIS_SENTINELS: sentinels.map((s) => `127.0.0.1:${s.port}`).join(","),
    REDIS_SENTINEL_NAME: MASTER,
  };
  stack = await startStack({ apiEnv: env, workerEnv: { ...env, WORKER_TYPES: "scripted", WORKER_LOCK_MS: "3000" } });
  await stack.startWorker();
  await stack.startWorker();
}, 90_000);

afterAll(async () => {
  await stack?.close();
  for (const { child } of sentinels) child.kill("SIGKILL");
  await replica?.stop();
  await master?.stop();
});

describe("Redis behind Sentinel", () => {
  it("reads the sentinels from REDIS_SENTINELS, and refuses an entry that is not host:port", () => {
    expect(parseSentinels("10.0.0.1:26379, sentinel-b:26380,[::1]:5000,sentinel-c")).toEqual([
      { host: "10.0.0.1", port: 26379 },
      { host: "sentinel-b", port: 26380 },
      { host: "::1", port: 5000 },
      { host: "sentinel-c", port: 26379 },
    ]);
    expect(() => parseSentinels("a:1,b:99999")).toThrow('"b:99999" is not host:port');
    expect(redisTarget({ REDIS_URL: "redis://localhost:6379" })).toBe("redis://localhost:6379");
    expect(redisTarget({ REDIS_URL: "redis://:pw@x/2", REDIS_SENTINELS: "a:1", REDIS_SENTINEL_NAME: "m" })).toEqual({
      url: "redis://:pw@x/2",
      sentinels: [{ host: "a", port: 1 }],
      sentinelName: "m",
    });
  });

  it("H47: runs every job posted before, during and after a failover of the master", async () => {
    const post = async (n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const res = await stack!.post("/jobs", { type: "scripted", payload: { sleep_ms: 50 }, max_retries: 2 });
        expect(res.status).toBe(202);
        ids.push(res.body.id);
      }
      return ids;
    };
    const before = await post(20);
    await waitFor(async () => ((await stack!.job(before[0]!)).status === "done" ? true : null), "the first job done through the master", 30_000);

    await master.stop();
    const during = await post(20);
    // The sentinels agree the master is down and promote the replica.
    await waitFor(async () => ((await masterPort(sentinels[0]!.port)) === replica.port ? true : null), "the replica promoted", 30_000, 200);
    const after = await post(20);

    for (const id of [...before, ...during, ...after]) {
      const job = await stack!.waitForJob(id, (j) => ["done", "failed", "cancelled"].includes(j.status), 60_000);
      expect({ id, status: job.status }).toEqual({ id, status: "done" });
    }
    // The jobs after the failover went through the promoted replica: it is the only Redis left.
    const promoted = new Redis(replica.url);
    try {
      expect(await promoted.info("replication")).toMatch(/role:master/);
      expect((await promoted.keys(`${stack!.prefix}:*`)).length).toBeGreaterThan(0);
    } finally {
      promoted.disconnect();
    }
  }, 150_000);
});
