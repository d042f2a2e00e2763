// SQL shared by the job queries of the API and the worker.

/** A timestamptz column as the API writes timestamps: ISO 8601 UTC with milliseconds. */
export const iso = (column: string) => `conveyor_iso(${column})`;

/** The UTC day of a timestamptz expression: failure_counts_daily's day, the day its failed jobs were created. */
export const utcDay = (at: string) => `(${at} AT TIME ZONE 'UTC')::date`;

/**
 * Jobs an organization sees: every job but the internal ones (webhook deliveries, type `_…`), which user type
 * names cannot be (they start with a letter). Internal jobs announce no events either.
 */
export const TENANT_JOB = (alias: string) => `left(${alias}.type, 1) <> '_'`;

/**
 * A queue row `queue` still waiting in Postgres (not handed over), written as the predicate of job_queue_due_idx (every
 * waiting row by due time) for the reads across types that it serves: the next due time, the due backlog. Not
 * `dispatched_at IS NULL`, the waiting index's predicate: the dispatcher's reads of one type, written that way, must
 * not be able to take the due index — planned as generic plans on a table not yet analyzed, they did, and each read
 * every due row of every type and sorted them (docs/decisions/2026-12-07-one-type-reads-the-waiting-index.md). Nor
 * `num_nulls(dispatched_at) = 1`, which the hand-over writes so that it can take no partial index at all.
 */
export const WAITING_ANY_TYPE = (queue: string) => `num_nonnulls(${queue}.dispatched_at) = 0`;

/**
 * A pending job's queue row `queue` that is due later than `now` (run_at or a retry's wait ahead, not handed over):
 * the overview's Delayed, and the list's `due=later`; every other pending job is due now.
 */
export const DUE_LATER = (queue: string, now: string) => `${WAITING_ANY_TYPE(queue)} AND ${queue}.due_at > ${now}`;

/**
 * NOTIFY channel that wakes the dispatcher: new jobs, and slots freed by finished attempts. The payload names the
 * types that have new jobs, separated by spaces (a type name has none), or is empty: look at every type.
 */
export const DISPATCH_CHANNEL = "conveyor_dispatch";

/** Types named in one dispatch NOTIFY at most (64 bytes each, well under NOTIFY's 8,000); more: the empty payload. */
const DISPATCH_TYPES_MAX = 16;

/** The dispatch NOTIFY's payload for the jobs of the relation `rows` (a CTE with a `type` column): their types. */
export const dispatchTypes = (rows: string) =>
  `(SELECT CASE WHEN count(*) <= ${DISPATCH_TYPES_MAX} THEN string_agg(type, ' ') ELSE '' END FROM (SELECT DISTINCT type FROM ${rows}) AS notified)`;

/** NOTIFY channel that tells event readers (SSE, the webhook relay) that events were written. */
export const EVENTS_CHANNEL = "conveyor_events";

/**
 * A CTE `event_base`: the base of this transaction's event ids (`conveyor_next_event_id()`, then + row_number()),
 * computed once: a volatile function in a joined subquery may be evaluated again for every row it is joined to.
 */
export const EVENT_BASE = "event_base AS MATERIALIZED (SELECT conveyor_next_event_id() AS base)";
