// Backpressure (docs/reference/tenants.md#usage-quotas-and-backpressure): the deployment's due backlog — jobs due now and still waiting in Postgres for a worker
// (job_queue rows not handed over, due_at passed) — and which organizations hold it. Read by each API process at
// most about once a second (apps/api/src/services/infrastructure/admission/backpressure.ts), never per request.
import type pg from "pg";
import { WAITING_ANY_TYPE } from "../core/job-sql";
import { inTransaction } from "../core/transaction";

export type DueBacklog = {
  /** Due jobs in the deployment, counted up to `max` + 1 (past that, only that it is over matters). */
  due: number;
  /** When over `max`: each organization's due jobs, largest first; empty otherwise. */
  byOrg: { orgId: string; due: number }[];
  /** Of the ids `atSnapshot` named (jobs the caller is writing), those already in the read's snapshot. */
  seen: Set<string>;
};

/**
 * The due backlog, counted up to `max` + 1 (a bounded scan of the due index); only when it is over, the
 * organizations' shares (one grouped scan). `timeoutMs` bounds each statement: a busy database must not hang it.
 */
export async function readDueBacklog(
  pool: pg.Pool,
  max: number,
  timeoutMs = 1_000,
  /**
   * Called once a connection is held, right before the statement whose snapshot the read is: what a caller wrote
   * before then is in it. It answers the ids of jobs whose writes are under way then: the read says which of them
   * committed before its snapshot (`seen`), so a caller counting them until a read holds them counts them once.
   */
  atSnapshot: () => readonly string[] = () => [],
): Promise<DueBacklog> {
  return inTransaction(
    pool,
    async (client) => {
      await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
      const writing = atSnapshot();
      const { rows } = await client.query<{ due: number }>(
        `SELECT count(*)::int AS due FROM (SELECT 1 FROM job_queue q WHERE ${WAITING_ANY_TYPE("q")} AND q.due_at <= now() LIMIT $1::bigint + 1) d`,
        [max],
      );
      const due = rows[0]!.due;
      let byOrg: DueBacklog["byOrg"] = [];
      if (due > max) {
        const shares = await client.query<{ orgId: string; due: number }>(
          `SELECT q.org_id AS "orgId", count(*)::int AS due FROM job_queue q WHERE ${WAITING_ANY_TYPE("q")} AND q.due_at <= now()
          GROUP BY org_id ORDER BY 2 DESC, 1`,
        );
        byOrg = shares.rows;
      }
      const seen = new Set<string>();
      if (writing.length) {
        const found = await client.query<{ id: string }>(`SELECT id FROM jobs WHERE id = ANY($1::uuid[])`, [writing]);
        for (const { id } of found.rows) seen.add(id);
      }
      return { due, byOrg, seen };
    },
    // One snapshot for every statement, taken by the first: the shares are of the count they explain, and `seen` is
    // what that count holds of the caller's writes.
    { mode: "ISOLATION LEVEL REPEATABLE READ READ ONLY" },
  );
}
