// Reading the event log (docs/reference/events.md#events) without gaps. An event's id is (id of the transaction that wrote it << 20) + its
// place in that transaction, written in the same statement as the status change. Ids therefore grow in the order
// transactions took their ids — not the order they commit. A reader could see event 12 (committed) while event 11's
// transaction is still running, and, having moved past 11, miss it. So readers only read ids below a horizon H << 20,
// computed by the SQL function conveyor_event_horizon() (migration 20261125230000) from the reading statement's own
// snapshot S: H is the smallest of S's xmax, the reader's own transaction id, and every transaction S sees running
// that is not proven to belong to another database on the server. Resuming after the last id read then never skips
// and never repeats an event (ids are unique and readers only move forward). Why nothing below H can still appear:
//
// Let T write an event of id (t << 20) + n with t < H, so t < xmax(S). A transaction id at or above xmax(S) is taken
// after S or was running at S (Postgres leaves those out of S and treats them as running); t is below it, so T took
// its id before S and was either finished at S (its events visible to S if it committed) or running at S, in S's list
// (the reader's own id is not in the list, and t < H ≤ that id). A running t is passed over only when proven foreign:
//  - pg_prepared_xacts showed t with another database: the id and the database come from one entry, under its lock.
//  - pg_stat_activity showed backend_xid = t with datid D ≠ this database. That reading is taken after S (the
//    function clears the transaction's cached reading first). The backend B that took t holds its slot from before
//    (it reports itself while connecting, before it can run a transaction) until after t ends (its transaction is
//    ended before the slot is cleared). The slot's entry is copied, then its xid read; that xid is t, so B held the
//    slot and t throughout, and the copied entry — hence D — is B's. backend_xid has 32 bits: every running id lies
//    within 2^31 of the next one, so equal low bits are the same id.
// Either way T runs in database D, and a transaction only writes in its own database: T writes no event here.
// A transaction that takes its id after S, or that has one but does not show in pg_stat_activity yet, is not proven
// foreign, so it holds H back (or lies at or above xmax(S)). What the function proved stays true (a transaction's
// database never changes), so each connection remembers it; what it could not prove it waits for, as before.
//
// Consequences: a long write transaction in another database no longer holds the readers back; one in this database
// does, until it ends (nothing is lost or sent twice: its events, and every event with a larger id, wait).
import type pg from "pg";
import { FINAL_EVENT_TYPES } from "@conveyor/contracts";
import { TENANT_JOB } from "../core/job-sql";

export type EventFilter = {
  /** Only this org's events (null: every org's, for the webhook relay and an API's shared tail). */
  orgId: string | null;
  /** Events after this id. */
  after: bigint;
  jobId?: string;
  types?: readonly string[];
  limit: number;
};

/** The highest id a reader may have read by now: every event at or below it is visible or never will be. */
export async function eventHorizon(db: pg.Pool | pg.PoolClient): Promise<bigint> {
  const { rows } = await db.query<{ horizon: string }>(`SELECT (conveyor_event_horizon() - 1)::text AS horizon`);
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
 * The org's (or every org's) visible events after `after`, oldest first, up to `limit`, as JSON texts, optionally only
 * up to `upTo` (inclusive); says whether committed events wait above the horizon. One statement: the horizon, the
 * page and the newest visible id are read from one snapshot.
 */
export async function readEventTexts(db: pg.Pool | pg.PoolClient, filter: EventFilter & { upTo?: bigint }): Promise<EventTextPage> {
  // Unnamed, so it is planned with its values: the org's index for an org's catch-up, the primary key for the tail.
  const { rows } = await db.query<{ waiting: boolean; id: string | null; org_id: string; job_id: string; type: string; json: string }>({
    text: `WITH h AS (
       SELECT conveyor_event_horizon() AS horizon
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
    `SELECT (SELECT max(e.id) FROM events e WHERE e.job_id = j.id AND e.type = ANY($3::text[]))::text AS final_event_id
       FROM jobs j WHERE j.id = $1 AND j.org_id = $2 AND ${TENANT_JOB("j")}`,
    [jobId, orgId, FINAL_EVENT_TYPES],
  );
  const row = rows[0];
  return row ? { finalEventId: row.final_event_id === null ? null : Number(row.final_event_id) } : null;
}
