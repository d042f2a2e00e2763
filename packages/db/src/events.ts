// Reading the event log (SPEC §10) without gaps. An event's id is (id of the transaction that wrote it << 20) + its
// place in that transaction, written in the same statement as the status change. Ids therefore grow in the order
// transactions took their ids — not the order they commit. A reader could see event 12 (committed) while event 11's
// transaction is still running, and, having moved past 11, miss it. So readers only read ids below
// (oldest transaction still running << 20): every transaction below that horizon has finished, and every event
// that can still appear lies above it. Resuming after the last id read never skips and never repeats an event.
import type pg from "pg";
import { TENANT_JOB } from "./job-sql";

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

/** An event as its readers send it: routing fields, and the event as JSON text, rendered once by Postgres. */
export type EventText = {
  /** Below 2^53 (a transaction id shifted by 20 bits), so a JSON number and a JavaScript number hold it exactly. */
  id: number;
  orgId: string;
  jobId: string;
  type: string;
  /** `{"id", "type", "time", "job_id", "data"}`. */
  json: string;
};

export type EventTextPage = {
  events: EventText[];
  /**
   * Events exist that have committed but lie at or above the horizon this read used (an older transaction is still
   * running): they become readable when it ends, which sends no notification of its own if it wrote no event.
   */
  waiting: boolean;
};

/**
 * Like readEvents, as JSON texts, optionally only up to `upTo` (inclusive); says whether committed events wait above
 * the horizon. One statement: the horizon, the page and the newest visible id are read from one snapshot.
 */
export async function readEventTexts(db: pg.Pool | pg.PoolClient, filter: EventFilter & { upTo?: bigint }): Promise<EventTextPage> {
  // Unnamed, so it is planned with its values: the org's index for an org's catch-up, the primary key for the tail.
  const { rows } = await db.query<{ waiting: boolean; id: string | null; org_id: string; job_id: string; type: string; json: string }>({
    text: `WITH h AS (
       SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint << 20 AS horizon
     )
     SELECT COALESCE((SELECT max(id) FROM events) >= h.horizon, false) AS waiting, e.*
       FROM h LEFT JOIN LATERAL (
         SELECT e.id::text AS id, e.org_id, e.job_id, e.type,
                json_build_object('id', e.id, 'type', e.type, 'time', conveyor_iso(e.time), 'job_id', e.job_id, 'data', e.data)::text AS json
           FROM events e
          WHERE e.id > $1::bigint
            AND e.id < h.horizon
            AND ($6::bigint IS NULL OR e.id <= $6::bigint)
            AND ($2::uuid IS NULL OR e.org_id = $2::uuid)
            AND ($3::uuid IS NULL OR e.job_id = $3::uuid)
            AND ($4::text[] IS NULL OR e.type = ANY($4::text[]))
          ORDER BY e.id
          LIMIT $5
       ) e ON true`,
    values: [
      filter.after.toString(),
      filter.orgId,
      filter.jobId ?? null,
      filter.types && filter.types.length ? filter.types : null,
      filter.limit,
      filter.upTo === undefined ? null : filter.upTo.toString(),
    ],
  });
  return {
    waiting: rows[0]?.waiting ?? false,
    events: rows.filter((r) => r.id !== null).map((r) => ({ id: Number(r.id), orgId: r.org_id, jobId: r.job_id, type: r.type, json: r.json })),
  };
}

/**
 * For a job's event stream: whether the job is the org's (null when not), and the id of its final event (succeeded,
 * failed or cancelled) once one is visible.
 */
export async function findJobEventState(db: pg.Pool | pg.PoolClient, orgId: string, jobId: string): Promise<{ finalEventId: number | null } | null> {
  const { rows } = await db.query<{ final_event_id: string | null }>(
    `SELECT (SELECT max(e.id) FROM events e WHERE e.job_id = j.id AND e.type IN ('job.succeeded', 'job.failed', 'job.cancelled'))::text AS final_event_id
       FROM jobs j WHERE j.id = $1 AND j.org_id = $2 AND ${TENANT_JOB("j")}`,
    [jobId, orgId],
  );
  const row = rows[0];
  return row ? { finalEventId: row.final_event_id === null ? null : Number(row.final_event_id) } : null;
}
