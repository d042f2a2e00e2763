// One pg pool per process, shared by the Prisma client (through @prisma/adapter-pg) and by the few hot
// paths that speak SQL directly (batched job inserts and worker bookkeeping).
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { StartupError, maskUrl } from "@conveyor/config";
import { PrismaClient } from "./generated/prisma/client";
import { databaseUnreachableMessage } from "./errors";

export { PrismaClient };
export type { Prisma } from "./generated/prisma/client";

export type DatabaseOptions = {
  url: string;
  /** Connections in the pool. Default 10. */
  poolSize?: number;
  /** Shown in pg_stat_activity, e.g. "conveyor-api". */
  applicationName?: string;
};

export type Database = {
  prisma: PrismaClient;
  pool: pg.Pool;
  close(): Promise<void>;
};

/** A Prisma client or an interactive transaction: what data-access functions accept as `db`. */
export type Db = PrismaClient | Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

export function createDatabase(options: DatabaseOptions): Database {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    application_name: options.applicationName ?? "conveyor",
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection (Postgres restart) must not crash the process; the pool replaces it.
  pool.on("error", () => {});
  // Nor a client that is checked out (a transaction between two statements, a LISTEN connection, the dispatcher's
  // connection): the pool removes its listener while the client is lent, and a connection ending then would be an
  // unhandled 'error' event. The statement in progress still fails with the error, and the pool drops the dead
  // client when it is released.
  pool.on("connect", (client) => client.on("error", () => {}));
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  let closed: Promise<void> | undefined;
  return {
    prisma,
    pool,
    close: () => (closed ??= prisma.$disconnect().then(() => pool.end())),
  };
}

/** Round trip to Postgres; rejects when it is unreachable. */
export async function pingDatabase(pool: pg.Pool): Promise<void> {
  await pool.query("SELECT 1");
}

/**
 * Creates the pool and proves the database is reachable and migrated; throws StartupError with one line
 * (the URL tried, and what to do) otherwise.
 */
export async function connectDatabase(options: DatabaseOptions): Promise<Database> {
  const database = createDatabase(options);
  try {
    const { rows } = await database.pool.query<{ jobs: string | null }>("SELECT to_regclass('public.jobs')::text AS jobs");
    if (!rows[0]?.jobs) {
      throw new StartupError(`The database at ${maskUrl(options.url)} has no Conveyor tables. Run \`npm run db:migrate\` first.`);
    }
    return database;
  } catch (error) {
    await database.close().catch(() => {});
    if (error instanceof StartupError) throw error;
    throw new StartupError(databaseUnreachableMessage(error, options.url) ?? `Cannot use Postgres at ${maskUrl(options.url)}: ${(error as Error).message}`);
  }
}
