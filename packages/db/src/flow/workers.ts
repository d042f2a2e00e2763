// The worker registry (issue 38): which worker processes run, what they serve and what they are running now, for the
// console's Workers view. A worker writes only its own row — registered at start, one small UPDATE per heartbeat,
// deleted on a graceful stop; the leader deletes the rows of workers gone long ago. Every statement stands alone (no
// session state), so it works through a transaction pooler. The clock is the database's: a worker is gone when its
// heartbeat is older than GONE_BEATS of its own intervals by now().
import type pg from "pg";
import { iso, TENANT_JOB } from "../core/job-sql";

/** Heartbeats a worker may miss before it is shown as gone. */
export const GONE_BEATS = 3;

export type WorkerRegistration = {
  id: string;
  host: string;
  pid: number;
  version: string;
  nodeVersion: string;
  types: readonly string[];
  concurrency: number;
  heartbeatMs: number;
};

/** Inserts (or, registering again after its row was reaped, replaces) a worker's row. */
export async function registerWorker(
  db: pg.Pool,
  worker: WorkerRegistration,
  busy: { count: number; jobIds: readonly string[] } = { count: 0, jobIds: [] },
): Promise<void> {
  await db.query(
    `INSERT INTO workers (id, host, pid, version, node_version, types, concurrency, heartbeat_ms, busy, job_ids)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (id) DO UPDATE SET busy = EXCLUDED.busy, job_ids = EXCLUDED.job_ids, heartbeat_at = now()`,
    [worker.id, worker.host, worker.pid, worker.version, worker.nodeVersion, worker.types, worker.concurrency, worker.heartbeatMs, busy.count, busy.jobIds],
  );
}

/** One heartbeat: the worker's busy slots and running jobs now. False when its row is gone (reaped while it was silent). */
export async function heartbeatWorker(db: pg.Pool, id: string, busy: { count: number; jobIds: readonly string[] }): Promise<boolean> {
  const { rowCount } = await db.query("UPDATE workers SET heartbeat_at = now(), busy = $2, job_ids = $3 WHERE id = $1", [id, busy.count, busy.jobIds]);
  return rowCount === 1;
}

/** A graceful stop: the worker leaves the registry. */
export async function unregisterWorker(db: pg.Pool, id: string): Promise<void> {
  await db.query("DELETE FROM workers WHERE id = $1", [id]);
}

/** The leader's reaper: deletes the rows of workers silent for longer than `olderThanMs`; answers how many went. */
export async function reapGoneWorkers(db: pg.Pool, olderThanMs: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM workers WHERE heartbeat_at < now() - make_interval(secs => $1::double precision / 1000)
        AND heartbeat_at < now() - make_interval(secs => heartbeat_ms * ${GONE_BEATS}::double precision / 1000)`,
    [olderThanMs],
  );
  return rowCount ?? 0;
}

export type WorkerJob = { id: string; type: string; started_at: string | null };

export type WorkerView = {
  id: string;
  host: string;
  pid: number;
  version: string;
  node_version: string;
  types: string[];
  concurrency: number;
  slots: number;
  busy_slots: number;
  /** Busy slots running jobs of other organizations (a count, never their jobs). */
  other_busy_slots: number;
  state: "running" | "gone";
  started_at: string;
  heartbeat_at: string;
  heartbeat_ms: number;
  /** The reader's organization's jobs among those running at the last heartbeat. */
  jobs: WorkerJob[];
};

/**
 * Every registered worker, live ones first (then by host and pid), as `orgId` may see them: of the jobs each runs,
 * only the organization's own (customer types; Conveyor's internal `_…` jobs count as other work), the rest a count.
 */
export async function listWorkers(db: pg.Pool | pg.PoolClient, orgId: string): Promise<WorkerView[]> {
  const { rows } = await db.query<WorkerView>(
    `SELECT w.id, w.host, w.pid, w.version, w.node_version, coalesce(w.types, '{}') AS types, w.concurrency,
            w.concurrency * coalesce(cardinality(w.types), 0) AS slots, w.busy AS busy_slots,
            greatest(w.busy - coalesce(mine.count, 0), 0)::int AS other_busy_slots,
            CASE WHEN w.heartbeat_at < now() - make_interval(secs => w.heartbeat_ms * ${GONE_BEATS}::double precision / 1000)
                 THEN 'gone' ELSE 'running' END AS state,
            ${iso("w.started_at")} AS started_at, ${iso("w.heartbeat_at")} AS heartbeat_at, w.heartbeat_ms,
            coalesce(mine.jobs, '[]'::json) AS jobs
       FROM workers w
       LEFT JOIN LATERAL (
         SELECT count(*)::int AS count,
                json_agg(json_build_object('id', j.id, 'type', j.type, 'started_at', ${iso("j.started_at")}) ORDER BY j.started_at, j.id)
                  FILTER (WHERE j.status = 'processing') AS jobs
           FROM jobs j
          WHERE j.id = ANY(w.job_ids) AND j.org_id = $1 AND ${TENANT_JOB("j")}
       ) mine ON true
      ORDER BY (w.heartbeat_at < now() - make_interval(secs => w.heartbeat_ms * ${GONE_BEATS}::double precision / 1000)), w.host, w.pid, w.id`,
    [orgId],
  );
  return rows;
}
