// Transitions "handed over" and "returned to line": the dispatcher's marks on a job's queue row. A handed-over job
// stays `pending` (no event): it waits in BullMQ until a worker starts it. Which jobs are handed over is the
// dispatcher's decision (../dispatch.ts); these only write it down.
import type pg from "pg";
import { DISPATCH_CHANNEL } from "../job-sql";

/**
 * A connection for the dispatcher's marks, with synchronous_commit off: a mark lost in a crash is a job handed over
 * again, which is harmless. The caller releases it (destroying it if Postgres reported an error on it).
 */
export async function handOverConnection(pool: pg.Pool): Promise<pg.PoolClient> {
  const client = await pool.connect();
  try {
    await client.query("SET synchronous_commit = off");
  } catch (error) {
    client.release(true);
    throw error;
  }
  return client;
}

export type HandedOver = { jobId: string; orgId: string; dueAt: Date };

/**
 * Marks as handed over up to `shares[i]` due jobs of `orgs[i]` (oldest first) of one type and priority, skipping
 * rows another dispatcher holds (two leaders overlapping never take the same job). `db` should be a
 * `handOverConnection`: a job handed over twice is harmless (BullMQ ignores a job id it holds; the start skips a job
 * that is no longer pending).
 */
export async function handOver(
  db: pg.Pool | pg.PoolClient,
  choice: { type: string; priority: number; orgs: readonly string[]; shares: readonly number[] },
): Promise<HandedOver[]> {
  const { rows } = await db.query<{ job_id: string; org_id: string; due_at: Date }>(
    `UPDATE job_queue q SET dispatched_at = now()
       FROM (SELECT w.job_id
               FROM unnest($3::uuid[], $4::int[]) AS o(org_id, share)
              CROSS JOIN LATERAL (
                SELECT job_id FROM job_queue
                 WHERE type = $1 AND priority = $2 AND org_id = o.org_id AND dispatched_at IS NULL AND due_at <= now()
                 ORDER BY due_at, job_id
                 LIMIT o.share
                   FOR UPDATE SKIP LOCKED
              ) AS w) AS chosen
      WHERE q.job_id = chosen.job_id
     RETURNING q.job_id, q.org_id, q.due_at`,
    [choice.type, choice.priority, choice.orgs, choice.shares],
  );
  return rows.map((r) => ({ jobId: r.job_id, orgId: r.org_id, dueAt: r.due_at }));
}

/**
 * Puts handed-over jobs back in line (BullMQ refused them, or Redis lost them) and wakes the dispatcher, which hands
 * them over again in turn. Answers how many were handed over and are now back.
 */
export async function returnToLine(db: pg.Pool | pg.PoolClient, jobIds: readonly string[]): Promise<number> {
  if (jobIds.length === 0) return 0;
  const result = await db.query<{ n: string }>(
    `WITH reset AS (UPDATE job_queue SET dispatched_at = NULL WHERE job_id = ANY($1::uuid[]) AND dispatched_at IS NOT NULL RETURNING 1)
     SELECT pg_notify('${DISPATCH_CHANNEL}', ''), (SELECT count(*) FROM reset) AS n`,
    [jobIds],
  );
  return Number(result.rows[0]!.n);
}
