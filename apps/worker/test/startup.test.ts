// The worker as a real process: clear refusals, what it cannot run said at start-up, and a clean stop.
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, spawnService, startPrivateRedis, TEST_REDIS_URL, suiteStorage } from "@conveyor/testkit";

describe("worker process start-up", () => {
  const suite = suiteStorage();

  it("refuses to start when Redis may evict keys (maxmemory-policy is not noeviction)", async () => {
    const redis = await startPrivateRedis(["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"]);
    try {
      const worker = spawnService("worker", { DATABASE_URL: suite.database.url, REDIS_URL: redis.url, WORKER_METRICS_PORT: "0" });
      expect(await worker.exited).toBe(1);
      expect(worker.output().trim()).toMatch(/^Refusing to start: Redis maxmemory-policy is allkeys-lru; it must be noeviction/);
      expect(worker.output()).not.toMatch(/^\s+at /m);
    } finally {
      await redis.stop();
    }
  });

  it("exits with one line naming the Redis URL when Redis is unreachable", async () => {
    const port = await freePort();
    const worker = spawnService("worker", { DATABASE_URL: suite.database.url, REDIS_URL: `redis://127.0.0.1:${port}`, WORKER_METRICS_PORT: "0" });
    expect(await worker.exited).toBe(1);
    expect(worker.output().trim()).toMatch(new RegExp(`^Cannot reach Redis at redis://127.0.0.1:${port}`));
  });

  it("refuses an invalid WORKER_TYPES entry, naming the variable", async () => {
    const worker = spawnService("worker", { DATABASE_URL: suite.database.url, WORKER_TYPES: "webhook,Bad-Type", WORKER_METRICS_PORT: "0" });
    expect(await worker.exited).toBe(1);
    expect(worker.output()).toContain('WORKER_TYPES names an invalid job type "Bad-Type"');
  });

  it("says once at start-up which built-in types cannot run on this machine and why, and still starts", async () => {
    const worker = spawnService("worker", {
      DATABASE_URL: suite.database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: suite.prefix,
      WORKER_METRICS_PORT: "0",
      WORKER_TYPES: "generate_pdf,send_email,webhook",
      PUPPETEER_EXECUTABLE_PATH: "/nonexistent/chromium",
      EMAIL_PROVIDER_API_KEY: "SG.secret-key-never-logged",
    });
    try {
      await worker.waitForOutput(/worker started/);
      await worker.waitForOutput(/cannot run on this machine/);
    } finally {
      expect(await worker.stop("SIGTERM")).toBe(0);
    }
    const lines = worker
      .output()
      .split("\n")
      .filter((line) => line.includes("cannot run on this machine"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("generate_pdf: no Chromium at /nonexistent/chromium (install chromium, or set PUPPETEER_EXECUTABLE_PATH)");
    expect(lines[0]).toContain("send_email: EMAIL_FROM is not set");
    expect(lines[0]).not.toMatch(/webhook|EMAIL_PROVIDER_API_KEY/);
    expect(worker.output()).not.toContain("secret-key-never-logged");
  });

  it("says nothing of the kind when every type it serves can run", async () => {
    // Any executable file stands for Chromium here: start-up checks that it can be run, not what it prints.
    const chromium = path.join(mkdtempSync(path.join(os.tmpdir(), "conveyor-chromium-")), "chromium");
    writeFileSync(chromium, "#!/bin/sh\nexit 0\n");
    chmodSync(chromium, 0o755);
    const worker = spawnService("worker", {
      DATABASE_URL: suite.database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: suite.prefix,
      WORKER_METRICS_PORT: "0",
      WORKER_TYPES: "generate_pdf,webhook",
      PUPPETEER_EXECUTABLE_PATH: chromium,
    });
    await worker.waitForOutput(/worker started/);
    expect(await worker.stop("SIGTERM")).toBe(0);
    expect(worker.output()).toContain("worker stopped");
    expect(worker.output()).not.toContain("cannot run on this machine");
  });

  it("refuses a plugin whose type an organization registered as its own (its jobs are that organization's workers' only)", async () => {
    const orgId = "019a8c52-0000-7000-8000-00000000a044";
    await suite.database.db.pool.query("INSERT INTO organizations (id, name) VALUES ($1, 'Own types') ON CONFLICT DO NOTHING", [orgId]);
    await suite.database.db.pool.query(
      `INSERT INTO org_job_types (org_id, name, payload_schema) VALUES ($1, 'resize_own', '{"type": "object"}') ON CONFLICT DO NOTHING`,
      [orgId],
    );
    const plugin = path.join(mkdtempSync(path.join(os.tmpdir(), "conveyor-plugin-")), "resize.js");
    writeFileSync(plugin, 'module.exports = { type: "resize_own", async handle() {} };\n');
    const worker = spawnService("worker", { ...suite.env(), WORKER_PLUGINS: plugin, WORKER_METRICS_PORT: "0" });
    expect(await worker.exited).toBe(1);
    expect(worker.output()).toContain('WORKER_PLUGINS declares "resize_own", registered by an organization as its own job type');
    const { rows } = await suite.database.db.pool.query("SELECT 1 FROM job_types WHERE name = 'resize_own'");
    expect(rows).toEqual([]);
  });

  it("answers /healthz, then stops cleanly on SIGTERM with exit code 0", async () => {
    const port = await freePort();
    const worker = spawnService("worker", { ...suite.env(), WORKER_METRICS_PORT: String(port) });
    await worker.waitForOutput(/worker started/);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect(await worker.stop("SIGTERM")).toBe(0);
  });
});
