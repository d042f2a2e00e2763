// Reading the event log (SPEC §10) without gaps. An event's id is (id of the transaction that wrote it << 20) + its
// place in that transaction, written in the same statement as the status change. Ids therefore grow in the order
// transactions took their ids — not the order they commit. A reader could see event 12 (committed) while event 11's
// transaction is still running, and, having moved past 11, miss it. So readers only read ids below
// (oldest transaction still running << 20): every transaction below that horizon has finished, and every event
// that can still appear lies above it. Resuming after the last id read never skips and never repeats an event.
import type pg from "pg";

export type JobEvent = {
  id: string;
  type: string;
  time: string;
  job_id: string;
  /** The job as GET /jobs/{id} shows it, without its payload. */
  data: Record<string, unknown>;
};

export type EventFilter = {
  /** Only this org's events (null: every org's, for the webhook relay and an API's shared tail). */
  orgId: string | null;
  /** Events after this id. */
  after: bigint;
  jobId?: string;
  types?: readonly string[];
  limit: number;
};

/** The org's (or every org's) visible events after `after`, oldest first, up to `limit`. */
export async function readEvents(db: pg.Pool | pg.PoolClient, filter: EventFilter): Promise<(JobEvent & { org_id: string })[]> {
  const { rows } = await db.query<JobEvent & { org_id: string }>(
    `SELECT e.id::text AS id, e.type, conveyor_iso(e.time) AS time, e.job_id, e.org_id, e.data
       FROM events e
      WHERE e.id > $1::bigint
        AND e.id < (pg_snapshot_xmin(pg_current_snapshot())::text::bigint << 20)
        AND ($2::uuid IS NULL OR e.org_id = $2::uuid)
        AND ($3::uuid IS NULL OR e.job_id = $3::uuid)
        AND ($4::text[] IS NULL OR e.type = ANY($4::text[]))
      ORDER BY e.id
      LIMIT $5`,
    [filter.after.toString(), filter.orgId, filter.jobId ?? null, filter.types && filter.types.length ? filter.types : null, filter.limit],
  );
  return rows;
}

/** The highest id a reader may have read by now: every event at or below it is visible or never will be. */
export async function eventHorizon(db: pg.Pool | pg.PoolClient): Promise<bigint> {
  const { rows } = await db.query<{ horizon: string }>(`SELECT ((pg_snapshot_xmin(pg_current_snapshot())::text::bigint << 20) - 1)::text AS horizon`);
  return BigInt(rows[0]!.horizon);
}
