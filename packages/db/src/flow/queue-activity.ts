// Per-queue activity of the last hour, minute by minute (issue 38: the Queues page's charts): how many attempts of
// each job type started, and how long they had waited from due (run_at, a retry's time, else creation) to start. Read
// from the org's job.started events, which carry the job's run_at and created_at as they were when it started — the
// same reading as GET /queues's live start rate and p95 wait (flow-control.ts), over an hour instead of 15 minutes.
import { TRANSITION_EVENTS } from "@conveyor/contracts";
import { iso } from "../core/job-sql";
import type { Queryable } from "../core/transaction";

/** How many of the org's newest events the charts read at most: the cost stays bounded however busy the org is. */
export const QUEUE_ACTIVITY_EVENTS = 100_000;

/** Minutes the charts cover, the current one last. */
export const QUEUE_ACTIVITY_MINUTES = 60;

export type QueueActivityMinute = { type: string; minute: string; started: number; wait_avg_ms: number; wait_p95_ms: number };

export type QueueActivity = {
  /** The minutes covered, oldest first (each a minute's start, ISO 8601). */
  minutes: string[];
  /**
   * The first minute the events read cover whole; null when they cover the whole hour. Before it the org had more
   * events than QUEUE_ACTIVITY_EVENTS, and those minutes are unknown rather than quiet.
   */
  covered_from: string | null;
  /** Each type's minutes with at least one start (tenant types only). */
  rows: QueueActivityMinute[];
};

/** `maxEvents`: how many of the org's newest events to read at most (QUEUE_ACTIVITY_EVENTS). */
export async function readQueueActivity(db: Queryable, orgId: string, maxEvents = QUEUE_ACTIVITY_EVENTS): Promise<QueueActivity> {
  const { rows } = await db.query<{ minutes: string[]; covered_from: string | null; rows: QueueActivityMinute[] | null }>(
    `WITH recent AS (
       SELECT type, time, data FROM events WHERE org_id = $1 ORDER BY id DESC LIMIT $2
     ), span AS (
       SELECT date_trunc('minute', now()) - ($4::int - 1) * interval '1 minute' AS first_minute,
              CASE WHEN (SELECT count(*) FROM recent) = $2 THEN date_trunc('minute', (SELECT min(time) FROM recent)) + interval '1 minute' END AS cut
     ), starts AS (
       SELECT e.data->>'type' AS type, date_trunc('minute', e.time) AS minute,
              greatest(0, extract(epoch FROM e.time - coalesce((e.data->>'run_at')::timestamptz, (e.data->>'created_at')::timestamptz)) * 1000) AS wait_ms
         FROM recent e, span
        WHERE e.type = $3 AND e.time >= span.first_minute AND left(e.data->>'type', 1) <> '_'
     )
     SELECT (SELECT array_agg(${iso("m")} ORDER BY m)
               FROM span, generate_series(span.first_minute, date_trunc('minute', now()), interval '1 minute') AS m) AS minutes,
            (SELECT CASE WHEN span.cut > span.first_minute THEN ${iso("span.cut")} END FROM span) AS covered_from,
            (SELECT json_agg(json_build_object('type', g.type, 'minute', ${iso("g.minute")}, 'started', g.started,
                                               'wait_avg_ms', g.wait_avg_ms, 'wait_p95_ms', g.wait_p95_ms) ORDER BY g.type, g.minute)
               FROM (SELECT type, minute, count(*)::int AS started, round(avg(wait_ms))::int AS wait_avg_ms,
                            round(percentile_cont(0.95) WITHIN GROUP (ORDER BY wait_ms))::int AS wait_p95_ms
                       FROM starts GROUP BY type, minute) AS g) AS rows`,
    [orgId, maxEvents, TRANSITION_EVENTS.started, QUEUE_ACTIVITY_MINUTES],
  );
  const row = rows[0]!;
  return { minutes: row.minutes, covered_from: row.covered_from, rows: row.rows ?? [] };
}
