// The worker as a real process: clear refusals, and a clean stop.
import {
  createTestDatabase,
  deleteRedisPrefix,
  freePort,
  spawnService,
  startPrivateRedis,
  testRedisPrefix,
  TEST_REDIS_URL,
  type TestDatabase,
} from "@conveyor/testkit";

describe("worker process start-up", () => {
  let database: TestDatabase;
  const prefix = testRedisPrefix();
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
    await deleteRedisPrefix(prefix);
  });

  it("refuses to start when Redis may evict keys (maxmemory-policy is not noeviction)", async () => {
    const redis = await startPrivateRedis(["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"]);
    try {
      const worker = spawnService("worker", { DATABASE_URL: database.url, REDIS_URL: redis.url, WORKER_METRICS_PORT: "0" });
      expect(await worker.exited).toBe(1);
      expect(worker.output().trim()).toMatch(/^Refusing to start: Redis maxmemory-policy is allkeys-lru; it must be noeviction/);
      expect(worker.output()).not.toMatch(/^\s+at /m);
    } finally {
      await redis.stop();
    }
  });

  it("exits with one line naming the Redis URL when Redis is unreachable", async () => {
    const port = await freePort();
    const worker = spawnService("worker", { DATABASE_URL: database.url, REDIS_URL: `redis://127.0.0.1:${port}`, WORKER_METRICS_PORT: "0" });
    expect(await worker.exited).toBe(1);
    expect(worker.output().trim()).toMatch(new RegExp(`^Cannot reach Redis at redis://127.0.0.1:${port}`));
  });

  it("refuses an invalid WORKER_TYPES entry, naming the variable", async () => {
    const worker = spawnService("worker", { DATABASE_URL: database.url, WORKER_TYPES: "webhook,Bad-Type", WORKER_METRICS_PORT: "0" });
    expect(await worker.exited).toBe(1);
    expect(worker.output()).toContain('WORKER_TYPES names an invalid job type "Bad-Type"');
  });

  it("answers /healthz, then stops cleanly on SIGTERM with exit code 0", async () => {
    const port = await freePort();
    const worker = spawnService("worker", { DATABASE_URL: database.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, WORKER_METRICS_PORT: String(port) });
    await worker.waitForOutput(/worker started/);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect(await worker.stop("SIGTERM")).toBe(0);
  });
});
