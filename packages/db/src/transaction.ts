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
