// GET /jobs without `limit` returns every job of the org, streamed from a database cursor: a real API
// process lists 100,000 jobs to a slow client while we watch its memory.
import http from "node:http";
import { readFileSync } from "node:fs";
import {
  freePort,
  spawnService,
  testRedisPrefix,
  deleteRedisPrefix,
  createTestDatabase,
  TEST_REDIS_URL,
  waitFor,
  type ServiceProcess,
  type TestDatabase,
} from "@conveyor/testkit";
import { JOB_ITEM_FIELDS } from "@conveyor/contracts";
import { createApiKey, createOrg, createSecondOrg, httpGet, type SecondOrg, type TestMember } from "@conveyor/api/testing";
import { loadApiConfig } from "@conveyor/api";

const JOBS = 100_000;
const MB = 1024 * 1024;

let database: TestDatabase;
let api: ServiceProcess;
let port: number;
let owner: TestMember;
let key: string;
let other: SecondOrg;
const prefix = testRedisPrefix();

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** Reads the response slowly (pausing after every 256 KiB), so a server that ignored backpressure would buffer. */
function slowGet(path: string, onChunk: () => void = () => {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: "127.0.0.1", port, path, headers: { "X-API-Key": key } }, (res) => {
        const chunks: Buffer[] = [];
        let sincePause = 0;
        res.on("data", (chunk: Buffer) => {
          chunks.push(chunk);
          onChunk();
          sincePause += chunk.length;
          if (sincePause > 256 * 1024) {
            sincePause = 0;
            res.pause();
            setTimeout(() => res.resume(), 15);
          }
        });
        res.on("end", () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      })
      .on("error", reject);
  });
}

beforeAll(async () => {
  database = await createTestDatabase();
  const config = loadApiConfig({ JWT_SECRET: "test-secret-that-is-long-enough-for-hs256-000" });
  owner = await createOrg(database.db, config);
  key = (await createApiKey(database.db, owner)).key;
  other = await createSecondOrg(database.db);
  await database.db.pool.query(
    `INSERT INTO jobs (id, org_id, type, status, payload, max_retries)
     SELECT gen_random_uuid(), $1, 'webhook', (ARRAY['pending','processing','done','failed'])[1 + g % 4]::job_status,
            jsonb_build_object('url', 'https://example.com/' || g, 'payload', jsonb_build_object('n', g)), 0
       FROM generate_series(1, $2) AS g`,
    [owner.orgId, JOBS],
  );
  await database.db.pool.query(
    `INSERT INTO jobs (id, org_id, type, status, payload) SELECT gen_random_uuid(), $1, 'webhook', 'done', '{}' FROM generate_series(1, 500)`,
    [other.orgId],
  );
  await database.db.pool.query("ANALYZE jobs");

  port = await freePort();
  api = spawnService("api", {
    NODE_ENV: "test",
    LOG_LEVEL: "info",
    PORT: String(port),
    DATABASE_URL: database.url,
    ...(database.directUrl ? { DATABASE_DIRECT_URL: database.directUrl } : {}),
    DATABASE_POOL_SIZE: "2",
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    JWT_SECRET: "test-secret-that-is-long-enough-for-hs256-000",
  });
  await api.waitForOutput(/API listening/);
  await other.watch(httpGet(`http://127.0.0.1:${port}`));
}, 120_000);

afterEach(() => other.expectUntouched({ "X-API-Key": key }));

afterAll(async () => {
  await api.stop();
  await database.drop();
  await deleteRedisPrefix(prefix);
});

describe("GET /jobs without limit", () => {
  it("streams all 100,000 jobs of the org, newest first, with memory that does not grow with the count", async () => {
    // Warm up, then take the baseline.
    await slowGet("/jobs?limit=10");
    const baseline = rssBytes(api.pid);
    let peak = baseline;
    const res = await slowGet("/jobs", () => (peak = Math.max(peak, rssBytes(api.pid))));

    expect(res.status).toBe(200);
    expect(res.body.length).toBeGreaterThan(15 * MB);
    const jobs = JSON.parse(res.body) as { id: string }[];
    expect(jobs).toHaveLength(JOBS);
    expect(new Set(jobs.map((j) => j.id)).size).toBe(JOBS);
    for (let i = 1; i < jobs.length; i += 997) expect(jobs[i - 1]!.id > jobs[i]!.id).toBe(true);
    expect(Object.keys(jobs[0]!)).toEqual(JOB_ITEM_FIELDS);

    // The response is over 15 MiB; holding the rows (or the JSON) would cost far more than this.
    expect((peak - baseline) / MB).toBeLessThan(40);
    // Every wait for the client to drain must take its listeners away with it.
    expect(api.output()).not.toContain("MaxListenersExceededWarning");
  });

  it("streams a status filter too", async () => {
    const res = await slowGet("/jobs?status=failed");
    expect((JSON.parse(res.body) as { status: string }[]).every((j) => j.status === "failed")).toBe(true);
    expect(JSON.parse(res.body)).toHaveLength(JOBS / 4);
  });

  it("releases the database connection of a client that goes away mid-stream", async () => {
    // The pool has 2 connections: five abandoned streams would exhaust it if any were kept.
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve) => {
        const req = http.get({ host: "127.0.0.1", port, path: "/jobs", headers: { "X-API-Key": key } }, (res) => {
          res.once("data", () => {
            req.destroy();
            resolve();
          });
        });
        req.on("error", () => resolve());
      });
    }
    const answer = await waitFor(
      async () => {
        const res = await slowGet("/jobs?limit=1");
        return res.status === 200 ? res : null;
      },
      "a page after abandoned streams",
      10_000,
    );
    expect(JSON.parse(answer.body)).toHaveLength(1);
  });
});
