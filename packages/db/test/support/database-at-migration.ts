// A database of its own built by the migrations' own SQL up to a point, for the data-migration tests: a database of
// an earlier shape, filled as that shape was written, then migrated the rest of the way (applyMigrations, then the
// stored functions' sources as the runner applies them).
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { databaseUrl } from "@conveyor/testkit";
import { applyFunctionSources, createDatabase, functionsDir, type Database } from "../../src";

const MIGRATIONS = path.resolve(__dirname, "../../../../prisma/migrations");

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl("postgres") });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Runs, in order, the migrations whose directory names `applies` takes. */
export async function applyMigrations(db: Database, applies: (name: string) => boolean): Promise<void> {
  const names = (await readdir(MIGRATIONS, { withFileTypes: true }))
    .filter((e) => e.isDirectory() && applies(e.name))
    .map((e) => e.name)
    .sort();
  for (const name of names) await db.pool.query(await readFile(path.join(MIGRATIONS, name, "migration.sql"), "utf8"));
}

export type DatabaseAtMigration = {
  db: Database;
  /** The stored functions' sources, all of them, as the runner applies them after a migration. */
  applyFunctionSources(): Promise<void>;
  drop(): Promise<void>;
};

/** A new database named `<prefix>_<random>`, built by the migrations whose names `applies` takes. */
export async function databaseAtMigration(prefix: string, applies: (name: string) => boolean): Promise<DatabaseAtMigration> {
  const name = `${prefix}_${randomBytes(4).toString("hex")}`;
  await admin(`CREATE DATABASE "${name}"`);
  const db = createDatabase({ url: databaseUrl(name), poolSize: 3, applicationName: "conveyor-test" });
  await applyMigrations(db, applies);
  return {
    db,
    async applyFunctionSources() {
      // The runner reads when Prisma last migrated; these databases were migrated without it.
      await db.pool.query("CREATE TABLE IF NOT EXISTS _prisma_migrations (finished_at timestamptz)");
      await applyFunctionSources(databaseUrl(name), functionsDir, { all: true });
    },
    async drop() {
      await db.close();
      await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}
