// The benchmark's own database and Redis prefix on the machine's Postgres and Redis, and a tenant to call
// the API as. Everything is created fresh for a run and removed afterwards.
import { createHash, randomBytes } from "node:crypto";
import bcrypt from "bcrypt";
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

/**
 * A fresh database (on `serverUrl`, default the machine's Postgres) with a tenant and an API key, and a Redis prefix.
 * `namePrefix` names the database (`<prefix>_<6 hex digits>`), default `conveyor_bench`.
 */
export async function prepare(serverUrl = SERVER_URL, namePrefix = "conveyor_bench"): Promise<BenchEnv> {
  const name = `${namePrefix}_${randomBytes(3).toString("hex")}`;
  const databaseUrl = withDatabaseName(serverUrl, name);
  await migrate(databaseUrl);
  const db = createDatabase({ url: databaseUrl, poolSize: 4 });
  const orgId = newId();
  const userId = newId();
  const apiKey = `cvk_${randomBytes(32).toString("base64url").replace(/[-_]/g, "A").slice(0, 43)}`;
  await insertOrgWithKey(db, { orgId, orgName: "Bench", userId, email: `bench-${name}@example.test`, apiKey });
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

/** An organization with its owner and an API key of the owner's, written straight to Postgres. */
export async function insertOrgWithKey(db: Database, o: { orgId: string; orgName: string; userId: string; email: string; apiKey: string }): Promise<void> {
  await db.pool.query("INSERT INTO organizations (id, name) VALUES ($1, $2)", [o.orgId, o.orgName]);
  await db.pool.query("INSERT INTO users (id, email, password_hash) VALUES ($1, $2, 'unused')", [o.userId, o.email]);
  await db.pool.query("INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'owner')", [o.orgId, o.userId]);
  await db.pool.query("INSERT INTO api_keys (id, org_id, created_by, name, prefix, key_hash) VALUES ($1, $2, $3, 'bench', $4, $5)", [
    newId(),
    o.orgId,
    o.userId,
    o.apiKey.slice(0, 8),
    createHash("sha256").update(o.apiKey).digest(),
  ]);
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

/**
 * A bearer token for a user of the bench organization, got as a person gets one: the user's password is set here,
 * then POST /auth/login on the running API at `origin` (the bench talks to the API over HTTP only).
 */
export async function loginToken(env: BenchEnv, origin: string, userId: string): Promise<string> {
  const password = randomBytes(12).toString("base64url");
  const { rows } = await env.db.pool.query<{ email: string }>("UPDATE users SET password_hash = $2 WHERE id = $1 RETURNING email", [
    userId,
    await bcrypt.hash(password, 4),
  ]);
  const res = await fetch(`${origin}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: rows[0]?.email, password, org_id: env.orgId }),
  });
  const body = (await res.json()) as { token?: string };
  if (res.status !== 200 || !body.token) throw new Error(`POST /auth/login answered ${res.status}`);
  return body.token;
}
