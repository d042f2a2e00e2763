// The one way to run a transaction (CONTRIBUTING "Reach Postgres one way"): raw pg on a connection of its own, for
// changes that must commit together with what records them (an audit entry with the change it describes). Every
// BEGIN … COMMIT in the service goes through `inTransaction`; the error codes worth running one again are listed once
// here, for it and for the worker's writes that retry without a transaction of their own.
import type pg from "pg";
import { isDatabaseUnavailable } from "./errors";

/** Anything that runs a statement: the pool, or a connection (inside a transaction or not). */
export type Queryable = pg.Pool | pg.PoolClient | pg.ClientBase;

/** SQLSTATEs after which the whole transaction may simply be run again: deadlock_detected, serialization_failure. */
export const RETRYABLE_SQLSTATES: ReadonlySet<string> = new Set(["40P01", "40001"]);

/** Whether running the same transaction again may succeed: a deadlock, a serialization failure or Postgres being away. */
export function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (typeof code === "string" && RETRYABLE_SQLSTATES.has(code)) || isDatabaseUnavailable(error);
}

/** How long to wait before the `attempt`-th retry: 100 ms doubling, at most 2 s. */
export function retryDelayMs(attempt: number): number {
  return Math.min(2_000, 50 * 2 ** Math.min(attempt, 6));
}

export type TransactionOptions = {
  /** What follows BEGIN (e.g. "READ ONLY", "ISOLATION LEVEL REPEATABLE READ READ ONLY"); nothing by default. */
  mode?: string;
  /**
   * Run `fn` again in a new transaction, for as long as it takes, when it fails with a retryable error (`isRetryable`)
   * — also when no connection can be had. Only for a `fn` that may run more than once; off by default.
   */
  retry?: boolean;
  /**
   * Ends the transaction instead of a plain COMMIT, and must commit it: e.g. a last check sent in one message with the
   * COMMIT, so a lock it takes is held for one round trip. Throwing rolls back. Default: COMMIT.
   */
  commit?: (client: pg.PoolClient) => Promise<void>;
};

/**
 * Runs `fn` inside BEGIN … COMMIT on one connection of `pool`; rolls back and rethrows when it throws. A connection
 * whose ROLLBACK fails is dropped, not returned to the pool. With `retry`, a retryable failure runs it again.
 */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      if (!options.retry || !isDatabaseUnavailable(error)) throw error;
      await sleep(retryDelayMs(attempt));
      continue;
    }
    let broken: Error | undefined;
    try {
      await client.query(options.mode ? `BEGIN ${options.mode}` : "BEGIN");
      const result = await fn(client);
      await (options.commit ? options.commit(client) : client.query("COMMIT"));
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch((rollbackError: Error) => (broken = rollbackError));
      if (!options.retry || !isRetryable(error)) throw error;
    } finally {
      client.release(broken);
    }
    await sleep(retryDelayMs(attempt));
  }
}

/**
 * Runs `fn`'s reads in one snapshot (REPEATABLE READ, READ ONLY), for reads that must agree with each other — also on
 * a replica, where each statement would otherwise see whatever had been replayed when it started.
 */
export function inReadSnapshot<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(pool, fn, { mode: "ISOLATION LEVEL REPEATABLE READ READ ONLY" });
}

/**
 * Thrown inside `inTransaction` to end the transaction with ROLLBACK and answer `value` (a refusal decided after a
 * read under lock, when nothing written so far may stay). `rollingBack` unwraps it.
 */
export class Rollback<T> {
  constructor(readonly value: T) {}
}

/** `inTransaction`, where `fn` may throw `new Rollback(value)` to roll back and answer `value`. */
export async function rollingBack<T>(run: Promise<T>): Promise<T> {
  try {
    return await run;
  } catch (error) {
    if (error instanceof Rollback) return error.value as T;
    throw error;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
