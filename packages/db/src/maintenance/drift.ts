// Checks that prisma/migrations and schema.prisma describe the same database. Prisma's own check
// (`migrate diff --from-migrations`) needs a shadow database the wasm engine cannot manage here, so we
// build the two databases ourselves and compare what Postgres' catalogs say about them.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { findFunctionDrift } from "./functions";
import { diffSchemas, migrate, readSchema, withDatabaseName } from "./migrate";

type Catalog = Record<string, unknown[]>;

/**
 * The partitions of partitioned tables (docs/reference/time.md#partitions-and-retention): made by the migrations and
 * the leader, never described by schema.prisma, which describes their parent. Their columns, indexes and constraints
 * are the parent's.
 */
const PARTITIONS = "SELECT relname::text FROM pg_class WHERE relispartition AND relnamespace = 'public'::regnamespace";

const catalogQueries: Record<string, string> = {
  enums: `SELECT t.typname AS name, array_agg(e.enumlabel ORDER BY e.enumsortorder) AS labels
            FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
           WHERE t.typnamespace = 'public'::regnamespace GROUP BY t.typname ORDER BY 1`,
  columns: `SELECT table_name, column_name, udt_name, is_nullable, column_default, character_maximum_length,
                   numeric_precision, datetime_precision, is_identity
              FROM information_schema.columns
             WHERE table_schema = 'public' AND table_name NOT IN ('_prisma_migrations', '_conveyor_functions')
               AND table_name NOT IN (${PARTITIONS}) ORDER BY 1, 2`,
  // A partitioned table's index is defined ON ONLY the parent (its partitions' indexes are attached to it).
  indexes: `SELECT tablename, indexname, replace(indexdef, ' ON ONLY ', ' ON ') AS indexdef FROM pg_indexes
             WHERE schemaname = 'public' AND tablename NOT IN ('_prisma_migrations', '_conveyor_functions')
               AND tablename NOT IN (${PARTITIONS}) ORDER BY 1, 2`,
  constraints: `SELECT conrelid::regclass::text AS table_name, conname, pg_get_constraintdef(oid) AS definition
                  FROM pg_constraint
                 WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text NOT IN ('_prisma_migrations', '_conveyor_functions')
                   AND conrelid::regclass::text NOT IN (${PARTITIONS}) ORDER BY 1, 2`,
};

/**
 * Indexes on an expression, which Prisma cannot describe: the migrations create them and schema.prisma names them in a
 * comment. The migrations' database must have each, exactly as written here; the schema's cannot.
 */
export const MIGRATION_ONLY_INDEXES: Record<string, string> = {
  job_search_vector_idx: "CREATE INDEX job_search_vector_idx ON public.job_search USING gin (conveyor_search_vector(search_values))",
};

async function describe(databaseUrl: string): Promise<Catalog> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const catalog: Catalog = {};
    for (const [name, sql] of Object.entries(catalogQueries)) catalog[name] = (await client.query(sql)).rows;
    return catalog;
  } finally {
    await client.end();
  }
}

async function dropDatabase(baseUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: withDatabaseName(baseUrl, "postgres") });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/**
 * Builds one scratch database from the migrations and one from schema.prisma (or `schema`, the text of
 * another version of it), and lists every catalog row
 * that differs. Storage parameters such as fillfactor are not compared: Prisma cannot express them. The stored
 * functions are not in schema.prisma: the migrated database's must be those of their source files, each function
 * with one (functions.ts). Returns an empty list when all agree.
 */
export async function findSchemaDrift(serverUrl: string, schema?: string): Promise<string[]> {
  const suffix = randomBytes(4).toString("hex");
  const fromMigrations = `conveyor_drift_m_${suffix}`;
  const fromSchema = `conveyor_drift_s_${suffix}`;
  try {
    await migrate(withDatabaseName(serverUrl, fromMigrations));
    const sql = await diffSchemas(null, schema ?? (await readSchema()), withDatabaseName(serverUrl, fromMigrations));
    await migrateFromSql(withDatabaseName(serverUrl, fromSchema), sql);
    const [a, b] = await Promise.all([describe(withDatabaseName(serverUrl, fromMigrations)), describe(withDatabaseName(serverUrl, fromSchema))]);
    const differences = (await findFunctionDrift(withDatabaseName(serverUrl, fromMigrations))).differs.map((line) => `functions: ${line}`);
    for (const [name, definition] of Object.entries(MIGRATION_ONLY_INDEXES)) {
      const made = (a.indexes ?? []).find((row) => (row as { indexname: string }).indexname === name) as { indexdef: string } | undefined;
      if (made?.indexdef !== definition)
        differences.push(`indexes: ${name} should be made by the migrations as: ${definition}; they make: ${made?.indexdef ?? "nothing"}`);
      a.indexes = (a.indexes ?? []).filter((row) => (row as { indexname: string }).indexname !== name);
    }
    for (const kind of Object.keys(catalogQueries)) {
      const left = new Set((a[kind] ?? []).map((row) => JSON.stringify(row)));
      const right = new Set((b[kind] ?? []).map((row) => JSON.stringify(row)));
      for (const row of left) if (!right.has(row)) differences.push(`${kind}: only in migrations: ${row}`);
      for (const row of right) if (!left.has(row)) differences.push(`${kind}: only in schema.prisma: ${row}`);
    }
    return differences;
  } finally {
    await Promise.all([dropDatabase(serverUrl, fromMigrations), dropDatabase(serverUrl, fromSchema)]);
  }
}

async function migrateFromSql(databaseUrl: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: withDatabaseName(databaseUrl, "postgres") });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(new URL(databaseUrl).pathname.slice(1))}`);
  } finally {
    await admin.end();
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
