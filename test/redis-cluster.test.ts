// Redis Cluster (docs/reference/high-availability.md#scale-out-and-observability, issue 27): the API and two workers on a real three-master Redis Cluster
// (REDIS_CLUSTER_NODES): jobs run to done, the auth rate limit counts in the cluster, a cancellation reaches the
// running attempt through the cluster's pub/sub, and the leader lease hands over when its holder dies. Every key
// lives under the hash tag `{REDIS_PREFIX}`, so all of them sit in one slot. A private cluster on ports 7100–7102
// (bus ports 17100–17102), started and stopped here; the machine's shared Redis is never touched.
import { Cluster } from "ioredis";
import { parseHostPorts, redisKeyPrefix, redisTarget } from "@conveyor/queue";
import { startRedisCluster, waitFor, type PrivateRedisCluster } from "@conveyor/testkit";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

let cluster: PrivateRedisCluster | undefined;
let stack: Stack | undefined;
let admin: Cluster;

beforeAll(async () => {
  cluster = await startRedisCluster([7100, 7101, 7102]);
  admin = new Cluster(parseHostPorts(cluster.nodes, 6379), { redisOptions: { maxRetriesPerRequest: 1 } });
  admin.on("error", () => {});
  const env = { REDIS_URL: cluster.url, REDIS_CLUSTER_NODES: cluster.nodes };
  stack = await startStack({
    apiEnv: { ...env, AUTH_RATE_LIMIT_PER_MIN: "3" },
    workerEnv: { ...env, WORKER_TYPES: "scripted", WORKER_LOCK_MS: "3000" },
  });
  await stack.startWorker();
  await stack.startWorker();
}, 90_000);

afterAll(async () => {
  await stack?.close();
  admin?.disconnect();
  await cluster?.stop();
});

/** Every key of the stack, by the port of the master that holds it. */
async function keysByNode(): Promise<Map<number, string[]>> {
  const found = new Map<number, string[]>();
  for (const node of admin.nodes("master")) {
    const keys = await node.keys(`${stack!.prefix}:*`);
    if (keys.length) found.set(node.options.port!, keys);
  }
  return found;
}

const final = (job: { status: string }) => ["done", "failed", "cancelled"].includes(job.status);

describe("Redis Cluster", () => {
  it("reads REDIS_CLUSTER_NODES, and refuses it beside REDIS_SENTINELS or with a database number", () => {
    expect(redisTarget({ REDIS_URL: "rediss://:pw@x", REDIS_CLUSTER_NODES: "10.0.0.1:7000, node-b,[::1]:7002" })).toEqual({
      url: "rediss://:pw@x",
      clusterNodes: [
        { host: "10.0.0.1", port: 7000 },
        { host: "node-b", port: 6379 },
        { host: "::1", port: 7002 },
      ],
    });
    expect(() => redisTarget({ REDIS_URL: "redis://x", REDIS_CLUSTER_NODES: "a:1", REDIS_SENTINELS: "b:2" })).toThrow(
      "Set either REDIS_SENTINELS or REDIS_CLUSTER_NODES, not both.",
    );
    expect(() => redisTarget({ REDIS_URL: "redis://x/2", REDIS_CLUSTER_NODES: "a:1" })).toThrow(/only database 0/);
    expect(redisKeyPrefix("conveyor")).toBe("{conveyor}");
  });

  it("runs jobs to done, with every key of the deployment in the one slot of its hash tag", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await stack!.post("/jobs", { type: "scripted", payload: { sleep_ms: 20 } });
      expect(res.status).toBe(202);
      ids.push(res.body.id);
    }
    for (const id of ids) {
      const job = await stack!.waitForJob(id, final, 60_000);
      expect({ id, status: job.status }).toEqual({ id, status: "done" });
    }
    const byNode = await keysByNode();
    expect(byNode.size).toBe(1);
    const keys = [...byNode.values()][0]!;
    expect(keys).toEqual(expect.arrayContaining([`${stack!.prefix}:leader`, `${stack!.prefix}:reconciler:sentinel`]));
    expect(keys.some((key) => key.startsWith(`${stack!.prefix}:scripted:`))).toBe(true);
    const slots = new Set(await Promise.all(keys.map((key) => admin.cluster("KEYSLOT", key))));
    expect([...slots]).toEqual([await admin.cluster("KEYSLOT", stack!.prefix)]);
  }, 90_000);

  it("counts the auth rate limit in the cluster", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await stack!.api.request.post("/auth/login").send({ email: "nobody@example.test", password: "wrong-password" });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    const keys = [...(await keysByNode()).values()].flat();
    expect(keys.some((key) => key.startsWith(`${stack!.prefix}:rl:auth:login:`))).toBe(true);
  }, 30_000);

  it("cancels a running job through the cluster's pub/sub", async () => {
    const created = await stack!.post("/jobs", { type: "scripted", payload: { sleep_ms: 60_000 } });
    await stack!.waitForJob(created.body.id, (j) => j.status === "processing", 20_000);
    await waitFor(async () => (await stack!.logs(created.body.id)).some((l) => l.message.startsWith("scripted attempt")), "the handler running", 10_000, 50);
    // What the workers hear: subscribe as they do, on a connection of the cluster.
    const listener = admin.duplicate();
    listener.on("error", () => {});
    const heard: string[] = [];
    listener.on("message", (_channel: string, message: string) => heard.push(...message.split("\n")));
    await listener.subscribe(`${stack!.prefix}:cancel`);
    try {
      const asked = Date.now();
      const res = await stack!.post(`/jobs/${created.body.id}/cancel`, {});
      expect(res.status).toBe(200);
      const job = await stack!.waitForJob(created.body.id, final, 10_000);
      expect(job.status).toBe("cancelled");
      expect(Date.now() - asked).toBeLessThan(8_000);
      await waitFor(() => heard.includes(created.body.id) || null, "the cancellation published in the cluster", 5_000, 50);
    } finally {
      listener.disconnect();
    }
  }, 60_000);

  it("H47: runs every job posted before, during and after the slot of its keys moves to another master", async () => {
    const slot = await admin.cluster("KEYSLOT", stack!.prefix);
    const from = await cluster!.ownerOf(slot);
    const to = cluster!.ports.find((port) => port !== from)!;
    const ids: string[] = [];
    let posting = true;
    // Jobs posted throughout, each running 20–200 ms, so the dispatcher, BullMQ and the workers all touch the slot
    // while its keys are migrating.
    const poster = (async () => {
      for (let i = 0; posting; i++) {
        const res = await stack!.post("/jobs", { type: "scripted", payload: { sleep_ms: 20 + (i % 10) * 20 }, max_retries: 2 });
        expect(res.status).toBe(202);
        ids.push(res.body.id);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    await waitFor(() => ids.length >= 20 || null, "jobs posted before the move", 20_000, 20);
    const before = ids.length;
    await cluster!.moveSlot(slot, to, { batch: 2, pauseMs: 200 });
    const during = ids.length - before;
    expect(await cluster!.ownerOf(slot)).toBe(to);
    const moved = ids.length;
    await waitFor(() => ids.length >= moved + 20 || null, "jobs posted after the move", 20_000, 20);
    posting = false;
    await poster;
    for (const id of ids) {
      const job = await stack!.waitForJob(id, final, 60_000);
      expect({ id, status: job.status }).toEqual({ id, status: "done" });
    }
    expect(during).toBeGreaterThan(0);
    // Everything now lives on the new owner.
    expect([...(await keysByNode()).keys()]).toEqual([to]);
  }, 120_000);

  it("keeps one leader, and another worker takes the lease over when the leader dies", async () => {
    const leaders = () => stack!.workers.filter((w) => /became the leader/.test(w.output()));
    await waitFor(() => leaders().length === 1 || null, "one leader", 10_000, 100);
    expect(await admin.get(`${stack!.prefix}:leader`)).toBeTruthy();
    const [leader] = leaders();
    await leader!.stop("SIGKILL");
    const survivor = stack!.workers.find((w) => w !== leader)!;
    // The lease lapses (5 s) and the survivor takes it: only a leader dispatches, so a new job runs only then.
    await survivor.waitForOutput(/became the leader/, 20_000);
    const res = await stack!.post("/jobs", { type: "scripted", payload: { sleep_ms: 10 } });
    const job = await stack!.waitForJob(res.body.id, final, 30_000);
    expect(job.status).toBe("done");
  }, 60_000);
});
