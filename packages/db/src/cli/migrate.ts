// `npm run db:migrate`: creates the database if it is missing, applies pending migrations, then the stored functions'
// source files that changed (packages/db/sql/functions). `--functions-only`: only the sources, after `prisma migrate
// deploy` (the Docker image's migrate stage); `--all-functions`: every source, changed or not (a function changed by
// hand, which `npm run db:check` reports, is restored).
import { envSchema, parseEnv, sharedEnv } from "@conveyor/config";
import { applyFunctionSources, functionsDir } from "../maintenance/functions";
import { migrateDatabase, migrationReport } from "../maintenance/migrate";
import { databaseUnreachableMessage } from "../core/errors";
import { resolveDatabaseUrl } from "../core/hosts";

async function main(): Promise<void> {
  const env = parseEnv(envSchema({ DATABASE_URL: sharedEnv.DATABASE_URL, DATABASE_DIRECT_URL: sharedEnv.DATABASE_DIRECT_URL }), process.env);
  // Migrations take locks and run DDL in sessions: Postgres itself, never a transaction pooler; on a multi-host URL,
  // the host that target_session_attrs picks (the primary).
  const DATABASE_URL = env.DATABASE_DIRECT_URL ?? env.DATABASE_URL;
  try {
    const url = await resolveDatabaseUrl(DATABASE_URL, "postgres");
    const all = process.argv.includes("--all-functions");
    const applied = process.argv.includes("--functions-only")
      ? { migrations: [], functions: await applyFunctionSources(url, functionsDir, { all }) }
      : await migrateDatabase(url, { allFunctions: all });
    process.stdout.write(`${migrationReport(applied)}\n`);
  } catch (error) {
    throw new Error(databaseUnreachableMessage(error, DATABASE_URL) ?? `Migration failed: ${(error as Error).message}`, { cause: error });
  }
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
