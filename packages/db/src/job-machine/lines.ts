// A job's log as GET /jobs/{id}/logs shows it: the lines its handler and the runtime wrote, and the lifecycle lines
// its transitions imply — "Attempt n of m started.", "Attempt n was interrupted …", "Attempt n succeeded in t ms." —
// read from its events instead of stored a second time: they were two of the rows every job wrote (issue 22).
import { TRANSITION_EVENTS } from "@conveyor/contracts";
import { eventOf } from "./sql";

/** Said of an attempt whose worker vanished (a take-over's "started" follows a "started" of the same attempt). */
export const INTERRUPTED_LINE = "was interrupted: the worker running it stopped or lost its lock (crash, kill, or a handler blocking too long).";

/** Events that begin or end an attempt (job.updated, which amends a finished job, is neither). */
const ATTEMPT_EVENTS = (["started", "retryScheduled", "succeeded", "failed", "cancelled"] as const).map((t) => `'${TRANSITION_EVENTS[t]}'`).join(", ");

/**
 * Rows (attempt, level, message, ts, rank, n) of the log of the job whose id the expression `jobId` gives; shown in
 * the order `JOB_LOG_ORDER`: by time, and at the same moment an interruption before the start it caused, a start
 * before its attempt's lines, and a success after them.
 */
export function jobLogSql(jobId: string): string {
  return `WITH lifecycle AS (
       SELECT e.id, e.type, e.time, (e.data->>'retries')::int + 1 AS attempt, (e.data->>'max_retries')::int + 1 AS attempts,
              lag(e.type) OVER w AS prev_type, lag(e.time) OVER w AS prev_time, lag((e.data->>'retries')::int + 1) OVER w AS prev_attempt
         FROM events e
        WHERE e.job_id = ${jobId} AND e.type IN (${ATTEMPT_EVENTS})
       WINDOW w AS (ORDER BY e.id)
     ), lines AS (
       SELECT prev_attempt AS attempt, 'warn' AS level, 'Attempt ' || prev_attempt || ' ${INTERRUPTED_LINE}' AS message, time AS ts, 0 AS rank, id AS n
         FROM lifecycle WHERE type = ${eventOf("started")} AND prev_type = ${eventOf("started")}
       UNION ALL
       SELECT attempt, 'info', 'Attempt ' || attempt || ' of ' || attempts || ' started.', time, 1, id
         FROM lifecycle WHERE type = ${eventOf("started")}
       UNION ALL
       SELECT l.attempt, l.level::text, l.message, l.timestamp, 2, l.id FROM job_logs l WHERE l.job_id = ${jobId}
       UNION ALL
       SELECT attempt, 'info', 'Attempt ' || attempt || ' succeeded in ' || round(extract(epoch FROM time - prev_time) * 1000) || ' ms.', time, 3, id
         FROM lifecycle WHERE type = ${eventOf("succeeded")} AND prev_type = ${eventOf("started")}
     )
     SELECT * FROM lines`;
}

/** The order of `jobLogSql`'s rows, for a query that selects them as `alias`. */
export const JOB_LOG_ORDER = (alias: string) => `${alias}.ts, ${alias}.rank, ${alias}.n`;
