// The API as a real process: it refuses to start with one clear line, and stops cleanly on SIGTERM.
import { freePort, spawnService, suiteStorage } from "@conveyor/testkit";
import pg from "pg";

const noStack = (output: string) => expect(output).not.toMatch(/^\s+at /m);

describe("API process start-up", () => {
  const suite = suiteStorage();

  it("exits with one line naming the Postgres URL it tried when Postgres is unreachable", async () => {
    const port = await freePort();
    const api = spawnService("api", { DATABASE_URL: `postgresql://postgres:hunter2@127.0.0.1:${port}/conveyor`, PORT: "0" });
    expect(await api.exited).toBe(1);
    const output = api.output().trim();
    expect(output.split("\n")).toHaveLength(1);
    expect(output).toContain(`Cannot reach Postgres at postgresql://postgres:***@127.0.0.1:${port}/conveyor (ECONNREFUSED)`);
    expect(output).toMatch(/pg_ctlcluster|docker compose/);
    expect(output).not.toContain("hunter2");
    noStack(output);
  });

  it("exits with one line naming the Redis URL it tried when Redis is unreachable", async () => {
    const port = await freePort();
    const api = spawnService("api", { DATABASE_URL: suite.database.url, REDIS_URL: `redis://127.0.0.1:${port}`, PORT: "0" });
    expect(await api.exited).toBe(1);
    const output = api.output().trim();
    expect(output.split("\n")).toHaveLength(1);
    expect(output).toContain(`Cannot reach Redis at redis://127.0.0.1:${port}`);
    noStack(output);
  });

  it("exits naming the variable when a setting is invalid", async () => {
    const api = spawnService("api", { DATABASE_URL: suite.database.url, PORT: "not-a-port", BCRYPT_COST: "99" });
    expect(await api.exited).toBe(1);
    expect(api.output()).toMatch(/Invalid configuration: .*PORT must be a number.*BCRYPT_COST must be less than or equal to 15/);
    noStack(api.output());
  });

  it("requires JWT_SECRET in production", async () => {
    const api = spawnService("api", { DATABASE_URL: suite.database.url, NODE_ENV: "production", PORT: "0" });
    expect(await api.exited).toBe(1);
    expect(api.output()).toContain("JWT_SECRET is required");
  });

  it("refuses a database that was never migrated, saying how to migrate it", async () => {
    const admin = new pg.Client({ connectionString: suite.database.url.replace(/\/[^/]+$/, "/postgres") });
    await admin.connect();
    const empty = `${suite.database.name}_empty`;
    await admin.query(`CREATE DATABASE "${empty}"`);
    try {
      const api = spawnService("api", { DATABASE_URL: suite.database.url.replace(/\/[^/]+$/, `/${empty}`), PORT: "0" });
      expect(await api.exited).toBe(1);
      expect(api.output()).toContain("has no Conveyor tables. Run `npm run db:migrate` first.");
    } finally {
      await admin.query(`DROP DATABASE "${empty}" WITH (FORCE)`);
      await admin.end();
    }
  });

  it("serves until SIGTERM, then finishes and exits 0", async () => {
    const port = await freePort();
    const api = spawnService("api", { ...suite.env(), PORT: String(port) });
    await api.waitForOutput(/API listening/);
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
    expect(await api.stop("SIGTERM")).toBe(0);
    expect(api.output()).toContain("API stopped");
  });
});
