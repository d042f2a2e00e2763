// One pg transaction on a connection of its own, for changes that must commit together with what records them
// (an audit entry with the change it describes).
import type pg from "pg";

/**
 * Runs `fn` inside BEGIN … COMMIT on one connection of `pool`; rolls back and rethrows when it throws. A connection
 * whose ROLLBACK fails is dropped, not returned to the pool.
 */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch((rollbackError: Error) => (broken = rollbackError));
    throw error;
  } finally {
    client.release(broken);
  }
}

/**
 * Runs `fn`'s reads in one snapshot (REPEATABLE READ, READ ONLY), for reads that must agree with each other — also on
 * a replica, where each statement would otherwise see whatever had been replayed when it started.
 */
export async function inReadSnapshot<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch((rollbackError: Error) => (broken = rollbackError));
    throw error;
  } finally {
    client.release(broken);
  }
}
