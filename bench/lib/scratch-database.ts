// For the peer queues' baselines (bench/baselines/graphile-worker.ts, pg-boss.ts): a database of their own on the
// bench's Postgres server, created for one run and dropped afterwards, and the measurements both take in it.
// Only `pg`, so a baseline process loads nothing of Conveyor's.
import { randomBytes } from "node:crypto";
import pg from "pg";

async function admin(serverUrl: string, sql: string): Promise<void> {
  const url = new URL(serverUrl);
  url.pathname = "/postgres";
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Runs `fn` with the URL of a new database named `conveyor_bench_<label>_<hex>` on `serverUrl`, then drops it. */
export async function withScratchDatabase<T>(serverUrl: string, label: string, fn: (databaseUrl: string) => Promise<T>): Promise<T> {
  const name = `conveyor_bench_${label}_${randomBytes(3).toString("hex")}`;
  await admin(serverUrl, `CREATE DATABASE "${name}"`);
  try {
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return await fn(url.toString());
  } finally {
    await admin(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  }
}

/** Postgres' clock now: the start of a run is taken where its end is read, as the Conveyor row does. */
export async function databaseNow(pool: pg.Pool): Promise<Date> {
  const { rows } = await pool.query<{ at: Date }>("SELECT clock_timestamp() AS at");
  return rows[0]!.at;
}

/** Polls `sql` (one row, one column `n`) every `everyMs` until it returns `target`; gives up after `timeoutMs`. */
export async function pollUntil(pool: pg.Pool, sql: string, params: unknown[], target: number, everyMs: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ n: string }>(sql, params);
    const n = Number(rows[0]!.n);
    if (n === target) return;
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${n} of ${target} after ${timeoutMs} ms (${sql})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** `promise`, or an error after `timeoutMs` — so a stuck run still drops its database (and the bench goes on). */
export async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not happen within ${timeoutMs} ms`)), timeoutMs))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
