// The stored functions' one source: packages/db/sql/functions/*.sql, one file per function or small family, each
// its live definition (CREATE OR REPLACE FUNCTION …). The migration runner applies them after the migrations; the
// migrations that defined them first keep their own text (Prisma checksums an applied migration), and a migration's
// CREATE OR REPLACE only serves that migration while it runs: the source is what stays (CONTRIBUTING.md, "Change a
// stored function"; docs/decisions/2026-12-07-stored-functions-from-source.md).
import { createHash } from "node:crypto";
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { inTransaction, Rollback, rollingBack } from "../core/transaction";

/** packages/db/sql/functions: two levels above both src/maintenance and dist/maintenance. */
export const functionsDir = path.resolve(__dirname, "../../sql/functions");

/** What the runner applied: one row per source file, with its text's checksum (like Prisma's _prisma_migrations). */
const APPLIED_TABLE = "_conveyor_functions";
/** Taken for the whole transaction, so two runners never apply at once (key space 38, used by nothing else). */
const LOCK = "SELECT pg_advisory_xact_lock(38, 0)";

export type FunctionSource = { file: string; sql: string; checksum: string; functions: string[] };

/** The source files, in name order, with the functions each defines. */
export async function readFunctionSources(dir = functionsDir): Promise<FunctionSource[]> {
  const files = (await readdir(dir)).filter((file) => file.endsWith(".sql")).sort();
  return Promise.all(
    files.map(async (file) => {
      const sql = await readFile(path.join(dir, file), "utf8");
      const functions = [...sql.matchAll(/CREATE\s+OR\s+REPLACE\s+FUNCTION\s+(?:public\.)?"?(\w+)"?\s*\(/gi)].map((m) => m[1]!);
      if (!functions.length) throw new Error(`${file} defines no function (CREATE OR REPLACE FUNCTION name(…))`);
      return { file, sql, checksum: createHash("sha256").update(sql).digest("hex"), functions };
    }),
  );
}

/**
 * Runs every source in the open transaction: first with function bodies unchecked (a file may call a function a later
 * file adds), then again checked, so a body that names something missing still fails here rather than at its first call.
 */
async function runSources(client: pg.ClientBase, sources: FunctionSource[]): Promise<void> {
  for (const checked of [false, true]) {
    await client.query(`SET LOCAL check_function_bodies = ${checked ? "on" : "off"}`);
    for (const source of sources) {
      try {
        await client.query(source.sql);
      } catch (error) {
        throw new Error(`packages/db/sql/functions/${source.file}: ${(error as Error).message}`, { cause: error });
      }
    }
  }
}

async function withPool<T>(databaseUrl: string, fn: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    return await fn(pool);
  } finally {
    await pool.end();
  }
}

/**
 * Applies the sources that changed since they were last applied, in one transaction, and records their checksums.
 * Every source is applied again when a migration finished since the last time (a migration may have replaced a
 * function with text of its own; the source is what stays). A file that was removed loses its row; its function is
 * not dropped: a migration drops a function, in the order of the code that stops calling it. `all`: every source,
 * changed or not. Returns the files applied.
 */
export async function applyFunctionSources(databaseUrl: string, dir = functionsDir, options: { all?: boolean } = {}): Promise<string[]> {
  const sources = await readFunctionSources(dir);
  return withPool(databaseUrl, (pool) =>
    inTransaction(pool, async (tx) => {
      await tx.query(LOCK);
      await tx.query(`CREATE TABLE IF NOT EXISTS ${APPLIED_TABLE} (
        file text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      const { rows } = await tx.query<{ file: string; checksum: string; migrated_since: boolean }>(
        `SELECT f.file, f.checksum,
                coalesce((SELECT max(finished_at) FROM _prisma_migrations) > f.applied_at, false) AS migrated_since
           FROM ${APPLIED_TABLE} f`,
      );
      const recorded = new Map(rows.map((row) => [row.file, row]));
      const changed =
        options.all || rows.some((row) => row.migrated_since) ? sources : sources.filter((source) => recorded.get(source.file)?.checksum !== source.checksum);
      const removed = rows.filter((row) => !sources.some((source) => source.file === row.file)).map((row) => row.file);
      if (removed.length) await tx.query(`DELETE FROM ${APPLIED_TABLE} WHERE file = ANY($1)`, [removed]);
      if (!changed.length) return [];
      await runSources(tx, changed);
      await tx.query(
        `INSERT INTO ${APPLIED_TABLE} (file, checksum) SELECT * FROM unnest($1::text[], $2::text[])
         ON CONFLICT (file) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()`,
        [changed.map((source) => source.file), changed.map((source) => source.checksum)],
      );
      return changed.map((source) => source.file);
    }),
  );
}

type Definitions = Map<string, string>;

/** Every function of the public schema named conveyor_*, by name and arguments, as pg_get_functiondef writes it. */
async function definitions(client: pg.ClientBase): Promise<Definitions> {
  const { rows } = await client.query<{ signature: string; definition: string }>(
    `SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS signature, pg_get_functiondef(p.oid) AS definition
       FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'conveyor\\_%' ORDER BY 1`,
  );
  return new Map(rows.map((row) => [row.signature, row.definition]));
}

/**
 * How the stored functions of a migrated database differ from their sources. `differs`: a function no source file
 * defines, one missing, and one whose live definition is not what its file gives although the file was applied as it
 * is (changed by hand since). `pending`: the files changed since they were applied (`npm run db:migrate` applies them). Finds out by applying every source in a
 * transaction it rolls back, so Postgres itself writes both definitions alike. Empty lists when they agree.
 */
export async function findFunctionDrift(databaseUrl: string, dir = functionsDir): Promise<{ differs: string[]; pending: string[] }> {
  const sources = await readFunctionSources(dir);
  /** Each function's source file, by name. */
  const fileOf = new Map(sources.flatMap((source) => source.functions.map((name) => [name, source.file] as const)));
  const nameOf = (signature: string) => signature.slice(0, signature.indexOf("("));
  return withPool(databaseUrl, (pool) =>
    rollingBack(
      inTransaction(pool, async (tx) => {
        const { rows: table } = await tx.query<{ found: boolean }>(`SELECT to_regclass('${APPLIED_TABLE}') IS NOT NULL AS found`);
        const applied = table[0]!.found ? (await tx.query<{ file: string; checksum: string }>(`SELECT file, checksum FROM ${APPLIED_TABLE}`)).rows : [];
        const recorded = new Map(applied.map((row) => [row.file, row.checksum]));
        const pending = sources.filter((source) => recorded.get(source.file) !== source.checksum).map((source) => source.file);
        const live = await definitions(tx);
        await runSources(tx, sources);
        const fromSource = await definitions(tx);
        const differs: string[] = [];
        for (const [signature, definition] of live) {
          const file = fileOf.get(nameOf(signature));
          if (file === undefined) differs.push(`${signature} has no source file in packages/db/sql/functions`);
          else if (fromSource.get(signature) !== definition && !pending.includes(file))
            differs.push(`${signature} is not what packages/db/sql/functions/${file} defines`);
        }
        for (const signature of fromSource.keys()) {
          if (!live.has(signature) && !pending.includes(fileOf.get(nameOf(signature))!)) differs.push(`${signature} is missing from the database`);
        }
        throw new Rollback({ differs, pending });
      }),
    ),
  );
}
