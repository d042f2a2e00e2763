// `npm run db:check`: fails when schema.prisma and prisma/migrations describe different databases, when a stored
// function has no source file in packages/db/sql/functions, and when a function of the database DATABASE_URL names
// is not what its source file defines (changed by hand); source files changed since that database was migrated are
// listed, for `npm run db:migrate`.
import pg from "pg";
import { envSchema, parseEnv, sharedEnv } from "@conveyor/config";
import { findSchemaDrift } from "../maintenance/drift";
import { findFunctionDrift } from "../maintenance/functions";

/** Whether the database exists and was migrated (a fresh machine has none yet: nothing of it to check). */
async function migrated(databaseUrl: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl });
  try {
    await client.connect();
    const { rows } = await client.query<{ found: boolean }>("SELECT to_regclass('_prisma_migrations') IS NOT NULL AS found");
    return rows[0]!.found;
  } catch (error) {
    if ((error as { code?: string }).code === "3D000") return false;
    throw error;
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const { DATABASE_URL } = parseEnv(envSchema({ DATABASE_URL: sharedEnv.DATABASE_URL }), process.env);
  const drift = await findSchemaDrift(DATABASE_URL);
  if (drift.length === 0) process.stdout.write("schema.prisma, prisma/migrations and packages/db/sql/functions agree.\n");
  else {
    process.stderr.write(
      `schema.prisma, prisma/migrations and packages/db/sql/functions disagree (create a migration with \`npm run db:migration -- <name>\`; a stored function's definition goes in its source file):\n${drift.join("\n")}\n`,
    );
    process.exitCode = 1;
  }
  const name = new URL(DATABASE_URL).pathname.slice(1);
  if (!(await migrated(DATABASE_URL))) return;
  const { differs, pending } = await findFunctionDrift(DATABASE_URL);
  if (pending.length)
    process.stdout.write(`Database ${name}: source files changed since it was migrated (npm run db:migrate applies them): ${pending.join(", ")}\n`);
  if (differs.length) {
    process.stderr.write(
      `Database ${name}: stored functions differ from their source files (npm run db:migrate -- --all-functions restores them from their files):\n${differs.join("\n")}\n`,
    );
    process.exitCode = 1;
  } else process.stdout.write(`Database ${name}: its stored functions are those of their source files.\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
