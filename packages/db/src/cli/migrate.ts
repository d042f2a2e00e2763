// `npm run db:migrate`: creates the database if it is missing and applies pending migrations.
import { envSchema, parseEnv, sharedEnv } from "@conveyor/config";
import { migrate } from "../maintenance/migrate";
import { databaseUnreachableMessage } from "../core/errors";
import { resolveDatabaseUrl } from "../core/hosts";

async function main(): Promise<void> {
  const env = parseEnv(envSchema({ DATABASE_URL: sharedEnv.DATABASE_URL, DATABASE_DIRECT_URL: sharedEnv.DATABASE_DIRECT_URL }), process.env);
  // Migrations take locks and run DDL in sessions: Postgres itself, never a transaction pooler; on a multi-host URL,
  // the host that target_session_attrs picks (the primary).
  const DATABASE_URL = env.DATABASE_DIRECT_URL ?? env.DATABASE_URL;
  try {
    const applied = await migrate(await resolveDatabaseUrl(DATABASE_URL, "postgres"));
    process.stdout.write(applied.length ? `Applied migrations: ${applied.join(", ")}\n` : "Database is up to date.\n");
  } catch (error) {
    throw new Error(databaseUnreachableMessage(error, DATABASE_URL) ?? `Migration failed: ${(error as Error).message}`, { cause: error });
  }
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
