import { randomBytes } from "node:crypto";
import pg from "pg";
import { findSchemaDrift, migrate } from "@conveyor/db";
import { databaseUrl, TEST_SERVER_URL } from "@conveyor/testkit";
import { readFile } from "node:fs/promises";
import path from "node:path";

async function dropDatabase(name: string) {
  const client = new pg.Client({ connectionString: databaseUrl("postgres") });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await client.end();
}

describe("db:migrate", () => {
  const name = `conveyor_test_mig_${randomBytes(4).toString("hex")}`;
  afterAll(() => dropDatabase(name));

  it("creates a missing database, applies every migration once and records it like prisma migrate deploy", async () => {
    const first = await migrate(databaseUrl(name));
    expect(first.length).toBeGreaterThan(0);
    const second = await migrate(databaseUrl(name));
    expect(second).toEqual([]);

    const client = new pg.Client({ connectionString: databaseUrl(name) });
    await client.connect();
    try {
      const { rows } = await client.query(
        "SELECT migration_name, finished_at, rolled_back_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name",
      );
      expect(rows.map((r) => r.migration_name)).toEqual(first);
      for (const row of rows) {
        expect(row.finished_at).toBeInstanceOf(Date);
        expect(row.rolled_back_at).toBeNull();
        expect(row.applied_steps_count).toBe(1);
      }
      const tables = await client.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1");
      expect(tables.rows.map((r) => r.tablename)).toEqual(
        expect.arrayContaining([
          "organizations",
          "users",
          "memberships",
          "invites",
          "api_keys",
          "jobs",
          "job_logs",
          "job_artifacts",
          "job_types",
          "idempotency_keys",
        ]),
      );
    } finally {
      await client.end();
    }
  });
});

describe("schema.prisma and prisma/migrations", () => {
  it("describe the same database", async () => {
    expect(await findSchemaDrift(TEST_SERVER_URL)).toEqual([]);
  });

  it("are reported as different when the schema gains a column no migration creates", async () => {
    const schema = await readFile(path.resolve(__dirname, "../../../prisma/schema.prisma"), "utf8");
    const changed = schema.replace(/model Organization \{\n/, "model Organization {\n  slug String?\n");
    expect(changed).not.toBe(schema);
    const drift = await findSchemaDrift(TEST_SERVER_URL, changed);
    expect(drift).toEqual([expect.stringMatching(/^columns: only in schema\.prisma: .*"organizations".*"slug"/)]);
  });
});
