// `npm run db:migrate`: creates the database if it is missing and applies pending migrations.
import { envSchema, parseEnv, sharedEnv } from "@conveyor/config";
import { migrate } from "../migrate";
import { databaseUnreachableMessage } from "../errors";

async function main(): Promise<void> {
  const { DATABASE_URL } = parseEnv(envSchema({ DATABASE_URL: sharedEnv.DATABASE_URL }), process.env);
  try {
    const applied = await migrate(DATABASE_URL);
    process.stdout.write(applied.length ? `Applied migrations: ${applied.join(", ")}\n` : "Database is up to date.\n");
  } catch (error) {
    throw new Error(databaseUnreachableMessage(error, DATABASE_URL) ?? `Migration failed: ${(error as Error).message}`, { cause: error });
  }
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
