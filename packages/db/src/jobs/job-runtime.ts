// The worker's other reads and writes: artifacts (under the attempt's fence), plugin types, and what the reconciler
// reads. Starting and ending attempts are transitions of the job machine (job-machine/start.ts, finish.ts).
import type pg from "pg";

/** Stores (or replaces) a job's artifact, only while the attempt holding `fence` owns the job. */
export async function saveJobArtifact(
  pool: pg.Pool,
  artifact: { jobId: string; fence: string; contentType: string; filename: string; data: Buffer },
): Promise<boolean> {
  const result = await pool.query(
    `INSERT INTO job_artifacts (job_id, content_type, filename, size, data)
     SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM jobs WHERE id = $1 AND fence = $6 AND status = 'processing')
     ON CONFLICT (job_id) DO UPDATE
       SET content_type = EXCLUDED.content_type, filename = EXCLUDED.filename, size = EXCLUDED.size, data = EXCLUDED.data, created_at = now()`,
    [artifact.jobId, artifact.contentType, artifact.filename, artifact.data.length, artifact.data, artifact.fence],
  );
  return (result.rowCount ?? 0) > 0;
}

/** The jobs `jobId` depends on, as its handler sees them (ctx.dependencies), in id order. */
export async function jobDependencies(
  pool: pg.Pool,
  jobId: string,
): Promise<{ id: string; type: string; status: string; result: Record<string, unknown> | null }[]> {
  const { rows } = await pool.query<{ id: string; type: string; status: string; result: Record<string, unknown> | null }>(
    `SELECT j.id, j.type, j.status::text AS status, j.result FROM job_dependencies d JOIN jobs j ON j.id = d.depends_on_id
      WHERE d.job_id = $1
     UNION ALL
     -- A waitpoint (docs/reference/lifecycle.md#waitpoints-and-durable-steps): type "waitpoint", its status, and the data it was completed with as the result.
     SELECT w.id, 'waitpoint', w.status, w.data FROM job_dependencies d JOIN waitpoints w ON w.id = d.depends_on_id
      WHERE d.job_id = $1
     ORDER BY id`,
    [jobId],
  );
  return rows;
}

/** The artifact of `dependencyId`, when it is a dependency of `jobId` and produced one. */
export async function dependencyArtifact(
  pool: pg.Pool,
  jobId: string,
  dependencyId: string,
): Promise<{ contentType: string; filename: string; data: Buffer } | null> {
  const { rows } = await pool.query<{ content_type: string; filename: string; data: Buffer }>(
    `SELECT a.content_type, a.filename, a.data FROM job_dependencies d JOIN job_artifacts a ON a.job_id = d.depends_on_id
      WHERE d.job_id = $1 AND d.depends_on_id = $2`,
    [jobId, dependencyId],
  );
  const row = rows[0];
  return row ? { contentType: row.content_type, filename: row.filename, data: row.data } : null;
}

/** Records plugin types so the API accepts them (and when a worker serving them last started). */
export async function registerJobTypes(pool: pg.Pool, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  await pool.query(
    `INSERT INTO job_types (name, source, registered_at, last_seen_at)
     SELECT name, 'plugin', now(), now() FROM unnest($1::text[]) AS t(name)
     ON CONFLICT (name) DO UPDATE SET last_seen_at = now()`,
    [names],
  );
}

export type LiveJob = {
  id: string;
  type: string;
  status: "pending" | "processing";
  retries: number;
  maxRetries: number;
  runAt: Date | null;
  updatedAt: Date;
  /** Handed to BullMQ by the dispatcher (a processing job always is): Redis should hold its envelope. */
  dispatched: boolean;
  /** The envelope it was handed over in (docs/reference/lifecycle.md#envelopes); null while it waits in Postgres. */
  envelopeId: string | null;
};
export type LiveJobCursor = { updatedAt: Date; id: string };

/**
 * Pending and processing jobs ordered by (updated_at, id), after `after`, untouched since `olderThan`
 * (null: any age). Served by the partial index on live jobs, so it stays cheap however long the history.
 */
export async function liveJobsPage(pool: pg.Pool, options: { after: LiveJobCursor | null; olderThan: Date | null; limit: number }): Promise<LiveJob[]> {
  const { rows } = await pool.query<{
    id: string;
    type: string;
    status: "pending" | "processing";
    retries: number;
    max_retries: number;
    run_at: Date | null;
    updated_at: Date;
    dispatched: boolean;
    envelope_id: string | null;
  }>(
    `SELECT j.id, j.type, j.status, j.retries, j.max_retries, j.run_at, j.updated_at, (j.status = 'processing' OR q.dispatched_at IS NOT NULL) AS dispatched,
            q.envelope_id
       FROM jobs j LEFT JOIN job_queue q ON q.job_id = j.id
      WHERE j.status IN ('pending', 'processing')
        -- A job handed over to (or running under) a worker-protocol lease (docs/reference/lifecycle.md#your-own-workers) is in no envelope: a lapsed
        -- lease is taken over by the next lease call (job-machine/lease.ts), not by Redis.
        AND NOT EXISTS (SELECT 1 FROM worker_leases l WHERE l.job_id = j.id)
        AND ($1::timestamptz IS NULL OR (j.updated_at, j.id) > ($1::timestamptz, $2::uuid))
        AND ($3::timestamptz IS NULL OR j.updated_at < $3::timestamptz)
      ORDER BY j.updated_at, j.id
      LIMIT $4`,
    [options.after?.updatedAt ?? null, options.after?.id ?? null, options.olderThan, options.limit],
  );
  return rows.map((r) => ({
    id: r.id,
    type: r.type,
    status: r.status,
    retries: r.retries,
    maxRetries: r.max_retries,
    runAt: r.run_at,
    updatedAt: r.updated_at,
    dispatched: r.dispatched,
    envelopeId: r.envelope_id,
  }));
}

/** Forgets idempotency keys past their 24 hours, a bounded number at a time. */
export async function deleteExpiredIdempotencyKeys(pool: pg.Pool, limit = 1000): Promise<number> {
  const result = await pool.query(`DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at < now() LIMIT $1)`, [limit]);
  return result.rowCount ?? 0;
}

/** Which of `ids` someone asked to cancel while they run (a worker's poll, in case a Redis message was lost). */
export async function cancelRequestedAmong(db: pg.Pool | pg.PoolClient, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>("SELECT id FROM jobs WHERE id = ANY($1::uuid[]) AND cancel_requested_at IS NOT NULL", [ids]);
  return rows.map((r) => r.id);
}
