// Workers of the worker protocol (docs/reference/lifecycle.md#your-own-workers): an organization's own processes, in any language, seen by their lease
// calls. Each lease call refreshes its worker's row (throttled by the API); GET /workers shows them to their own
// organization only, beside the deployment's workers. Their running jobs are their live leases.
import type pg from "pg";
import { iso } from "../core/job-sql";
import { GONE_BEATS, type WorkerView } from "./workers";

export type ProtocolWorkerSeen = {
  id: string;
  orgId: string;
  apiKeyId: string;
  name: string;
  version: string;
  types: readonly string[];
  concurrency: number;
  heartbeatMs: number;
};

/** Records that a protocol worker called now (registering it on its first call, or after it was reaped). */
export async function touchProtocolWorker(db: pg.Pool, worker: ProtocolWorkerSeen): Promise<void> {
  await db.query(
    `INSERT INTO protocol_workers (id, org_id, api_key_id, name, version, types, concurrency, heartbeat_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), types = EXCLUDED.types, concurrency = EXCLUDED.concurrency,
            name = EXCLUDED.name, version = EXCLUDED.version, heartbeat_ms = EXCLUDED.heartbeat_ms
      WHERE protocol_workers.org_id = EXCLUDED.org_id`,
    [worker.id, worker.orgId, worker.apiKeyId, worker.name, worker.version, worker.types, worker.concurrency, worker.heartbeatMs],
  );
}

/** A protocol worker stopped cleanly (POST /worker/stop): its row goes at once, so it is no longer counted as serving its types. */
export async function forgetProtocolWorker(db: pg.Pool, orgId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM protocol_workers WHERE id = $1 AND org_id = $2", [id, orgId]);
  return (rowCount ?? 0) > 0;
}

/** Deletes protocol workers silent for longer than `olderThanMs` (and GONE_BEATS of their interval). */
export async function reapProtocolWorkers(db: pg.Pool, olderThanMs: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM protocol_workers WHERE heartbeat_at < now() - make_interval(secs => $1::double precision / 1000)
        AND heartbeat_at < now() - make_interval(secs => heartbeat_ms * ${GONE_BEATS}::double precision / 1000)`,
    [olderThanMs],
  );
  return rowCount ?? 0;
}

/** The organization's protocol workers, as GET /workers shows workers: live ones first, each with the jobs it holds. */
export async function listProtocolWorkers(db: pg.Pool | pg.PoolClient, orgId: string): Promise<(WorkerView & { kind: "protocol"; name: string })[]> {
  const { rows } = await db.query<WorkerView & { kind: "protocol"; name: string }>(
    `SELECT w.id, w.name AS host, 0 AS pid, w.version, '-' AS node_version, coalesce(w.types, '{}') AS types, w.concurrency,
            w.concurrency AS slots, coalesce(mine.count, 0) AS busy_slots, 0 AS other_busy_slots,
            CASE WHEN w.heartbeat_at < now() - make_interval(secs => w.heartbeat_ms * ${GONE_BEATS}::double precision / 1000)
                 THEN 'gone' ELSE 'running' END AS state,
            ${iso("w.started_at")} AS started_at, ${iso("w.heartbeat_at")} AS heartbeat_at, w.heartbeat_ms,
            coalesce(mine.jobs, '[]'::json) AS jobs, 'protocol' AS kind, w.name
       FROM protocol_workers w
       LEFT JOIN LATERAL (
         SELECT count(*)::int AS count,
                json_agg(json_build_object('id', j.id, 'type', j.type, 'started_at', ${iso("j.started_at")}) ORDER BY j.started_at, j.id) AS jobs
           FROM worker_leases l JOIN jobs j ON j.id = l.job_id AND j.fence = l.token AND j.status = 'processing'
          WHERE l.worker_id = w.id AND l.org_id = $1 AND l.expires_at > now()
       ) mine ON true
      WHERE w.org_id = $1
      ORDER BY (w.heartbeat_at < now() - make_interval(secs => w.heartbeat_ms * ${GONE_BEATS}::double precision / 1000)), w.name, w.id`,
    [orgId],
  );
  return rows;
}
