// The benchmark's own database and Redis prefix on the machine's Postgres and Redis, and a tenant to call
// the API as. Everything is created fresh for a run and removed afterwards.
import { createHash, randomBytes } from "node:crypto";
import pg from "pg";
import { createDatabase, migrate, newId, withDatabaseName, type Database } from "@conveyor/db";
import { deleteRedisPrefix } from "@conveyor/testkit";

export const SERVER_URL = process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@localhost:5432/postgres";
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://localhost:6379";
export const JWT_SECRET = "bench-secret-that-is-long-enough-for-hs256-0000";

export type BenchEnv = { databaseUrl: string; redisUrl: string; prefix: string; db: Database; apiKey: string; orgId: string; close(): Promise<void> };

async function admin(sql: string, serverUrl = SERVER_URL): Promise<void> {
  const client = new pg.Client({ connectionString: withDatabaseName(serverUrl, "postgres") });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh database (on `serverUrl`, default the machine's Postgres) with a tenant and an API key, and a Redis prefix. */
export async function prepare(serverUrl = SERVER_URL, databasePrefix = "conveyor_bench"): Promise<BenchEnv> {
  const name = `${databasePrefix}_${randomBytes(3).toString("hex")}`;
  const databaseUrl = withDatabaseName(serverUrl, name);
  await migrate(databaseUrl);
  const db = createDatabase({ url: databaseUrl, poolSize: 4 });
  const orgId = newId();
  const userId = newId();
  const apiKey = `cvk_${randomBytes(32).toString("base64url").replace(/[-_]/g, "A").slice(0, 43)}`;
  await db.prisma.organization.create({ data: { id: orgId, name: "Bench" } });
  await db.prisma.user.create({ data: { id: userId, email: `bench-${name}@example.test`, passwordHash: "unused" } });
  await db.prisma.membership.create({ data: { orgId, userId, role: "owner" } });
  await db.prisma.apiKey.create({
    data: {
      id: newId(),
      orgId,
      createdBy: userId,
      name: "bench",
      prefix: apiKey.slice(0, 8),
      keyHash: new Uint8Array(createHash("sha256").update(apiKey).digest()),
    },
  });
  const prefix = `conveyor-bench-${randomBytes(3).toString("hex")}`;
  return {
    databaseUrl,
    redisUrl: REDIS_URL,
    prefix,
    db,
    apiKey,
    orgId,
    async close() {
      await db.close();
      await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`, serverUrl);
      await clearPrefix(prefix);
    },
  };
}

/** Removes every Redis key under `prefix` (between scenarios and at the end): Conveyor's, under the hash tag
 *  `{prefix}`, and a BullMQ baseline's, under the bare prefix. */
export function clearPrefix(prefix: string): Promise<void> {
  return deleteRedisPrefix(prefix, REDIS_URL);
}

/** Empties the job tables between scenarios. */
export async function clearJobs(db: Database): Promise<void> {
  await db.pool.query("TRUNCATE jobs, job_queue, events, job_search, job_dependencies, dedupe_keys, queue_settings, rate_limits, type_state CASCADE");
}

/** Environment of Conveyor processes under benchmark: production settings, limits off. */
export function conveyorEnv(env: BenchEnv, extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: "production",
    LOG_LEVEL: "info",
    DATABASE_URL: env.databaseUrl,
    REDIS_URL: env.redisUrl,
    REDIS_PREFIX: env.prefix,
    JWT_SECRET,
    // Production requires one; any 32 bytes do for a benchmark.
    WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 7).toString("base64"),
    API_RATE_LIMIT_PER_SEC: "0",
    AUTH_RATE_LIMIT_PER_MIN: "0",
    ...extra,
  };
}
