// SQL pieces the transitions share: how an event is written, which event a status announces, and the rule that a
// cancellation request wins over running again. Only the transitions (this folder) use them.
import { EVENT_OF_STATUS, TRANSITION_EVENTS } from "@conveyor/contracts";
import { TENANT_JOB, utcDay } from "../core/job-sql";
import { GONE_BEATS } from "../flow/workers";

/**
 * `job.status = 'status'`, written so that the planner cannot use it to prove the predicate of a partial index on
 * status (jobs_live_updated_at_idx: pending and processing jobs). The transitions find their jobs by id; with the
 * plain comparison, a planner whose statistics are stale (a burst of new jobs since the last ANALYZE — every bench run,
 * and production after a quiet spell) scans that whole index for every batch instead of probing the primary key, and
 * each claim and outcome costs as many rows as there are live jobs.
 */
export const statusIs = (job: string, status: string): string => `${job}.status::text = '${status}'`;

/** A transition's event as an SQL string literal. */
export const eventOf = (transition: keyof typeof TRANSITION_EVENTS): string => `'${TRANSITION_EVENTS[transition]}'`;

/** The event announcing a move into the status that `status` (an SQL expression) evaluates to. */
export const eventOfStatus = (status: string): string =>
  `CASE ${status} ${Object.entries(EVENT_OF_STATUS)
    .map(([to, event]) => `WHEN '${to}' THEN '${event}'`)
    .join(" ")} END`;

/**
 * The status a job moves into when an outcome sends it back to pending (a retry, a released attempt) or an attempt
 * is taken over: a job someone asked to cancel never runs again — it is cancelled instead. The one place that rule
 * is written.
 */
export const unlessCancelRequested = (job: string, status: string): string =>
  `CASE WHEN ${job}.cancel_requested_at IS NOT NULL THEN 'cancelled' ELSE ${status} END::job_status`;

/**
 * An INSERT of one event per row of `from` (which has columns `id`, `org_id`, `type` and `job`, a jobs row as it is after
 * the change), for use as a CTE body after `EVENT_BASE`. Ids are the transaction's base + the row's place, ordered by
 * job id; internal jobs announce nothing. With `data` (an expression of `x`), the job's JSON is that instead of
 * `conveyor_job_data(x.job)`: a statement whose UPDATE returns `eventData("j")` builds it from the row's own columns,
 * where a returned `j` is a copy of the whole row that the JSON then takes apart field by field.
 */
export function announce(options: { from: string; event: string; time?: string; where?: string; data?: string }): string {
  return `INSERT INTO events (id, org_id, job_id, type, time, data)
       SELECT e.base + row_number() OVER (ORDER BY x.id), x.org_id, x.id, ${options.event}, ${options.time ?? "now()"}, ${options.data ?? "conveyor_job_data(x.job)"}
         FROM ${options.from} x CROSS JOIN event_base e
        WHERE ${TENANT_JOB("x")}${options.where ? ` AND (${options.where})` : ""}`;
}

/**
 * A success's result as it is stored (`result`, a jsonb expression, over the jobs row `job`): merged into the stored
 * object when both are objects, not replaced — a provider callback (M-Pesa) may have recorded result.callback meanwhile.
 */
export const mergedResult = (job: string, result: string): string =>
  `CASE WHEN jsonb_typeof(${job}.result) = 'object' AND jsonb_typeof(${result}) = 'object' THEN ${job}.result || ${result} ELSE ${result} END`;

/** The event JSON of the jobs row `job` (an UPDATE's target, in its RETURNING), null for an internal job, which announces nothing. */
export const eventData = (job: string): string => `CASE WHEN ${TENANT_JOB(job)} THEN conveyor_job_data(${job}) END`;

/**
 * Two CTEs, `counted` and `counted_by_day`, counting the failures among the rows of `from` (columns `id`, `org_id`,
 * `type`, `status`, `failure_group`, `finished_at`, `created_at`, as a job is after the change) in failure_counts and
 * failure_counts_daily (by the UTC day the job was created), which GET /jobs/failures reads (jobs/failure-groups.ts): for
 * use after other CTEs. One row per organization and failure group (and day), taken in key order, so concurrent
 * transitions lock the rows they share in the same order and never wait for each other in a cycle. Nothing is written
 * when no row of `from` failed.
 */
export function countFailures(from: string): string {
  const failed = `${from} f WHERE f.status = 'failed' AND f.failure_group IS NOT NULL`;
  const merge = (table: string) => `SET failed = ${table}.failed + EXCLUDED.failed,
              first_seen = least(${table}.first_seen, EXCLUDED.first_seen),
              sample_job_id = CASE WHEN EXCLUDED.last_seen >= ${table}.last_seen THEN EXCLUDED.sample_job_id ELSE ${table}.sample_job_id END,
              last_seen = greatest(${table}.last_seen, EXCLUDED.last_seen)`;
  return `counted AS (
       INSERT INTO failure_counts AS c (org_id, failure_group, type, failed, first_seen, last_seen, sample_job_id)
       SELECT f.org_id, f.failure_group, min(f.type), count(*), min(f.finished_at), max(f.finished_at),
              (array_agg(f.id ORDER BY f.finished_at DESC, f.id DESC))[1]
         FROM ${failed}
        GROUP BY f.org_id, f.failure_group ORDER BY f.org_id, f.failure_group
       ON CONFLICT (org_id, failure_group) DO UPDATE
          ${merge("c")}
     ), counted_by_day AS (
       INSERT INTO failure_counts_daily AS d (org_id, day, failure_group, type, failed, first_seen, last_seen, sample_job_id)
       SELECT f.org_id, ${utcDay("f.created_at")}, f.failure_group, min(f.type), count(*), min(f.finished_at), max(f.finished_at),
              (array_agg(f.id ORDER BY f.finished_at DESC, f.id DESC))[1]
         FROM ${failed}
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
       ON CONFLICT (org_id, day, failure_group) DO UPDATE
          ${merge("d")}
     )`;
}

/**
 * True while the attempt holding `job` (a jobs row) still has a live holder (docs/reference/lifecycle.md#storage-and-leases): its fence begins with the id
 * of a worker in the worker registry (`<worker id>:…`, as the worker's envelopes and leases name their attempts) and
 * that worker's heartbeat is fresher than GONE_BEATS of its intervals by the database's clock — the rule the
 * Workers view shows as "running". A fence naming no registered worker (one written before holders were named, or a
 * holder reaped) has no live holder. A running job is taken over only when this is false, so a second delivery of
 * its id (overlapping leaders, a stalled check on a worker that is only busy, a reconciler's repair) never starts it
 * again while its holder may still be running it. A worker-protocol lease (docs/reference/lifecycle.md#your-own-workers) names no worker: its token is
 * the fence, and its holder lives while the lease row under that token has not expired.
 */
export const holderLives = (job: string): string =>
  `(EXISTS (SELECT 1 FROM workers w
            WHERE w.id = (CASE WHEN ${job}.fence ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:'
                               THEN left(${job}.fence, 36) END)::uuid
              AND w.heartbeat_at > now() - make_interval(secs => w.heartbeat_ms * ${GONE_BEATS}::double precision / 1000))
   OR EXISTS (SELECT 1 FROM worker_leases l WHERE l.job_id = ${job}.id AND l.token = ${job}.fence AND l.expires_at > now()))`;

/**
 * Two CTEs, `usage_counted` and `pending_counted`, counting in the usage rows what the rows of `moved` did (docs/reference/tenants.md#usage-quotas-and-backpressure,
 * docs/reference/lifecycle.md#storage-and-leases: the statements that do the work count it, one upsert per organization, day, type and stripe per statement,
 * no trigger on jobs): an attempt starts when a job moves into 'processing' (or a take-over gives it a new
 * started_at) and ends when it moves out (or is taken over), its milliseconds from its started_at to now at the
 * millisecond precision events are stored with; and the organization's pending jobs (quotas) change by the jobs
 * that moved into or out of 'pending'. `moved` has columns `org_id`, `type`, `old_status`, `old_started_at`,
 * `new_status`, `new_started_at` (statuses as text). The usage rows are taken before the stored rows, in key order,
 * as the creation statement takes them (create.ts), so two statements never wait for each other in a cycle. For use after other CTEs.
 */
export function countUsage(moved: string): string {
  return `usage_counted AS (
       INSERT INTO usage_counts AS u (org_id, day, type, stripe, attempts_started, attempt_ms)
       SELECT c.org_id, (now() AT TIME ZONE 'UTC')::date, c.type, conveyor_usage_stripe(),
              count(*) FILTER (WHERE c.started),
              coalesce(sum(c.ms) FILTER (WHERE c.ended), 0)
         FROM (SELECT m.org_id, m.type,
                      m.new_status = 'processing' AND (m.old_status <> 'processing' OR m.new_started_at IS DISTINCT FROM m.old_started_at) AS started,
                      m.old_status = 'processing' AND m.old_started_at IS NOT NULL
                        AND (m.new_status <> 'processing' OR m.new_started_at IS DISTINCT FROM m.old_started_at) AS ended,
                      greatest(0, round(extract(epoch FROM now()::timestamptz(3) - m.old_started_at) * 1000))::bigint AS ms
                 FROM ${moved} m
                WHERE ${TENANT_JOB("m")} AND (m.new_status = 'processing' OR m.old_status = 'processing')) c
        WHERE c.started OR c.ended
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
       ON CONFLICT (org_id, day, type, stripe) DO UPDATE
          SET attempts_started = u.attempts_started + EXCLUDED.attempts_started, attempt_ms = u.attempt_ms + EXCLUDED.attempt_ms
       RETURNING 1
     ), pending_counted AS (
       INSERT INTO stored_payload_bytes AS s (org_id, stripe, pending_jobs)
       SELECT m.org_id, conveyor_usage_stripe(), sum((m.new_status = 'pending')::int - (m.old_status = 'pending')::int)
         FROM ${moved} m
        WHERE ${TENANT_JOB("m")} AND (m.new_status = 'pending') <> (m.old_status = 'pending')
          -- After the usage rows (the lock order above): the subquery runs the usage upsert first.
          AND (SELECT count(*) FROM usage_counted) >= 0
        GROUP BY 1 ORDER BY 1
       ON CONFLICT (org_id, stripe) DO UPDATE SET pending_jobs = s.pending_jobs + EXCLUDED.pending_jobs
     )`;
}
