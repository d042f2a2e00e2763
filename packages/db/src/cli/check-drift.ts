// `npm run db:check`: fails when schema.prisma and prisma/migrations describe different databases.
import { envSchema, parseEnv, sharedEnv } from "@conveyor/config";
import { findSchemaDrift } from "../maintenance/drift";

async function main(): Promise<void> {
  const { DATABASE_URL } = parseEnv(envSchema({ DATABASE_URL: sharedEnv.DATABASE_URL }), process.env);
  const drift = await findSchemaDrift(DATABASE_URL);
  if (drift.length === 0) {
    process.stdout.write("schema.prisma and prisma/migrations agree.\n");
    return;
  }
  process.stderr.write(`schema.prisma and prisma/migrations disagree (create a migration with \`npm run db:migration -- <name>\`):\n${drift.join("\n")}\n`);
  process.exitCode = 1;
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
