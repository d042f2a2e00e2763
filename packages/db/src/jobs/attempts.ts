// A job's attempts, and the lifecycle lines of its log, derived once from its events (issue 33): the attempts of
// GET /jobs/{id}/attempts and the lines "Attempt n of m started.", "Attempt n was interrupted …", "Attempt n
// succeeded in t ms." of GET /jobs/{id}/logs are the same fold of the job's transition events, so the two can never
// tell different stories. The lifecycle lines are not stored: they were two of the rows every job wrote (issue 22).
import type pg from "pg";
import { EVENT_TYPES, LIVE_EVENT_TYPES, TRANSITION_EVENTS } from "@conveyor/contracts";
import { iso, TENANT_JOB } from "../core/job-sql";
import { inReadSnapshot } from "../core/transaction";

/** Said of an attempt whose worker vanished (a take-over's "started" follows a "started" of the same attempt). */
const INTERRUPTED_LINE = "was interrupted: the worker running it stopped or lost its lock (crash, kill, or a handler blocking too long).";

/** How an attempt ended: `retried` failed and another attempt followed or is due; `released` gave the job back
 * without consuming a retry (a worker shutting down); `interrupted` lost its worker (crash, lock expiry); `suspended`
 * paused it for a sleep or a waitpoint (docs/reference/lifecycle.md#waitpoints-and-durable-steps) — the same attempt resumes after it, as the next entry. */
export type AttemptOutcome = "running" | "succeeded" | "failed" | "retried" | "released" | "interrupted" | "cancelled" | "suspended";

export type JobAttempt = {
  attempt: number;
  outcome: AttemptOutcome;
  queued_at: string | null;
  started_at: string;
  finished_at: string | null;
  wait_ms: number | null;
  duration_ms: number | null;
  error: string | null;
  /** The attempt's part after a sleep or a wait (the entry before it is `suspended`): its `queued_at` is when the
   * sleep or the wait ended, so its wait is for a worker only. */
  resumed: boolean;
  /** For a `suspended` entry: what it waited for — `sleep` or `wait` — and the step's name. */
  suspension: { kind: "sleep" | "wait"; step: string } | null;
};

export type JobLogLine = { attempt: number; message: string; level: string; timestamp: string };

type AttemptEvent = {
  id: string;
  type: string;
  time: string;
  /** The event's time in microseconds since the epoch: the log's order and a success's duration, as Postgres has them. */
  us: string;
  retries: number;
  max_retries: number | null;
  run_at: string | null;
  status: string;
  error: string | null;
  deps_done: string | null;
  /** For a job.retrying event written by a suspension (suspend.ts): the sleep's or wait's step, its kind and name. */
  suspended_kind: "sleep" | "wait" | null;
  suspended_step: string | null;
};

/** An attempt with the events it began and ended with, which place its lifecycle lines in the log. */
type Folded = JobAttempt & { of: number | null; start: AttemptEvent; end: AttemptEvent | null };

const ms = (from: string, to: string) => Math.max(0, new Date(to).getTime() - new Date(from).getTime());
const later = (a: string | null, b: string | null) => (a === null ? b : b === null || new Date(a) >= new Date(b) ? a : b);

/** The job's transition events in order (every event but the live ones), or null when the job is not the org's. */
async function attemptEvents(db: pg.Pool | pg.PoolClient, orgId: string, jobId: string): Promise<AttemptEvent[] | null> {
  const { rows } = await db.query<AttemptEvent>(
    `SELECT e.id::text AS id, e.type, ${iso("e.time")} AS time, (extract(epoch FROM e.time) * 1000000)::bigint::text AS us,
            (e.data->>'retries')::int AS retries, (e.data->>'max_retries')::int AS max_retries, e.data->>'run_at' AS run_at,
            e.data->>'status' AS status, e.data->>'error' AS error,
            (SELECT ${iso("max(d.finished_at)")} FROM job_dependencies jd JOIN jobs d ON d.id = jd.depends_on_id WHERE jd.job_id = j.id) AS deps_done,
            s.kind AS suspended_kind, s.name AS suspended_step
       FROM jobs j LEFT JOIN events e ON e.job_id = j.id
        AND e.type = ANY($3::text[])
       -- A suspension writes its job.retrying event and its step's row in one statement (suspend.ts): the same now().
       LEFT JOIN LATERAL (
         SELECT s.kind, s.name FROM job_steps s
          WHERE e.type = $4 AND s.job_id = j.id AND s.kind IN ('sleep', 'wait')
            AND s.started_at BETWEEN e.time - interval '1 millisecond' AND e.time + interval '1 millisecond'
          ORDER BY s.started_at DESC LIMIT 1
       ) s ON true
      WHERE j.id = $1 AND j.org_id = $2 AND ${TENANT_JOB("j")}
      ORDER BY e.id`,
    [jobId, orgId, EVENT_TYPES.filter((t) => !(LIVE_EVENT_TYPES as readonly string[]).includes(t)), TRANSITION_EVENTS.released],
  );
  if (rows.length === 0) return null;
  return rows.filter((row) => row.type !== null);
}

/** Folds a job's events (in order) into its attempts. */
function attemptsOf(events: AttemptEvent[]): Folded[] {
  const attempts: Folded[] = [];
  let due: string | null = null;
  let current: Folded | null = null;
  /** The last entry ended in a sleep or a wait: the next start resumes the same attempt. */
  let suspended = false;
  const end = (outcome: AttemptOutcome, event: AttemptEvent, at: string | null, error: string | null = null) => {
    if (!current) return;
    const suspension = outcome === "suspended" ? { kind: event.suspended_kind!, step: event.suspended_step! } : null;
    attempts.push({ ...current, outcome, finished_at: at, duration_ms: at === null ? null : ms(current.started_at, at), error, suspension, end: event });
    current = null;
  };
  for (const e of events) {
    switch (e.type) {
      case "job.created":
        // Due at its run_at, or since it was created: the event's time, Postgres' clock like every start and finish
        // (created_at is the creating process's clock).
        if (e.status === "pending") due = e.run_at ?? e.time;
        break;
      case "job.updated":
        // Rescheduled while it waited (a debounce).
        if (!current && e.status === "pending") due = e.run_at ?? due;
        break;
      case "job.started": {
        const takeOver: boolean = current !== null;
        // A start while an attempt runs: that attempt's worker vanished and this one took the job over.
        if (takeOver) end("interrupted", e, null);
        const attempt = e.retries + 1;
        // Due when it became due; after a sleep or a wait, when that ended (a wait's end sets run_at: dependencies.ts).
        const resumed: boolean = suspended && !takeOver;
        const queued: string | null = takeOver ? null : resumed ? later(due, e.run_at) : attempt === 1 ? later(due ?? e.time, e.deps_done) : due;
        current = {
          attempt,
          outcome: "running",
          queued_at: queued,
          started_at: e.time,
          finished_at: null,
          wait_ms: queued === null ? null : ms(queued, e.time),
          duration_ms: null,
          error: null,
          resumed,
          suspension: null,
          of: e.max_retries === null ? null : e.max_retries + 1,
          start: e,
          end: null,
        };
        due = null;
        suspended = false;
        break;
      }
      case "job.retrying":
        // A retry consumes one (retries goes up); a release gives the job back as it was.
        if (current) {
          const retried: boolean = e.retries + 1 > (current as Folded).attempt;
          suspended = !retried && e.suspended_kind !== null;
          end(retried ? "retried" : suspended ? "suspended" : "released", e, e.time, retried ? e.error : null);
        }
        // Due at the retry's time, but never before this was recorded: the worker computes that time when the
        // attempt fails, and a busy database may commit the failure after it (the job could not start earlier).
        due = later(e.run_at, e.time);
        break;
      case "job.succeeded":
        end("succeeded", e, e.time);
        break;
      case "job.failed":
        end("failed", e, e.time, e.error);
        break;
      case "job.cancelled":
        // Its error, if any, is an earlier attempt's or the cancellation's reason, not this attempt's failure.
        end("cancelled", e, e.time);
        break;
    }
  }
  if (current) attempts.push(current);
  return attempts;
}

/**
 * Each attempt of a job, oldest first, read from its events (the same fold its log's lifecycle lines come from):
 * when it became due (`queued_at`: its run_at, or when it was created, as rescheduled last, no earlier than its last
 * dependency's finish; after a failure, the retry's due time; null for a take-over of an interrupted attempt),
 * started, finished, and how it ended. A job cancelled before it ran has none. Null when the job is not the org's.
 */
export async function findJobAttempts(pool: pg.Pool, orgId: string, jobId: string): Promise<JobAttempt[] | null> {
  const events = await attemptEvents(pool, orgId, jobId);
  if (events === null) return null;
  return attemptsOf(events).map(({ of: _of, start: _start, end: _end, ...attempt }) => attempt);
}

/** A log line with where it stands: by time, then rank (an interruption before the start it caused, a start before
 * its attempt's lines, a success after them), then the order of the rows it comes from. */
type Placed = JobLogLine & { us: bigint; rank: number; n: bigint };

/** The lifecycle lines of the job's attempts. */
function lifecycleLines(attempts: Folded[]): Placed[] {
  const lines: Placed[] = [];
  const at = (e: AttemptEvent, rank: number) => ({ timestamp: e.time, us: BigInt(e.us), rank, n: BigInt(e.id) });
  for (const a of attempts) {
    const started = a.resumed ? `Attempt ${a.attempt} resumed.` : `Attempt ${a.attempt} of ${a.of} started.`;
    lines.push({ attempt: a.attempt, level: "info", message: started, ...at(a.start, 1) });
    // Told at the take-over's start, which is the interrupted attempt's end.
    if (a.outcome === "interrupted" && a.end)
      lines.push({ attempt: a.attempt, level: "warn", message: `Attempt ${a.attempt} ${INTERRUPTED_LINE}`, ...at(a.end, 0) });
    if (a.outcome === "succeeded" && a.end) {
      const duration = Math.round(Number(BigInt(a.end.us) - BigInt(a.start.us)) / 1000);
      lines.push({ attempt: a.attempt, level: "info", message: `Attempt ${a.attempt} succeeded in ${duration} ms.`, ...at(a.end, 3) });
    }
  }
  return lines;
}

/** The job's log in order: the lines its handler and the runtime wrote, and its attempts' lifecycle lines; or null
 * when the job is not the org's. */
export async function findJobLogs(pool: pg.Pool, orgId: string, jobId: string): Promise<JobLogLine[] | null> {
  // One snapshot, so the written lines and the events agree (no attempt's lines without its start).
  return inReadSnapshot(pool, async (tx) => {
    const events = await attemptEvents(tx, orgId, jobId);
    if (events === null) return null;
    const { rows } = await tx.query<{ attempt: number; level: string; message: string; timestamp: string; us: string; n: string }>(
      `SELECT l.attempt, l.level::text AS level, l.message, ${iso("l.timestamp")} AS timestamp,
              (extract(epoch FROM l.timestamp) * 1000000)::bigint::text AS us, l.id::text AS n
         FROM job_logs l WHERE l.job_id = $1`,
      [jobId],
    );
    const written: Placed[] = rows.map((r) => ({ ...r, us: BigInt(r.us), rank: 2, n: BigInt(r.n) }));
    const lines = [...lifecycleLines(attemptsOf(events)), ...written];
    lines.sort((a, b) => (a.us !== b.us ? (a.us < b.us ? -1 : 1) : a.rank !== b.rank ? a.rank - b.rank : a.n < b.n ? -1 : a.n > b.n ? 1 : 0));
    return lines.map(({ attempt, message, level, timestamp }) => ({ attempt, message, level, timestamp }));
  });
}
