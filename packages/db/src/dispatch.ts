// Which due job runs next, decided in one place (SPEC §9): the dispatcher reads the waiting rows of `job_queue`
// and hands a type's jobs to BullMQ in this order —
//   1. due only: `due_at <= now()` (run_at, a retry's time, or the creation time);
//   2. higher priority first;
//   3. within a priority, round-robin between the organizations that have due jobs, each org's oldest first, so a
//      backlog of one org delays another's job by about one job's run time, not by the backlog;
//   4. within each org's cap of jobs in flight per type (ORG_CONCURRENCY_LIMIT, 0 = none).
// A hand-over is one transaction: the chosen rows are locked (SKIP LOCKED, so two dispatchers never take the same
// row), given to BullMQ, and marked dispatched; if BullMQ refuses, nothing is marked and the rows wait for the next
// round. A dispatcher that dies after BullMQ took the jobs but before the commit leaves them waiting: the next one
// hands them over again, which BullMQ ignores for a job it still holds (the job id is the Postgres id), and a job
// that already ran is no longer pending, so nothing runs twice.
import type pg from "pg";

export type DispatchCandidate = { jobId: string; orgId: string; type: string; attemptsLeft: number };

/** Types that have due jobs waiting, in name order. */
export async function typesWithDueJobs(pool: pg.Pool): Promise<string[]> {
  // A loose index scan over job_queue_waiting_idx: one index probe per type, however long the backlog.
  const { rows } = await pool.query<{ type: string }>(
    `WITH RECURSIVE types(type) AS (
       (SELECT type FROM job_queue WHERE dispatched_at IS NULL ORDER BY type LIMIT 1)
       UNION ALL
       SELECT (SELECT q.type FROM job_queue q WHERE q.dispatched_at IS NULL AND q.type > t.type ORDER BY q.type LIMIT 1)
         FROM types t WHERE t.type IS NOT NULL
     )
     SELECT type FROM types t
      WHERE type IS NOT NULL
        AND EXISTS (SELECT 1 FROM job_queue q WHERE q.type = t.type AND q.dispatched_at IS NULL AND q.due_at <= now())`,
  );
  return rows.map((r) => r.type);
}

/** Jobs of `type` handed over and not finished (waiting in BullMQ or running), in all and by organization. */
export async function jobsInFlight(pool: pg.Pool, type: string): Promise<{ total: number; byOrg: Map<string, number> }> {
  const { rows } = await pool.query<{ org_id: string; n: string }>(
    "SELECT org_id, count(*) AS n FROM job_queue WHERE type = $1 AND dispatched_at IS NOT NULL GROUP BY org_id",
    [type],
  );
  const byOrg = new Map(rows.map((r) => [r.org_id, Number(r.n)]));
  return { total: [...byOrg.values()].reduce((a, b) => a + b, 0), byOrg };
}

/** The earliest time a waiting job of any type falls due, if one is waiting for a later time. */
export async function nextDueAt(pool: pg.Pool): Promise<Date | null> {
  const { rows } = await pool.query<{ due_at: Date | null }>("SELECT min(due_at) AS due_at FROM job_queue WHERE dispatched_at IS NULL AND due_at > now()");
  return rows[0]?.due_at ?? null;
}

export type DispatchPlan = {
  type: string;
  /** How many jobs to hand over at most. */
  room: number;
  /** Jobs in flight per org, for the cap. */
  inFlightByOrg: Map<string, number>;
  /** ORG_CONCURRENCY_LIMIT: most jobs of one org in flight for this type (0 = no cap). */
  orgCap: number;
  /** Round-robin position: organizations after this id are served first. */
  after: string | null;
};

/**
 * Runs `handOver` on the jobs to dispatch now, inside a transaction that marks them dispatched if it resolves. The
 * chosen jobs are the plan's room of due jobs, highest priority first, interleaved across organizations. Resolves
 * with the jobs handed over (empty when none was due or BullMQ refused).
 */
export async function dispatchDueJobs(pool: pg.Pool, plan: DispatchPlan, handOver: (jobs: DispatchCandidate[]) => Promise<void>): Promise<DispatchCandidate[]> {
  if (plan.room <= 0) return [];
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const chosen = await choose(client, plan);
    if (chosen.length === 0) {
      await client.query("COMMIT");
      return [];
    }
    await handOver(chosen);
    await client.query("UPDATE job_queue SET dispatched_at = now() WHERE job_id = ANY($1::uuid[])", [chosen.map((c) => c.jobId)]);
    await client.query("COMMIT");
    return chosen;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

async function choose(client: pg.PoolClient, plan: DispatchPlan): Promise<DispatchCandidate[]> {
  const chosen: DispatchCandidate[] = [];
  const taken = new Map(plan.inFlightByOrg);
  const { rows: levels } = await client.query<{ priority: number }>(
    `WITH RECURSIVE levels(priority) AS (
       (SELECT priority FROM job_queue WHERE type = $1 AND dispatched_at IS NULL ORDER BY priority DESC LIMIT 1)
       UNION ALL
       SELECT (SELECT q.priority FROM job_queue q WHERE q.type = $1 AND q.dispatched_at IS NULL AND q.priority < l.priority ORDER BY q.priority DESC LIMIT 1)
         FROM levels l WHERE l.priority IS NOT NULL
     )
     SELECT priority FROM levels WHERE priority IS NOT NULL`,
    [plan.type],
  );
  for (const { priority } of levels) {
    const room = plan.room - chosen.length;
    if (room <= 0) break;
    const orgs = (await orgsWithDueJobs(client, plan.type, priority, plan.after, room)).filter(
      (org) => plan.orgCap === 0 || (taken.get(org) ?? 0) < plan.orgCap,
    );
    if (orgs.length === 0) continue;
    const share = Math.ceil(room / orgs.length);
    const limits = orgs.map((org) => (plan.orgCap === 0 ? share : Math.min(share, plan.orgCap - (taken.get(org) ?? 0))));
    const { rows } = await client.query<{ job_id: string; org_id: string; attempts_left: number; rank: string; org_rank: string }>(
      `SELECT q.job_id, q.org_id, 1 + j.max_retries - j.retries AS attempts_left, q.rank, o.org_rank
         FROM unnest($3::uuid[], $4::int[]) WITH ORDINALITY AS o(org_id, share, org_rank)
        CROSS JOIN LATERAL (
          SELECT w.job_id, w.org_id, row_number() OVER (ORDER BY w.due_at, w.job_id) AS rank
            FROM (SELECT job_id, org_id, due_at FROM job_queue
                   WHERE type = $1 AND priority = $2 AND org_id = o.org_id AND dispatched_at IS NULL AND due_at <= now()
                   ORDER BY due_at, job_id
                   LIMIT o.share
                     FOR UPDATE SKIP LOCKED) AS w
        ) AS q
        JOIN jobs j ON j.id = q.job_id`,
      [plan.type, priority, orgs, limits],
    );
    // Round-robin: every org's first job, then every org's second, and so on, in the rotation's org order.
    rows.sort((a, b) => Number(a.rank) - Number(b.rank) || Number(a.org_rank) - Number(b.org_rank));
    for (const row of rows.slice(0, room)) {
      chosen.push({ jobId: row.job_id, orgId: row.org_id, type: plan.type, attemptsLeft: row.attempts_left });
      taken.set(row.org_id, (taken.get(row.org_id) ?? 0) + 1);
    }
  }
  return chosen;
}

/**
 * Up to `limit` organizations with due jobs of this type and priority, starting after `after` and wrapping around
 * (a loose index scan: one probe per organization).
 */
async function orgsWithDueJobs(client: pg.PoolClient, type: string, priority: number, after: string | null, limit: number): Promise<string[]> {
  const scan = async (from: string | null, max: number): Promise<string[]> => {
    const { rows } = await client.query<{ org_id: string }>(
      `WITH RECURSIVE orgs(org_id, n) AS (
         (SELECT org_id, 1 FROM job_queue
           WHERE type = $1 AND priority = $2 AND dispatched_at IS NULL AND due_at <= now() AND ($3::uuid IS NULL OR org_id > $3::uuid)
           ORDER BY org_id LIMIT 1)
         UNION ALL
         SELECT (SELECT q.org_id FROM job_queue q
                  WHERE q.type = $1 AND q.priority = $2 AND q.dispatched_at IS NULL AND q.due_at <= now() AND q.org_id > o.org_id
                  ORDER BY q.org_id LIMIT 1), o.n + 1
           FROM orgs o WHERE o.org_id IS NOT NULL AND o.n < $4
       )
       SELECT org_id FROM orgs WHERE org_id IS NOT NULL`,
      [type, priority, from, max],
    );
    return rows.map((r) => r.org_id);
  };
  const first = await scan(after, limit);
  if (first.length >= limit || after === null) return first;
  const wrapped = (await scan(null, limit - first.length)).filter((org) => org <= after);
  return [...first, ...wrapped];
}

/** Puts a dispatched job back in line (Redis lost it): the dispatcher hands it over again. */
export async function undispatch(pool: pg.Pool, jobIds: readonly string[]): Promise<number> {
  if (jobIds.length === 0) return 0;
  const result = await pool.query(
    `WITH reset AS (UPDATE job_queue SET dispatched_at = NULL WHERE job_id = ANY($1::uuid[]) AND dispatched_at IS NOT NULL RETURNING 1)
     SELECT pg_notify('conveyor_dispatch', ''), (SELECT count(*) FROM reset) AS n`,
    [jobIds],
  );
  return Number((result.rows[0] as { n: string }).n);
}
