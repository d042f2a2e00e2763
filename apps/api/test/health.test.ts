import { createDatabase } from "@conveyor/db";
import { freePort, startPrivateRedis, type PrivateRedis } from "@conveyor/testkit";
import supertest from "supertest";
import { createApp } from "../src/app";
import { startTestApi, type TestApi } from "@conveyor/api/testing";

describe("/healthz and /readyz", () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api.close());

  it("reports the process up", async () => {
    const res = await api.request.get("/healthz");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok" });
  });

  it("is ready when Postgres and Redis answer and Redis will not evict keys", async () => {
    const res = await api.request.get("/readyz");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "ready", checks: { postgres: "ok", redis: "ok", redis_maxmemory_policy: "noeviction" } });
  });
});

describe("/readyz with a Redis that evicts keys", () => {
  let redis: PrivateRedis;
  let api: TestApi;
  beforeAll(async () => {
    redis = await startPrivateRedis(["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"]);
    api = await startTestApi({ REDIS_URL: redis.url });
  });
  afterAll(async () => {
    await api.close();
    await redis.stop();
  });

  it("answers 503 unavailable naming the eviction policy", async () => {
    const res = await api.request.get("/readyz");
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("unavailable");
    expect(res.body.error.details).toEqual([{ path: "redis", message: expect.stringContaining("allkeys-lru") }]);
  });
});

describe("/readyz while Redis is down", () => {
  let redis: PrivateRedis;
  let api: TestApi;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    api = await startTestApi({ REDIS_URL: redis.url });
    await redis.stop();
  });
  afterAll(async () => {
    await api.close();
    await redis.stop();
  });

  it("answers 503 naming Redis, and recovers when Redis returns", async () => {
    const down = await api.request.get("/readyz");
    expect(down.status).toBe(503);
    expect(down.body.error.details[0].path).toBe("redis");
    await redis.start();
    const deadline = Date.now() + 10_000;
    let status = 0;
    while (Date.now() < deadline && status !== 200) {
      status = (await api.request.get("/readyz")).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
  });
});

describe("/readyz while Postgres is unreachable", () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api.close());

  it("answers 503 naming Postgres", async () => {
    const deadDb = createDatabase({ url: `postgresql://postgres@127.0.0.1:${await freePort()}/conveyor` });
    try {
      const res = await supertest(createApp({ ...api.deps, db: deadDb })).get("/readyz");
      expect(res.status).toBe(503);
      expect(res.body.error.details).toEqual([{ path: "postgres", message: expect.stringContaining("Postgres is unreachable") }]);
    } finally {
      await deadDb.close();
    }
  });
});
