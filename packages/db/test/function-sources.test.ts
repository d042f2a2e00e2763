// Stored functions from their source files (packages/db/sql/functions): a fresh database gets every one from its file,
// a changed file is applied by the next migration run and only it, a migration finished since the last run has every
// file applied again, a removed file's function stays (a migration drops it) and is reported, and a function changed
// by hand is reported by `npm run db:check` until `--all-functions` restores it.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { applyFunctionSources, findFunctionDrift, functionsDir, migrateDatabase, readFunctionSources } from "@conveyor/db";
import { databaseUrl } from "@conveyor/testkit";

const name = `conveyor_test_fn_${randomBytes(4).toString("hex")}`;
const url = databaseUrl(name);
let changedDir: string;

async function sql<T extends pg.QueryResultRow>(text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  changedDir = await mkdtemp(path.join(tmpdir(), "conveyor-functions-"));
  await cp(functionsDir, changedDir, { recursive: true });
});
afterAll(async () => {
  await rm(changedDir, { recursive: true, force: true });
  const admin = new pg.Client({ connectionString: databaseUrl("postgres") });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
});

describe("stored functions from source", () => {
  it("a fresh database gets every function from its source file, once", async () => {
    const sources = await readFunctionSources();
    const first = await migrateDatabase(url);
    expect(first.migrations.length).toBeGreaterThan(0);
    expect(first.functions).toEqual(sources.map((source) => source.file));
    const recorded = await sql<{ file: string; checksum: string }>("SELECT file, checksum FROM _conveyor_functions ORDER BY file");
    expect(recorded).toEqual(sources.map(({ file, checksum }) => ({ file, checksum })));
    // Every conveyor_* function of the database is its file's, and each file's are there.
    expect(await findFunctionDrift(url)).toEqual({ differs: [], pending: [] });
    expect(await migrateDatabase(url)).toEqual({ migrations: [], functions: [] });
  });

  it("a changed file is applied by the next run, and only it; a removed file's function stays and is reported", async () => {
    const file = path.join(changedDir, "conveyor_iso.sql");
    await writeFile(file, (await readFile(file, "utf8")).replace(`'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`, `'YYYY'`));
    expect(await findFunctionDrift(url, changedDir)).toEqual({ differs: [], pending: ["conveyor_iso.sql"] });
    expect(await migrateDatabase(url, { functionsDir: changedDir })).toEqual({ migrations: [], functions: ["conveyor_iso.sql"] });
    expect(await sql("SELECT conveyor_iso('2026-12-07T03:40:00Z') AS t")).toEqual([{ t: "2026" }]);
    expect(await findFunctionDrift(url, changedDir)).toEqual({ differs: [], pending: [] });

    await rm(path.join(changedDir, "conveyor_value_path.sql"));
    expect(await migrateDatabase(url, { functionsDir: changedDir })).toEqual({ migrations: [], functions: [] });
    expect(await sql("SELECT count(*)::int AS n FROM _conveyor_functions WHERE file = 'conveyor_value_path.sql'")).toEqual([{ n: 0 }]);
    expect((await findFunctionDrift(url, changedDir)).differs).toEqual([
      "conveyor_value_path(doc jsonb, needle text, field text, is_prefix boolean) has no source file in packages/db/sql/functions",
    ]);

    // Back to the repository's files: the one changed file is applied again.
    expect(await migrateDatabase(url)).toEqual({ migrations: [], functions: ["conveyor_iso.sql", "conveyor_value_path.sql"] });
    expect(await sql("SELECT conveyor_iso('2026-12-07T03:40:00Z') AS t")).toEqual([{ t: "2026-12-07T03:40:00.000Z" }]);
  });

  it("a migration finished since the last run has every file applied again (the source is what stays)", async () => {
    await sql("CREATE OR REPLACE FUNCTION conveyor_iso(t timestamptz) RETURNS text LANGUAGE sql STABLE AS $$ SELECT 'from a migration' $$");
    await sql("UPDATE _prisma_migrations SET finished_at = clock_timestamp() WHERE migration_name = (SELECT max(migration_name) FROM _prisma_migrations)");
    const { functions } = await migrateDatabase(url);
    expect(functions).toEqual((await readFunctionSources()).map((source) => source.file));
    expect(await sql("SELECT conveyor_iso('2026-12-07T03:40:00Z') AS t")).toEqual([{ t: "2026-12-07T03:40:00.000Z" }]);
  });

  it("a function changed by hand is reported by db:check, and restored by --all-functions", async () => {
    await sql(
      "CREATE OR REPLACE FUNCTION conveyor_hold(p_type text, p_org uuid, p_key text, p_key_limit int, p_rate_limit text) RETURNS text LANGUAGE sql STABLE AS $$ SELECT NULL::text $$",
    );
    const signature = "conveyor_hold(p_type text, p_org uuid, p_key text, p_key_limit integer, p_rate_limit text)";
    expect(await findFunctionDrift(url)).toEqual({ differs: [`${signature} is not what packages/db/sql/functions/conveyor_hold.sql defines`], pending: [] });
    // An unchanged file is not applied again by a plain run.
    expect(await migrateDatabase(url)).toEqual({ migrations: [], functions: [] });

    const root = path.resolve(__dirname, "../../..");
    const check = spawnSync("npm", ["run", "-s", "db:check"], { cwd: root, env: { ...process.env, DATABASE_URL: url }, encoding: "utf8" });
    // Compared whole, so that a failure shows both streams.
    expect({ status: check.status, stdout: check.stdout, stderr: check.stderr }).toMatchObject({
      status: 1,
      stdout: expect.stringContaining("schema.prisma, prisma/migrations and packages/db/sql/functions agree."),
      stderr: expect.stringContaining(`${signature} is not what packages/db/sql/functions/conveyor_hold.sql defines`),
    });

    expect(await applyFunctionSources(url, functionsDir, { all: true })).toHaveLength((await readFunctionSources()).length);
    expect(await findFunctionDrift(url)).toEqual({ differs: [], pending: [] });
  });
});
