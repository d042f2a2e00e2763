// An in-process API on its own database and Redis prefix, with the real app, real Postgres and real Redis.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import supertest from "supertest";
import type { Env } from "@conveyor/config";
import { createLogger } from "@conveyor/logger";
import { createRedis, redisTarget, waitForRedis } from "@conveyor/queue";
import { createTestDatabase, deleteRedisPrefix, testRedisPrefix, TEST_REDIS_URL, type TestDatabase } from "@conveyor/testkit";
import { createApp } from "../src/app";
import type { AppDeps, Clock } from "../src/context";
import { loadApiConfig } from "../src/env";
import type { ApiGet } from "./second-org";

/**
 * A clock tests can move. Frozen at its start unless `follows`: then it runs with real time (and `advance` still moves
 * it ahead), for a stack whose workers and browser live on real time — a frozen API clock read the last minute of
 * the overview's chart as the minute the stack started, so a job finished a minute later was counted in a bar whose
 * jobs list could not hold it (the overview test's flake, issue 46 #10).
 */
export class TestClock implements Clock {
  private readonly startedAt = Date.now();
  constructor(
    private current = Date.now(),
    private readonly follows = false,
  ) {}
  now(): Date {
    return new Date(this.current + (this.follows ? Date.now() - this.startedAt : 0));
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

export type TestApi = {
  request: ReturnType<typeof supertest>;
  /** GET `path` with `headers` over `request`: the status and the parsed body. */
  get: ApiGet;
  deps: AppDeps;
  database: TestDatabase;
  clock: TestClock;
  /** Every log line the API wrote (JSON lines). */
  logs(): string;
  /** Serves the same app over HTTP on a spare loopback port, for callers outside the test process's requests
   *  (a provider fake calling back); returns its base URL. The server stops with close(). */
  listen(): Promise<string>;
  close(): Promise<void>;
};

export type TestApiOptions = {
  /** Use this database instead of a fresh clone (e.g. one on a private Postgres server). */
  database?: TestDatabase;
  /** The API's clock runs with real time instead of standing still (TestClock). Default false. */
  realTime?: boolean;
};

export async function startTestApi(env: Env = {}, options: TestApiOptions = {}): Promise<TestApi> {
  const database = options.database ?? (await createTestDatabase());
  const prefix = testRedisPrefix();
  const config = loadApiConfig({
    NODE_ENV: "test",
    DATABASE_URL: database.url,
    ...(database.directUrl ? { DATABASE_DIRECT_URL: database.directUrl } : {}),
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
  const redis = createRedis(redisTarget(config), "producer");
  redis.on("error", () => {});
  await waitForRedis(redis, 5_000);
  const clock = new TestClock(Date.now(), options.realTime ?? false);
  const deps: AppDeps = {
    config,
    logger,
    db: database.db,
    redis,
    clock,
  };
  const app = createApp(deps);
  const servers: Server[] = [];
  const request = supertest(app);
  return {
    request,
    async get(path, headers) {
      const res = await request.get(path).set(headers);
      return { status: res.status, body: res.body as unknown };
    },
    deps,
    database,
    clock,
    logs: () => output,
    async listen() {
      const server = createServer(app);
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async close() {
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
      // As the server does at shutdown: the event tail's LISTEN connection is returned before the pool ends
      // (pool.end() would otherwise wait for the tail's 10 s linger after the last stream).
      await app.stopBackground();
      redis.disconnect();
      await database.drop();
      await deleteRedisPrefix(config.REDIS_PREFIX, config.REDIS_URL);
    },
  };
}
