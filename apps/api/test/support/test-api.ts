// An in-process API on its own database and Redis prefix, with the real app, real Postgres and real Redis.
import { PassThrough } from "node:stream";
import supertest from "supertest";
import type { Env } from "@conveyor/config";
import { createLogger } from "@conveyor/logger";
import { JobQueues, createRedis, waitForRedis } from "@conveyor/queue";
import { createTestDatabase, deleteRedisPrefix, testRedisPrefix, TEST_REDIS_URL, type TestDatabase } from "@conveyor/testkit";
import { createApp } from "../../src/app";
import type { AppDeps, Clock } from "../../src/context";
import { loadApiConfig } from "../../src/env";

/** A clock tests can move. */
export class TestClock implements Clock {
  constructor(private current = Date.now()) {}
  now(): Date {
    return new Date(this.current);
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

export type TestApi = {
  request: ReturnType<typeof supertest>;
  deps: AppDeps;
  database: TestDatabase;
  clock: TestClock;
  /** Every log line the API wrote (JSON lines). */
  logs(): string;
  close(): Promise<void>;
};

export type TestApiOptions = {
  /** Use this database instead of a fresh clone (e.g. one on a private Postgres server). */
  database?: TestDatabase;
};

export async function startTestApi(env: Env = {}, options: TestApiOptions = {}): Promise<TestApi> {
  const database = options.database ?? (await createTestDatabase());
  const prefix = testRedisPrefix();
  const config = loadApiConfig({
    NODE_ENV: "test",
    DATABASE_URL: database.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    BCRYPT_COST: "4",
    JWT_SECRET: "test-secret-that-is-long-enough-for-hs256-000",
    ...env,
  });
  let output = "";
  const stream = new PassThrough();
  stream.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const logger = createLogger({ service: "api", level: "debug", json: true, stream });
  const redis = createRedis(config.redisUrl, "producer");
  redis.on("error", () => {});
  await waitForRedis(redis, 5_000);
  const clock = new TestClock();
  const deps: AppDeps = { config, logger, db: database.db, redis, queues: new JobQueues({ connection: redis, prefix }), clock };
  const app = createApp(deps);
  return {
    request: supertest(app),
    deps,
    database,
    clock,
    logs: () => output,
    async close() {
      await deps.queues.close();
      redis.disconnect();
      await database.drop();
      await deleteRedisPrefix(prefix, config.redisUrl);
    },
  };
}
