// What an organization of a shared deployment may see of the deployment's own workers (docs/reference/time.md#alerts): capacity per job
// type it uses — how many live processes serve the type and their slots, and its own jobs running on them — never a
// host name, pid or version. The registry itself is workers.ts; this file only reads it.
import type pg from "pg";
import { iso, TENANT_JOB } from "../core/job-sql";
import { GONE_BEATS } from "./workers";

/** How far back an organization's creations count as "a type it uses". */
export const USED_TYPE_DAYS = 30;

export type WorkerCapacityView = {
  kind: "capacity";
  type: string;
  /** Live worker processes serving the type. */
  workers: number;
  /** Their slots for it: the sum of their concurrency (each runs that many jobs of each type it serves at once). */
  slots: number;
  /** The organization's jobs of the type running on them at their last heartbeat, oldest start first. */
  jobs: { id: string; type: string; started_at: string | null }[];
};

/**
 * One row per job type `orgId` created jobs of in the last USED_TYPE_DAYS days (by its usage counts) or has a
 * schedule for: the live deployment workers serving it, their slots, and the organization's jobs of it they run.
 * A type no worker serves has a row with 0 workers. Sorted by type. The organization's own job types are not here: only
 * its own protocol workers serve them, and those it sees in full (protocol-workers.ts).
 */
export async function listWorkerCapacity(db: pg.Pool | pg.PoolClient, orgId: string): Promise<WorkerCapacityView[]> {
  const { rows } = await db.query<WorkerCapacityView>(
    `WITH used AS (
       SELECT DISTINCT type FROM usage_counts WHERE org_id = $1 AND day >= current_date - ${USED_TYPE_DAYS}
       UNION
       SELECT DISTINCT job->>'type' FROM schedules WHERE org_id = $1 AND job->>'type' IS NOT NULL
     ), live AS (
       SELECT * FROM workers w
        WHERE w.heartbeat_at >= now() - make_interval(secs => w.heartbeat_ms * ${GONE_BEATS}::double precision / 1000)
     )
     SELECT 'capacity' AS kind, u.type,
            (SELECT count(*)::int FROM live w WHERE u.type = ANY(w.types)) AS workers,
            (SELECT coalesce(sum(w.concurrency), 0)::int FROM live w WHERE u.type = ANY(w.types)) AS slots,
            coalesce((
              SELECT json_agg(json_build_object('id', j.id, 'type', j.type, 'started_at', ${iso("j.started_at")}) ORDER BY j.started_at, j.id)
                FROM jobs j
               WHERE j.id IN (SELECT unnest(w.job_ids) FROM live w WHERE u.type = ANY(w.types))
                 AND j.org_id = $1 AND j.type = u.type AND j.status = 'processing' AND ${TENANT_JOB("j")}
            ), '[]'::json) AS jobs
       FROM used u
      WHERE u.type IS NOT NULL AND NOT EXISTS (SELECT 1 FROM org_job_types o WHERE o.org_id = $1 AND o.name = u.type)
      ORDER BY u.type`,
    [orgId],
  );
  return rows;
}
