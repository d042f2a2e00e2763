// `npm start` on the README's multi-host DATABASE_URL (docs/reference/high-availability.md#high-availability, issue 45): scripts/start.ts migrates through the
// host that target_session_attrs picks, as `npm run db:migrate` does, instead of refusing the URL ("Invalid URL").
// The first host of the URL is down; the second is the shared Postgres, whose primary it finds.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { freePort, spawnService, TEST_REDIS_URL, TEST_SERVER_URL, deleteRedisPrefix, testRedisPrefix, type ServiceProcess } from "@conveyor/testkit";

jest.setTimeout(300_000);

const name = `alerts_start_${randomBytes(4).toString("hex")}`;
const prefix = testRedisPrefix();
let start: ServiceProcess | undefined;

afterAll(async () => {
  await start?.stop("SIGTERM", 20_000);
  const admin = new pg.Client({ connectionString: TEST_SERVER_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
  await deleteRedisPrefix(prefix);
});

it("migrates, then runs the API and a worker, on a multi-host URL whose first host is down", async () => {
  const server = new URL(TEST_SERVER_URL);
  const down = await freePort();
  const url = `postgresql://${server.username || "postgres"}@127.0.0.1:${down},${server.hostname}:${server.port || 5432}/${name}?target_session_attrs=read-write`;
  const port = await freePort();
  start = spawnService("start", {
    DATABASE_URL: url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    PORT: String(port),
    JWT_SECRET: "test-secret-that-is-long-enough-for-hs256-000",
    WORKER_METRICS_PORT: "0",
    WORKER_TYPES: "webhook",
  });
  await start.waitForOutput(/Applied migrations: |Database is up to date\./, 120_000);
  expect(start.output()).not.toMatch(/Invalid URL|Migration failed/);
  await start.waitForOutput(/API listening on/, 240_000);
  const health = await fetch(`http://127.0.0.1:${port}/healthz`);
  expect(health.status).toBe(200);
});
