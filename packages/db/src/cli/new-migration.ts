// `npm run db:migration -- <name> [--from <git-rev>]`: writes prisma/migrations/<timestamp>_<name>/migration.sql
// with the SQL that takes the schema as committed at <git-rev> (default HEAD) to the working schema.prisma.
// Works offline: Prisma's wasm schema engine diffs the two data models without a database.
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { envSchema, parseEnv, sharedEnv } from "@conveyor/config";
import { diffSchemas, prismaDir, readSchema } from "../maintenance/migrate";

function committedSchema(rev: string): string | null {
  try {
    return execFileSync("git", ["show", `${rev}:prisma/schema.prisma`], { cwd: prismaDir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    return null;
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const fromIndex = args.indexOf("--from");
  const rev = fromIndex >= 0 ? (args.splice(fromIndex, 2)[1] ?? "HEAD") : "HEAD";
  const name = args[0];
  if (!name || !/^[a-z0-9_]+$/.test(name)) throw new Error("Usage: npm run db:migration -- <name_in_snake_case> [--from <git-rev>]");
  const { DATABASE_URL } = parseEnv(envSchema({ DATABASE_URL: sharedEnv.DATABASE_URL }), process.env);
  const sql = await diffSchemas(committedSchema(rev), await readSchema(), DATABASE_URL);
  if (!sql.trim() || /^-- This is an empty migration\.?\s*$/.test(sql.trim())) {
    process.stdout.write(`schema.prisma has no changes since ${rev}.\n`);
    return;
  }
  const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
  const dir = path.join(prismaDir, "migrations", `${stamp}_${name}`);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "migration.sql"), sql);
  process.stdout.write(`Wrote ${path.relative(process.cwd(), dir)}/migration.sql\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
