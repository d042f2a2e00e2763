// Applies prisma/migrations with Prisma's own schema engine compiled to WebAssembly, so migrating needs no
// native binary download. It records applied migrations in `_prisma_migrations` exactly as
// `prisma migrate deploy` does, so the two are interchangeable (Docker images use the latter).
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import { applyFunctionSources, functionsDir } from "./functions";

type SchemaEngine = import("@prisma/schema-engine-wasm/schema_engine_bg").SchemaEngine;

/** The repository's prisma/ folder: three levels above both src/ and dist/ of this package. */
export const prismaDir = path.resolve(__dirname, "../../../../prisma");
const schemaPath = path.join(prismaDir, "schema.prisma");
const migrationsDir = path.join(prismaDir, "migrations");

const noFilter = { externalTables: [], externalEnums: [] };

/** `databaseUrl` pointing at database `name` on the same server (same credentials and options). */
export function withDatabaseName(databaseUrl: string, name: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Creates the database named in `databaseUrl` when it does not exist. Returns true if it created it. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, ""));
  if (!name) throw new Error("DATABASE_URL names no database");
  const client = new pg.Client({ connectionString: withDatabaseName(databaseUrl, "postgres") });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount) return false;
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    return true;
  } catch (error) {
    // Another process created it between our check and our CREATE.
    if ((error as { code?: string }).code === "42P04") return false;
    throw error;
  } finally {
    await client.end();
  }
}

type Glue = typeof import("@prisma/schema-engine-wasm/schema_engine_bg");

// Node's WebAssembly global; @types/node 20 does not declare it and lib "dom" would bring far more.
type WasmApi = {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { exports: Record<string, unknown> };
};
const { WebAssembly } = globalThis as unknown as { WebAssembly: WasmApi };
let glueReady: Promise<Glue> | undefined;

/** Instantiates the wasm module once per process: its JS glue keeps module-level state. */
function loadGlue(): Promise<Glue> {
  glueReady ??= (async () => {
    const glue = await import("@prisma/schema-engine-wasm/schema_engine_bg");
    const wasmPath = path.join(path.dirname(require.resolve("@prisma/schema-engine-wasm/schema_engine_bg")), "schema_engine_bg.wasm");
    const module = new WebAssembly.Module(await readFile(wasmPath));
    // The engine's timers must not keep a finished CLI alive for their full duration.
    const imports: Record<string, unknown> = { ...glue };
    for (const name of Object.keys(imports).filter((key) => key.startsWith("__wbg_setTimeout_"))) {
      const setTimer = imports[name] as (...args: unknown[]) => NodeJS.Timeout;
      imports[name] = (...args: unknown[]) => setTimer(...args).unref();
    }
    const instance = new WebAssembly.Instance(module, { "./schema_engine_bg.js": imports });
    const exports = instance.exports as Record<string, unknown> & { __wbindgen_start(): void };
    // The engine reports a Rust panic through this global before throwing; keep the message for the error.
    const registry = {
      message: "",
      set_message(message: string) {
        registry.message = message;
      },
    };
    (globalThis as { PRISMA_WASM_PANIC_REGISTRY?: unknown }).PRISMA_WASM_PANIC_REGISTRY = registry;
    glue.__wbg_set_wasm(exports as never);
    exports.__wbindgen_start();
    return glue;
  })();
  return glueReady;
}

/**
 * The pg adapter runs a migration split at every ";", which cuts a PL/pgSQL function's body apart. `prisma migrate
 * deploy` sends a migration as one script; so does this: one simple-protocol query, which Postgres runs as one
 * implicit transaction. Errors are reported through the adapter's own conversion, as its split version does.
 */
function wholeScripts(factory: PrismaPg): PrismaPg {
  const connect = factory.connect.bind(factory);
  factory.connect = async () => {
    const adapter = await connect();
    adapter.executeScript = async (script: string) => {
      try {
        await adapter.underlyingDriver().query(script);
      } catch (error) {
        (adapter as unknown as { onError(error: unknown): never }).onError(error);
      }
    };
    return adapter;
  };
  return factory;
}

/** Runs `fn` with a schema engine connected to `databaseUrl`, and releases the engine and its connections. */
async function withEngine<T>(databaseUrl: string, fn: (engine: SchemaEngine) => Promise<T>): Promise<T> {
  const glue = await loadGlue();
  const schema = await readFile(schemaPath, "utf8");
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  // The engine does not hand back the connection it checked out; we close every connection ourselves.
  const clients = new Set<pg.PoolClient>();
  pool.on("connect", (client) => clients.add(client));
  try {
    const adapter = bindMigrationAwareSqlAdapterFactory(wholeScripts(new PrismaPg(pool)));
    const engine = await glue.SchemaEngine.new({ datamodels: [[schemaPath, schema]] }, () => {}, adapter);
    try {
      return await fn(engine);
    } finally {
      engine.free();
    }
  } finally {
    await Promise.all([...clients].map((client) => (client as unknown as pg.Client).end().catch(() => {})));
    await pool.end();
  }
}

async function migrationsList() {
  const entries = (await readdir(migrationsDir, { withFileTypes: true })).filter((e) => e.isDirectory());
  const directories = await Promise.all(
    entries
      .map((e) => e.name)
      .sort()
      .map(async (name) => ({
        path: name,
        migrationFile: {
          path: "migration.sql",
          content: { tag: "ok" as const, value: await readFile(path.join(migrationsDir, name, "migration.sql"), "utf8") },
        },
      })),
  );
  const lockPath = path.join(migrationsDir, "migration_lock.toml");
  return {
    baseDir: migrationsDir,
    lockfile: { path: "migration_lock.toml", content: await readFile(lockPath, "utf8").catch(() => null) },
    shadowDbInitScript: "",
    migrationDirectories: directories,
  };
}

/**
 * Creates the database if missing, applies pending migrations, then the stored functions' source files that need it
 * (functions.ts). Returns the migrations and the source files it applied.
 */
export async function migrateDatabase(
  databaseUrl: string,
  options: { functionsDir?: string; allFunctions?: boolean } = {},
): Promise<{ migrations: string[]; functions: string[] }> {
  await ensureDatabase(databaseUrl);
  const migrationsToApply = await migrationsList();
  const migrations = await withEngine(databaseUrl, async (engine) => {
    const { appliedMigrationNames } = await engine.applyMigrations({ migrationsList: migrationsToApply, filters: noFilter });
    return appliedMigrationNames;
  });
  return { migrations, functions: await applyFunctionSources(databaseUrl, options.functionsDir ?? functionsDir, { all: options.allFunctions }) };
}

/** `migrateDatabase`, answering the names of the migrations it applied. */
export async function migrate(databaseUrl: string): Promise<string[]> {
  return (await migrateDatabase(databaseUrl)).migrations;
}

/** What `migrateDatabase` did, in a line for a terminal. */
export function migrationReport({ migrations, functions }: { migrations: string[]; functions: string[] }): string {
  if (!migrations.length && !functions.length) return "Database is up to date.";
  const lines = [];
  if (migrations.length) lines.push(`Applied migrations: ${migrations.join(", ")}`);
  if (functions.length) lines.push(`Applied stored functions from packages/db/sql/functions: ${functions.join(", ")}`);
  return lines.join("\n");
}

/**
 * The SQL that turns a database built from the `from` schema text into one built from `to`
 * (null means an empty database). Needs no database: the engine compares the two data models.
 */
export async function diffSchemas(from: string | null, to: string, databaseUrl: string): Promise<string> {
  const target = (content: string) => ({ tag: "schemaDatamodel" as const, files: [{ path: schemaPath, content }] });
  const { stdout } = await withEngine(databaseUrl, (engine) =>
    engine.diff({ from: from === null ? { tag: "empty" } : target(from), to: target(to), script: true, exitCode: null, filters: noFilter }),
  );
  return (stdout ?? "").replace(/^-- CreateSchema\nCREATE SCHEMA IF NOT EXISTS "public";\n\n/m, "");
}

/** The current schema.prisma text. */
export function readSchema(): Promise<string> {
  return readFile(schemaPath, "utf8");
}
