// Each test file gets its own database, cloned from a template that global setup migrated once, so files
// run in parallel without seeing each other's rows and a cloned database costs ~100 ms instead of a migration.
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { createDatabase, functionsDir, migrate, newId, withDatabaseName, type Database } from "@conveyor/db";
import { withPrisma, type DatabaseWithPrisma } from "@conveyor/db/prisma";

/** Server the tests use; override with TEST_DATABASE_URL (any database name: only the server is used). */
export const TEST_SERVER_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@localhost:5432/postgres";
/**
 * A transaction pooler (PgBouncer) in front of that server, for the pass that runs the suites through one
 * (test/ha/pgbouncer-pass.ts): test databases are then used through it, with the server as DATABASE_DIRECT_URL.
 */
export const TEST_POOLER_URL = process.env.TEST_POOLER_URL;

const migrationsDir = path.resolve(__dirname, "../../../prisma/migrations");
/** A test database older than this is left over from an interrupted run. */
const STALE_AFTER_SECONDS = 3 * 60 * 60;

export function databaseUrl(name: string): string {
  return withDatabaseName(TEST_SERVER_URL, name);
}

/** The template's name changes whenever a migration or a stored function's source does, so a stale template is never cloned. */
export function templateName(): string {
  const hash = createHash("sha256");
  for (const dir of readdirSync(migrationsDir).sort()) {
    if (dir.endsWith(".toml")) continue;
    hash.update(dir).update(readFileSync(path.join(migrationsDir, dir, "migration.sql")));
  }
  for (const file of readdirSync(functionsDir).sort()) hash.update(file).update(readFileSync(path.join(functionsDir, file)));
  return `conveyor_test_tpl_${hash.digest("hex").slice(0, 12)}`;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl("postgres") });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates (once) the migrated template database. Called from jest's global setup. */
export async function prepareTemplate(): Promise<string> {
  const name = templateName();
  const exists = await admin((c) => c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]));
  if (!exists.rowCount) {
    const building = `${name}_build_${randomBytes(3).toString("hex")}`;
    await migrate(databaseUrl(building));
    await admin(async (c) => {
      await c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [building]);
      await c.query(`ALTER DATABASE ${pg.escapeIdentifier(building)} RENAME TO ${pg.escapeIdentifier(name)}`).catch(async (error) => {
        // Another run built it at the same time.
        await c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(building)} WITH (FORCE)`);
        if (error.code !== "42P04") throw error;
      });
    });
  }
  // Databases left by interrupted runs (named with their creation time; other runs may be going on right
  // now on this machine, so only old ones).
  await admin(async (c) => {
    // LIKE's "_" matches any character: escaped, so another test's own database (conveyor_test_fn_…) is not taken
    // for one of these, and a name without a creation time is never dropped.
    const { rows } = await c.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 'conveyor\\_test\\_f\\_%'");
    const cutoff = Math.floor(Date.now() / 1000) - STALE_AFTER_SECONDS;
    for (const { datname } of rows) {
      const created = /^conveyor_test_f_(\d+)_/.exec(datname)?.[1];
      if (created !== undefined && Number(created) < cutoff)
        await c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(datname)} WITH (FORCE)`).catch(() => {});
    }
  });
  return name;
}

export type TestDatabase = {
  name: string;
  url: string;
  /** The server itself when `url` goes through a pooler (DATABASE_DIRECT_URL); else undefined. */
  directUrl?: string;
  /** A Database on the test database with Prisma's client on its pool, for arranging and asserting. */
  db: DatabaseWithPrisma;
  drop(): Promise<void>;
};

/** A fresh, migrated database for one test file. Drop it in afterAll. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `conveyor_test_f_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString("hex")}`;
  const template = templateName();
  for (let attempt = 0; ; attempt++) {
    try {
      await admin((c) => c.query(`CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(template)}`));
      break;
    } catch (error) {
      // Two files cloning the template at the same instant: Postgres refuses the second; try again.
      if (attempt < 20 && /being accessed by other users/.test((error as Error).message)) {
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 150));
        continue;
      }
      throw error;
    }
  }
  const directUrl = TEST_POOLER_URL ? databaseUrl(name) : undefined;
  const url = TEST_POOLER_URL ? withDatabaseName(TEST_POOLER_URL, name) : databaseUrl(name);
  const db = withPrisma(createDatabase({ url, directUrl, poolSize: 5, applicationName: "conveyor-test" }));
  return {
    name,
    url,
    directUrl,
    db,
    drop: async () => {
      await db.close();
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`));
    },
  };
}

/** Organizations written straight to a test database (no member, no key): their new ids, in the order of `names`. */
export async function insertOrgs<Names extends string[]>(db: Database, ...names: Names): Promise<{ [K in keyof Names]: string }> {
  const ids = names.map(() => newId());
  await db.pool.query("INSERT INTO organizations (id, name) SELECT * FROM unnest($1::uuid[], $2::text[])", [ids, names]);
  return ids as { [K in keyof Names]: string };
}
