// Flow control's data (docs/reference/flow-control.md#flow-control): organizations' rate limits and queue settings, and what the dispatcher knows of
// each type across the deployment (type_state). The decision that uses them is the dispatcher's (dispatch.ts); the
// windows are written by the claims that start jobs (job-machine/start.ts).
import type pg from "pg";
import { DEDUPE_SECONDS_MAX, TRANSITION_EVENTS, type JobStatus } from "@conveyor/contracts";
import { DISPATCH_CHANNEL } from "../core/job-sql";
import { RATE_LIMIT_LEAD_MS } from "../job-machine/start";

/**
 * The dispatcher's moment, RATE_LIMIT_LEAD_MS from now: it hands jobs over that far ahead of a window freeing, and
 * their claims wait out the rest (start.ts).
 */
const LEAD = `now() + ${RATE_LIMIT_LEAD_MS} * interval '1 millisecond'`;

/** What holds back the due jobs of one type this round. Keys: `org key` (concurrency) and `org name` (rate limits). */
export type DispatchLimits = {
  /** Organizations that paused this type. */
  pausedOrgs: Set<string>;
  /** Per organization, its cap on jobs of this type in flight (its queue setting, else ORG_CONCURRENCY_LIMIT). */
  orgCaps: Map<string, number>;
  /** Per organization, the rate limit its queue of this type names. */
  queueRateLimits: Map<string, string>;
  /** Jobs in flight (handed over or running) per concurrency key of the organizations asked about (conveyor_keys_in_flight). */
  keysInFlight: Map<string, number>;
  /** Starts each rate limit of those organizations still allows in its window. */
  rateAllowance: Map<string, number>;
  /** The type's deployment-wide limit: starts it still allows (null: no limit; 0 while paused), and a pause after a provider's 429. */
  typeAllowance: number | null;
  typePausedUntil: Date | null;
  /** When the first spent rate limit gets a start back (its oldest start leaves the window), less the lead: worth waking then. */
  nextFreeAt: Date | null;
};

/** One row of `limitsColumns`, as Postgres answers it. */
export type LimitsRow = {
  settings: { org_id: string; paused: boolean; concurrency_limit: number | null; rate_limit: string | null }[] | null;
  keys: { org_id: string; key: string; n: number }[] | null;
  limits: { org_id: string; name: string; left: number }[] | null;
  type_left: number | null;
  paused_until: Date | null;
  next_free_at: Date | null;
};

/**
 * The select list that reads the limits applying to the type `$1` for the organizations `orgs` (an SQL expression of
 * type uuid[]): one row of LimitsRow. The dispatcher reads it alone (dispatchLimits) or with its due work, in the same
 * round trip (findDueWork). Each condition is the stored function `conveyor_hold` composes
 * (docs/reference/flow-control.md#why-a-job-waits): a paused queue, an organization's cap, its keys' jobs in flight, a
 * rate limit's starts left (at the lead, less the jobs handed over and not started, which will spend them), the type
 * paused after a 429.
 */
export function limitsColumns(orgs: string): string {
  return `(SELECT json_agg(json_build_object('org_id', o.org_id, 'paused', conveyor_queue_paused(qs), 'concurrency_limit', conveyor_org_cap(qs.concurrency_limit, ts.org_concurrency_limit), 'rate_limit', qs.rate_limit))
          FROM unnest(${orgs}) AS o(org_id)
          LEFT JOIN queue_settings qs ON qs.org_id = o.org_id AND qs.type = $1
          LEFT JOIN type_state ts ON ts.type = $1
         WHERE conveyor_queue_paused(qs) OR conveyor_org_cap(qs.concurrency_limit, ts.org_concurrency_limit) IS NOT NULL OR qs.rate_limit IS NOT NULL) AS settings,
       (SELECT json_agg(json_build_object('org_id', k.org_id, 'key', k.concurrency_key, 'n', k.n)) FROM conveyor_keys_in_flight(${orgs}, NULL) AS k) AS keys,
       (SELECT json_agg(json_build_object('org_id', r.org_id, 'name', r.name, 'left', conveyor_rate_left(r, ${LEAD})
                  - (SELECT count(*) FROM job_queue q JOIN jobs j ON j.id = q.job_id
                      WHERE q.org_id = r.org_id AND q.rate_limit = r.name AND q.dispatched_at IS NOT NULL AND j.status = 'pending')))
          FROM rate_limits r WHERE r.org_id = ANY(${orgs})) AS limits,
       (SELECT CASE WHEN conveyor_type_paused_until(t) IS NOT NULL THEN 0 ELSE conveyor_rate_left(t, ${LEAD})
               - (SELECT count(*) FROM job_queue q JOIN jobs j ON j.id = q.job_id WHERE q.type = $1 AND q.dispatched_at IS NOT NULL AND j.status = 'pending') END
          FROM type_state t WHERE t.type = $1 AND (t.rate_limit IS NOT NULL OR conveyor_type_paused_until(t) IS NOT NULL)) AS type_left,
       (SELECT conveyor_type_paused_until(t) FROM type_state t WHERE t.type = $1) AS paused_until,
       (SELECT min(s.oldest + conveyor_window_span(s.period_ms) - ${RATE_LIMIT_LEAD_MS} * interval '1 millisecond')
          FROM (SELECT r.starts[1] AS oldest, r.period_ms FROM rate_limits r
                 WHERE r.org_id = ANY(${orgs}) AND conveyor_rate_left(r, ${LEAD}) <= 0
                UNION ALL
                SELECT t.starts[1], t.rate_period_ms FROM type_state t
                 WHERE t.type = $1 AND conveyor_rate_left(t, ${LEAD}) <= 0) AS s) AS next_free_at`;
}

/** The limits of a LimitsRow, for `orgs` (those the row was read for) under ORG_CONCURRENCY_LIMIT `orgCap`. */
export function toDispatchLimits(row: LimitsRow, orgs: readonly string[], orgCap: number): DispatchLimits {
  const limits: DispatchLimits = {
    pausedOrgs: new Set(),
    orgCaps: new Map(),
    queueRateLimits: new Map(),
    keysInFlight: new Map((row.keys ?? []).map((k) => [`${k.org_id} ${k.key}`, k.n])),
    rateAllowance: new Map((row.limits ?? []).map((l) => [`${l.org_id} ${l.name}`, Math.max(0, l.left)])),
    typeAllowance: row.type_left === null ? null : Math.max(0, row.type_left),
    typePausedUntil: row.paused_until,
    nextFreeAt: row.next_free_at,
  };
  for (const s of row.settings ?? []) {
    if (s.paused) limits.pausedOrgs.add(s.org_id);
    if (s.concurrency_limit !== null) limits.orgCaps.set(s.org_id, s.concurrency_limit);
    if (s.rate_limit !== null) limits.queueRateLimits.set(s.org_id, s.rate_limit);
  }
  if (orgCap > 0) for (const org of orgs) if (!limits.orgCaps.has(org)) limits.orgCaps.set(org, orgCap);
  return limits;
}

/** Reads the limits that apply to `type` for `orgs`, in one round trip. */
export async function dispatchLimits(db: pg.Pool | pg.PoolClient, type: string, orgs: readonly string[], orgCap: number): Promise<DispatchLimits> {
  // Prepared once per connection (the dispatcher's): planning these subqueries cost more than running them.
  const { rows } = await db.query<LimitsRow>({ name: "conveyor-dispatch-limits", text: `SELECT ${limitsColumns("$2::uuid[]")}`, values: [type, orgs] });
  return toDispatchLimits(rows[0]!, orgs, orgCap);
}

/** What the dispatcher saw of a type: worker slots serving it, and the leader's TYPE_RATE_LIMITS and ORG_CONCURRENCY_LIMIT. */
export async function recordTypeState(
  db: pg.Pool | pg.PoolClient,
  state: { type: string; slots: number; rateLimit: { limit: number; periodMs: number } | null; orgConcurrencyLimit: number },
): Promise<void> {
  await db.query(
    `INSERT INTO type_state (type, slots, slots_checked_at, rate_limit, rate_period_ms, org_concurrency_limit)
     VALUES ($1, $2, now(), $3, $4, $5)
     ON CONFLICT (type) DO UPDATE
       SET slots = EXCLUDED.slots, slots_checked_at = EXCLUDED.slots_checked_at, rate_limit = EXCLUDED.rate_limit,
           rate_period_ms = EXCLUDED.rate_period_ms, org_concurrency_limit = EXCLUDED.org_concurrency_limit`,
    [state.type, state.slots, state.rateLimit?.limit ?? null, state.rateLimit?.periodMs ?? null, state.orgConcurrencyLimit],
  );
}

/** A provider answered 429 with Retry-After: no job of `type` starts before `until`, anywhere (it only ever moves later). */
export async function pauseType(db: pg.Pool | pg.PoolClient, type: string, until: Date): Promise<void> {
  await db.query(
    `INSERT INTO type_state (type, paused_until) VALUES ($1, $2)
     ON CONFLICT (type) DO UPDATE SET paused_until = greatest(type_state.paused_until, EXCLUDED.paused_until)`,
    [type, until],
  );
}

export type RateLimitRow = { name: string; limit: number; period_ms: number; used: number; created_at: string; updated_at: string };

/** Creates or changes one of the org's rate limits; its window is kept (a lower limit applies at once). */
export async function putRateLimit(
  db: pg.Pool | pg.PoolClient,
  orgId: string,
  limit: { name: string; limit: number; periodMs: number },
): Promise<RateLimitRow> {
  const { rows } = await db.query<RateLimitRow>(
    `INSERT INTO rate_limits (org_id, name, "limit", period_ms) VALUES ($1, $2, $3, $4)
     ON CONFLICT (org_id, name) DO UPDATE SET "limit" = EXCLUDED."limit", period_ms = EXCLUDED.period_ms, updated_at = now()
     RETURNING name, "limit" AS limit, period_ms, conveyor_window_used(starts, period_ms) AS used, conveyor_iso(created_at) AS created_at, conveyor_iso(updated_at) AS updated_at`,
    [orgId, limit.name, limit.limit, limit.periodMs],
  );
  return rows[0]!;
}

/** The org's rate limits with how many starts each has used in its current window, by name. */
export async function listRateLimits(db: pg.Pool | pg.PoolClient, orgId: string): Promise<RateLimitRow[]> {
  const { rows } = await db.query<RateLimitRow>(
    `SELECT name, "limit" AS limit, period_ms, conveyor_window_used(starts, period_ms) AS used, conveyor_iso(created_at) AS created_at, conveyor_iso(updated_at) AS updated_at
       FROM rate_limits WHERE org_id = $1 ORDER BY name`,
    [orgId],
  );
  return rows;
}

export async function countRateLimits(db: pg.Pool | pg.PoolClient, orgId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM rate_limits WHERE org_id = $1", [orgId]);
  return rows[0]!.n;
}

/** Deletes one; false when the org has no such limit. Jobs that name it start without it from then on. */
export async function deleteRateLimit(db: pg.Pool | pg.PoolClient, orgId: string, name: string): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM rate_limits WHERE org_id = $1 AND name = $2", [orgId, name]);
  return (rowCount ?? 0) > 0;
}

/** Which of `names` the org has not defined. */
export async function unknownRateLimits(db: pg.Pool | pg.PoolClient, orgId: string, names: readonly string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const { rows } = await db.query<{ name: string }>(
    "SELECT n AS name FROM unnest($2::text[]) AS n WHERE NOT EXISTS (SELECT 1 FROM rate_limits r WHERE r.org_id = $1 AND r.name = n)",
    [orgId, [...new Set(names)]],
  );
  return rows.map((r) => r.name);
}

export type QueueRow = {
  type: string;
  paused: boolean;
  concurrency_limit: number | null;
  rate_limit: string | null;
  due: number;
  delayed: number;
  running: number;
  waiting_on_limits: number;
  oldest_due_at: string | null;
  /** Jobs of the type that started in the last minute (the live start rate). */
  started_last_minute: number;
  /** The 95th percentile of the wait from due (run_at, a retry's time, else creation) to start, over 15 minutes; null when none started. */
  p95_wait_ms: number | null;
};

/** How many of the org's newest events the start figures read at most: their cost stays bounded however busy it is. */
export const START_STATS_EVENTS = 20_000;

type StartStats = { started_last_minute: number; p95_wait_ms: number | null };

/**
 * Per type, the org's starts in the last minute and the p95 of due-to-start waits over the last 15 minutes, read from
 * its job.started events (each carries the job's run_at and created_at as they were when it started). Only the org's
 * newest START_STATS_EVENTS events are read (through events_org_id_id_idx, newest first): a busier org gets figures
 * of its latest events rather than a slower answer.
 */
async function startStats(db: pg.Pool | pg.PoolClient, orgId: string): Promise<Map<string, StartStats>> {
  const { rows } = await db.query<{ type: string; started_last_minute: number; p95_wait_ms: number | null }>(
    `SELECT e.data->>'type' AS type,
            count(*) FILTER (WHERE e.time > now() - interval '1 minute')::int AS started_last_minute,
            round(percentile_cont(0.95) WITHIN GROUP (ORDER BY greatest(0, extract(epoch FROM e.time - coalesce((e.data->>'run_at')::timestamptz, (e.data->>'created_at')::timestamptz)) * 1000)))::int AS p95_wait_ms
       FROM (SELECT type, time, data FROM events WHERE org_id = $1 ORDER BY id DESC LIMIT $2) AS e
      WHERE e.type = $3 AND e.time > now() - interval '15 minutes'
      GROUP BY 1`,
    [orgId, START_STATS_EVENTS, TRANSITION_EVENTS.started],
  );
  return new Map(rows.map((r) => [r.type, { started_last_minute: r.started_last_minute, p95_wait_ms: r.p95_wait_ms }]));
}

/**
 * The org's queue of each of `types`: its settings and counts — due (due now, waiting for a worker slot: in Postgres,
 * or handed over in an envelope and not started), delayed (due later: run_at, a retry, a debounce), running (started
 * on a worker), waiting_on_limits (due but held by a pause, a rate limit, its concurrency key or the org's cap, as
 * `conveyor_hold` — which `waiting_for` also asks — says) — and when the oldest due job fell due. Due jobs are judged
 * in groups of one concurrency key and rate limit, so a backlog of a million costs one scan. With them, the live start
 * rate and the p95 wait from due to start (`startStats`).
 */
export async function listQueues(db: pg.Pool | pg.PoolClient, orgId: string, types: readonly string[]): Promise<QueueRow[]> {
  const { rows } = await db.query<{
    type: string;
    paused: boolean;
    concurrency_limit: number | null;
    rate_limit: string | null;
    delayed: number;
    running: number;
    due: number;
    waiting_on_limits: number;
    oldest_due_at: string | null;
  }>(
    `WITH types AS (SELECT unnest($2::text[]) AS type)
     SELECT t.type, coalesce(s.paused, false) AS paused, s.concurrency_limit, s.rate_limit,
            (SELECT count(*)::int FROM job_queue q WHERE q.org_id = $1 AND q.type = t.type AND q.dispatched_at IS NULL AND q.due_at > now()) AS delayed,
            coalesce(h.running, 0) AS running,
            coalesce(g.due, 0) + coalesce(h.waiting, 0) AS due,
            coalesce(g.held, 0) AS waiting_on_limits,
            conveyor_iso(least(g.oldest, h.oldest)) AS oldest_due_at
       FROM types t
       LEFT JOIN queue_settings s ON s.org_id = $1 AND s.type = t.type
       LEFT JOIN LATERAL (
         SELECT count(*) FILTER (WHERE j.status = 'processing')::int AS running, count(*) FILTER (WHERE j.status = 'pending')::int AS waiting,
                min(q.due_at) FILTER (WHERE j.status = 'pending') AS oldest
           FROM job_queue q JOIN jobs j ON j.id = q.job_id
          WHERE q.org_id = $1 AND q.type = t.type AND q.dispatched_at IS NOT NULL) AS h ON true
       LEFT JOIN LATERAL (
         SELECT sum(n) FILTER (WHERE NOT limited)::int AS due, sum(n) FILTER (WHERE limited)::int AS held, min(oldest) AS oldest
           FROM (SELECT count(*)::int AS n, min(due_at) AS oldest,
                        coalesce(conveyor_hold(t.type, $1, concurrency_key, max(concurrency_limit), rate_limit), 'no_worker') <> 'no_worker' AS limited
                   FROM job_queue q WHERE q.org_id = $1 AND q.type = t.type AND q.dispatched_at IS NULL AND q.due_at <= now()
                  GROUP BY concurrency_key, rate_limit) AS groups) AS g ON true
      ORDER BY t.type`,
    [orgId, types],
  );
  const starts = await startStats(db, orgId);
  return rows.map((row) => ({
    ...row,
    started_last_minute: starts.get(row.type)?.started_last_minute ?? 0,
    p95_wait_ms: starts.get(row.type)?.p95_wait_ms ?? null,
  }));
}

/** Changes the org's settings of one type's queue (only the fields given); answers whether it paused or resumed. */
export async function updateQueueSettings(
  db: pg.Pool | pg.PoolClient,
  orgId: string,
  type: string,
  change: { paused?: boolean; concurrencyLimit?: number | null; rateLimit?: string | null },
): Promise<void> {
  await db.query(
    `INSERT INTO queue_settings (org_id, type, paused, paused_at, concurrency_limit, rate_limit)
     VALUES ($1, $2, coalesce($3, false), CASE WHEN $3 THEN now() END, $5, $7)
     ON CONFLICT (org_id, type) DO UPDATE SET
       paused = coalesce($3, queue_settings.paused),
       paused_at = CASE WHEN $3 IS NULL THEN queue_settings.paused_at WHEN $3 AND NOT queue_settings.paused THEN now() WHEN $3 THEN queue_settings.paused_at END,
       concurrency_limit = CASE WHEN $4 THEN $5 ELSE queue_settings.concurrency_limit END,
       rate_limit = CASE WHEN $6 THEN $7 ELSE queue_settings.rate_limit END,
       updated_at = now()`,
    [
      orgId,
      type,
      change.paused ?? null,
      change.concurrencyLimit !== undefined,
      change.concurrencyLimit ?? null,
      change.rateLimit !== undefined,
      change.rateLimit ?? null,
    ],
  );
  if (change.paused === false) await db.query(`SELECT pg_notify('${DISPATCH_CHANNEL}', '')`);
}

/** Forgets dedupe keys older than the longest window (DEDUPE_SECONDS_MAX), a bounded number at a time. */
export async function deleteExpiredDedupeKeys(db: pg.Pool | pg.PoolClient, limit = 1000): Promise<number> {
  const result = await db.query(
    "DELETE FROM dedupe_keys WHERE ctid IN (SELECT ctid FROM dedupe_keys WHERE created_at < now() - $2 * interval '1 second' LIMIT $1)",
    [limit, DEDUPE_SECONDS_MAX],
  );
  return result.rowCount ?? 0;
}

/** The job holding the org's dedupe `key`, as it is now. */
export async function dedupeHolder(db: pg.Pool | pg.PoolClient, orgId: string, key: string): Promise<{ id: string; status: JobStatus }> {
  const { rows } = await db.query<{ id: string; status: JobStatus }>(
    "SELECT j.id, j.status FROM dedupe_keys k JOIN jobs j ON j.id = k.job_id WHERE k.org_id = $1 AND k.key = $2",
    [orgId, key],
  );
  if (!rows[0]) throw new Error("a dedupe key refused a job, yet names no job");
  return rows[0];
}
