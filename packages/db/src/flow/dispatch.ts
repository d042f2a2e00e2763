// Which due job runs next, decided in one place (docs/reference/time.md#time-priority-and-fairness): the dispatcher reads the waiting rows of `job_queue`
// and hands a type's jobs to BullMQ in this order —
//   1. due only: `due_at <= now()` (run_at, a retry's time, or the creation time);
//   2. higher priority first;
//   3. within a priority, round-robin between the organizations that have due jobs, each org's oldest first, so a
//      backlog of one org delays another's job by about one job's run time, not by the backlog;
//   4. within each org's cap of jobs in flight per type (ORG_CONCURRENCY_LIMIT, 0 = none).
// Taking jobs is one "handed over" transition (job-machine/hand-over.ts) per take, which packs them into envelopes
// (docs/reference/lifecycle.md#envelopes: one BullMQ job carries many job ids, in the order they should start). The dispatcher then hands the
// envelopes to BullMQ; if BullMQ refuses, their jobs are returned to the line. A dispatcher that dies between the two
// leaves marked jobs Redis does not hold: the next leader returns them to the line at once (`recentHandOvers`), and
// the reconciler would in any case.
import type pg from "pg";
import { CONCURRENCY_LIMIT_MAX } from "@conveyor/contracts";
import { limitsColumns, toDispatchLimits, type DispatchLimits, type LimitsRow } from "./flow-control";
import { newId } from "../core/ids";
import { DUE_LATER } from "../core/job-sql";
import { dueCandidates, handOver, type Candidate } from "../job-machine/hand-over";

/** A job handed over; `traceParent` is its creating request's trace context, read only when the plan asks for it. */
export type DispatchCandidate = { jobId: string; orgId: string; type: string; traceParent?: string | null };

/** Jobs handed over together in one BullMQ job (docs/reference/lifecycle.md#envelopes), in the order they should start. */
export type DispatchedEnvelope = { id: string; type: string; jobs: DispatchCandidate[] };

/** Types that have due jobs waiting, in name order. */
export async function typesWithDueJobs(db: pg.Pool | pg.PoolClient): Promise<string[]> {
  // A loose index scan over job_queue_waiting_idx: one index probe per type, however long the backlog; then, per
  // type, a probe for one due row. That probe is a scalar subquery with LIMIT 1, not EXISTS: the planner turned an
  // EXISTS into a hash semi-join that read every due row of the waiting index to find the types.
  const { rows } = await db.query<{ type: string }>({
    name: "conveyor-types-with-due-jobs",
    text: `WITH RECURSIVE types(type) AS (
       (SELECT type FROM job_queue WHERE dispatched_at IS NULL ORDER BY type LIMIT 1)
       UNION ALL
       SELECT (SELECT q.type FROM job_queue q WHERE q.dispatched_at IS NULL AND q.type > t.type ORDER BY q.type LIMIT 1)
         FROM types t WHERE t.type IS NOT NULL
     )
     SELECT type FROM types t
      WHERE type IS NOT NULL
        AND (SELECT true FROM job_queue q WHERE q.type = t.type AND q.dispatched_at IS NULL AND q.due_at <= now() LIMIT 1)`,
  });
  return rows.map((r) => r.type);
}

/**
 * Milliseconds until the next waiting job falls due, if none is due now (job_queue_due_idx). Counted by Postgres'
 * clock, which is the one `due_at` is compared with.
 */
export async function msUntilNextDue(db: pg.Pool | pg.PoolClient): Promise<number | null> {
  const { rows } = await db.query<{ ms: number | null }>({
    name: "conveyor-next-due",
    text: `SELECT extract(epoch FROM min(q.due_at) - now()) * 1000 AS ms FROM job_queue q WHERE ${DUE_LATER("q", "now()")}`,
  });
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? null : Number(ms);
}

/** Jobs of `type` handed over and not finished (waiting in BullMQ or running), by organization. */
export async function jobsInFlight(db: pg.Pool | pg.PoolClient, type: string): Promise<Map<string, number>> {
  const { rows } = await db.query<{ org_id: string; n: string }>(
    "SELECT org_id, count(*) AS n FROM job_queue WHERE type = $1 AND dispatched_at IS NOT NULL GROUP BY org_id",
    [type],
  );
  return new Map(rows.map((r) => [r.org_id, Number(r.n)]));
}

/** The organizations with due jobs of one type, by priority (highest first), as the dispatcher last read them. */
export type DueWork = { priority: number; orgs: string[] }[];

/** Organizations read per priority level: a round serves at most this many (the rotation moves on). */
const ORGS_PER_LEVEL = 1_000;

/** What the dispatcher reads of a type before a take: its due work, and the limits holding the work's organizations. */
export type DueWorkAndLimits = { work: DueWork; limits: DispatchLimits };

/**
 * Which priorities and organizations have due jobs of `type` (loose index scans: one probe per level and org),
 * reading each level's orgs from the rotation's position `after` on and wrapping around, and the limits that hold
 * those organizations' jobs back (dispatchLimits) — in one round trip, since a lone job waits for each. The
 * dispatcher keeps the work between rounds while it drains a backlog and reads it again when woken (new jobs, the tick).
 */
export async function findDueWork(db: pg.Pool | pg.PoolClient, type: string, after: string | null, orgCap: number): Promise<DueWorkAndLimits> {
  // Each level's orgs: the first with due jobs after `after` (else, wrapping, the first of all), then each next one
  // (wrapping once at the end), up to ORGS_PER_LEVEL, and never past `after` once wrapped.
  const levelOrgs = (priority: string) => `FROM job_queue q WHERE q.type = $1 AND q.priority = ${priority} AND q.dispatched_at IS NULL AND q.due_at <= now()`;
  const { rows } = await db.query<LimitsRow & { work: { priority: number; org_id: string }[] | null }>({
    // Prepared once per connection (the dispatcher's): planning it costs more than running it.
    name: "conveyor-find-due-work",
    text: `WITH RECURSIVE levels(priority) AS (
       (SELECT priority FROM job_queue WHERE type = $1 AND dispatched_at IS NULL ORDER BY priority DESC LIMIT 1)
       UNION ALL
       SELECT (SELECT q.priority FROM job_queue q WHERE q.type = $1 AND q.dispatched_at IS NULL AND q.priority < l.priority ORDER BY q.priority DESC LIMIT 1)
         FROM levels l WHERE l.priority IS NOT NULL
     ), found AS MATERIALIZED (
       SELECT l.priority, o.org_id FROM levels l CROSS JOIN LATERAL (
         WITH RECURSIVE orgs(org_id, n, wrapped) AS (
           (SELECT f.org_id, 1, f.wrapped FROM (
              (SELECT q.org_id, false AS wrapped ${levelOrgs("l.priority")} AND q.org_id > $2::uuid ORDER BY q.org_id LIMIT 1)
              UNION ALL
              (SELECT q.org_id, true ${levelOrgs("l.priority")} ORDER BY q.org_id LIMIT 1)
            ) AS f LIMIT 1)
           UNION ALL
           SELECT x.org_id, o.n + 1, x.wrapped FROM orgs o CROSS JOIN LATERAL (
             (SELECT q.org_id, o.wrapped AS wrapped ${levelOrgs("l.priority")} AND q.org_id > o.org_id ORDER BY q.org_id LIMIT 1)
             UNION ALL
             (SELECT q.org_id, true ${levelOrgs("l.priority")} AND NOT o.wrapped ORDER BY q.org_id LIMIT 1)
             LIMIT 1
           ) AS x
           WHERE o.n < $3 AND NOT (x.wrapped AND $2::uuid IS NOT NULL AND x.org_id > $2::uuid)
         )
         SELECT org_id FROM orgs WHERE NOT (wrapped AND $2::uuid IS NOT NULL AND org_id > $2::uuid)
       ) AS o
       WHERE l.priority IS NOT NULL
     )
     SELECT (SELECT json_agg(json_build_object('priority', priority, 'org_id', org_id) ORDER BY priority DESC, org_id) FROM found) AS work,
            ${limitsColumns("ARRAY(SELECT DISTINCT org_id FROM found)")}`,
    values: [type, after, ORGS_PER_LEVEL],
  });
  const row = rows[0]!;
  const work: DueWork = [];
  for (const { priority, org_id } of row.work ?? []) {
    const level = work[work.length - 1];
    if (level?.priority === priority) level.orgs.push(org_id);
    else work.push({ priority, orgs: [org_id] });
  }
  return { work, limits: toDispatchLimits(row, orgsOf(work), orgCap) };
}

/** The organizations of `work`, each once: those its limits are read for. */
export function orgsOf(work: DueWork): string[] {
  return [...new Set(work.flatMap((level) => level.orgs))];
}

export type DispatchPlan = {
  type: string;
  /** What `findDueWork` found; organizations found without due jobs are removed from it. */
  work: DueWork;
  /** How many jobs to take at most. */
  room: number;
  /** Jobs of this type in flight per org, for the caps. */
  inFlightByOrg: Map<string, number>;
  /** What holds jobs back this round (dispatchLimits). */
  limits: DispatchLimits;
  /** Round-robin position: organizations after this id are served first. */
  after: string | null;
  /** Read each job's trace context with it (tracing on: the dispatcher makes the hand-over a span of the job's trace). */
  traceParents?: boolean;
  /** How many jobs an envelope carries when `taken` jobs are handed over at once (the dispatcher's sizing). */
  envelopeSize(taken: number): number;
};

/**
 * Takes up to `plan.room` due jobs of the plan's type, marks them handed over, and answers them in the order BullMQ
 * should run them: highest priority first, then round-robin across organizations (every org's oldest, then every
 * org's second oldest, …), starting after `plan.after` — skipping what a limit holds back: a paused queue, an org at
 * its cap, a full concurrency key, a spent rate limit (the job's own, its queue's, the type's deployment-wide one), a
 * type paused after a provider's 429 — each read by the stored function of "held back" that `conveyor_hold` composes
 * (docs/reference/flow-control.md#why-a-job-waits), and counted on here as this round chooses jobs.
 * A held job stays in line and never holds back the jobs behind it. `db` is the dispatcher's `handOverConnection`:
 * only one dispatcher takes at a time, so what it counts in flight is exact.
 */
export async function takeDueJobs(db: pg.Pool | pg.PoolClient, plan: DispatchPlan): Promise<DispatchedEnvelope[]> {
  const { limits } = plan;
  const inFlight = new Map(plan.inFlightByOrg);
  const keys = new Map(limits.keysInFlight);
  const allowance = new Map(limits.rateAllowance);
  let typeAllowance = limits.typeAllowance ?? Infinity;
  const capLeft = (org: string) => (limits.orgCaps.get(org) ?? Infinity) - (inFlight.get(org) ?? 0);
  const queueLimit = (org: string) => limits.queueRateLimits.get(org);
  const allowed = (org: string, name: string | undefined | null) => (name ? (allowance.get(`${org} ${name}`) ?? Infinity) : Infinity);
  // The start transition spends rate limits (and refuses a start the window has no room for); counting them here
  // only keeps from handing over jobs that would be sent back.
  const spend = (org: string, name: string | undefined | null) => {
    const key = `${org} ${name}`;
    if (name && allowance.has(key)) allowance.set(key, allowance.get(key)! - 1);
  };
  const chosen: Candidate[] = [];
  for (const level of plan.work) {
    const room = Math.min(plan.room, typeAllowance) - chosen.length;
    if (room <= 0) break;
    const orgs = rotate(level.orgs, plan.after).filter((org) => !limits.pausedOrgs.has(org) && capLeft(org) > 0 && allowed(org, queueLimit(org)) > 0);
    if (orgs.length === 0) continue;
    const share = Math.ceil(room / Math.min(orgs.length, room));
    const serving = orgs.slice(0, room);
    const shares = serving.map((org) => Math.max(0, Math.min(share, capLeft(org), allowed(org, queueLimit(org)))));
    const candidates = await dueCandidates(db, {
      type: plan.type,
      priority: level.priority,
      orgs: serving,
      shares,
      fullKeys: [...keys].flatMap(([key, n]) => (n >= CONCURRENCY_LIMIT_MAX ? [key] : [])),
      keysInFlight: [...keys],
      spentLimits: [...allowance].flatMap(([key, left]) => (left <= 0 ? [key] : [])),
    });
    // An org that gave fewer than its share has no more due jobs at this level it may start (until the work is read
    // again: new jobs, a finished job freeing a key, time passing).
    const given = new Map<string, number>();
    for (const row of candidates) given.set(row.orgId, (given.get(row.orgId) ?? 0) + 1);
    serving.forEach((org, i) => {
      if ((given.get(org) ?? 0) < shares[i]!) level.orgs.splice(level.orgs.indexOf(org), 1);
    });
    // Round-robin: rank each org's jobs by age, then take rank 1 of every org (in the rotation's order), rank 2, …
    const orgOrder = new Map(serving.map((org, i) => [org, i]));
    const rank = new Map<string, number>();
    const ranked = candidates
      .sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime() || (a.jobId < b.jobId ? -1 : 1))
      .map((row) => {
        const r = (rank.get(row.orgId) ?? 0) + 1;
        rank.set(row.orgId, r);
        return { row, r };
      })
      .sort((a, b) => a.r - b.r || orgOrder.get(a.row.orgId)! - orgOrder.get(b.row.orgId)!);
    for (const { row } of ranked) {
      if (chosen.length >= Math.min(plan.room, typeAllowance)) break;
      const keyId = row.concurrencyKey === null ? null : `${row.orgId} ${row.concurrencyKey}`;
      if (keyId !== null && (keys.get(keyId) ?? 0) >= (row.concurrencyLimit ?? 1)) continue;
      if (allowed(row.orgId, row.rateLimit) <= 0 || allowed(row.orgId, queueLimit(row.orgId)) <= 0 || capLeft(row.orgId) <= 0) continue;
      chosen.push(row);
      if (keyId !== null) keys.set(keyId, (keys.get(keyId) ?? 0) + 1);
      spend(row.orgId, row.rateLimit);
      if (queueLimit(row.orgId) !== row.rateLimit) spend(row.orgId, queueLimit(row.orgId));
      inFlight.set(row.orgId, (inFlight.get(row.orgId) ?? 0) + 1);
    }
    typeAllowance = limits.typeAllowance === null ? Infinity : limits.typeAllowance - chosen.length;
  }
  for (let i = plan.work.length - 1; i >= 0; i--) if (plan.work[i]!.orgs.length === 0) plan.work.splice(i, 1);
  if (chosen.length === 0) return [];
  const envelopes = pack(chosen, plan.envelopeSize(chosen.length)).map((jobs) => ({ id: newId(), jobs }));
  const marked = await handOver(
    db,
    envelopes.map((e) => ({ id: e.id, jobIds: e.jobs.map((c) => c.jobId) })),
    plan.traceParents,
  );
  // A job cancelled (or pushed back by a debounce) since it was chosen was not marked: its envelope goes without it.
  return envelopes.flatMap(({ id, jobs }) => {
    const handed = jobs.filter((row) => marked.has(row.jobId));
    return handed.length
      ? [{ id, type: plan.type, jobs: handed.map((row) => ({ jobId: row.jobId, orgId: row.orgId, type: plan.type, traceParent: marked.get(row.jobId) })) }]
      : [];
  });
}

/** `jobs` in order, cut into the fewest envelopes of at most `size`, as even as they can be (64 + 1 is 33 + 32). */
function pack<T>(jobs: readonly T[], size: number): T[][] {
  const count = Math.ceil(jobs.length / Math.max(1, size));
  const envelopes: T[][] = [];
  for (let i = 0, start = 0; i < count; i++) {
    const end = start + Math.ceil((jobs.length - start) / (count - i));
    envelopes.push(jobs.slice(start, end));
    start = end;
  }
  return envelopes;
}

/** `orgs` (in id order) starting after `after`, wrapping around. */
function rotate(orgs: string[], after: string | null): string[] {
  if (after === null) return orgs;
  const i = orgs.findIndex((org) => org > after);
  return i <= 0 ? orgs : [...orgs.slice(i), ...orgs.slice(0, i)];
}

/** A job Postgres says is in an envelope Redis should hold: handed over (pending) or running (processing). */
export type EnvelopedJob = { jobId: string; type: string; envelopeId: string; status: "pending" | "processing" };

/**
 * Jobs marked dispatched in the last `withinMs` that have not started, with their envelopes: what a dispatcher that
 * died between marking and handing over may have left. The new leader checks the envelopes against Redis.
 */
export async function recentHandOvers(db: pg.Pool | pg.PoolClient, withinMs: number): Promise<EnvelopedJob[]> {
  const { rows } = await db.query<{ job_id: string; type: string; envelope_id: string }>({
    name: "conveyor-recent-hand-overs",
    text: `SELECT q.job_id, q.type, q.envelope_id FROM job_queue q JOIN jobs j ON j.id = q.job_id
      WHERE q.dispatched_at > now() - $1 * interval '1 millisecond' AND q.envelope_id IS NOT NULL AND j.status = 'pending'
        -- Handed over to a worker-protocol lease (docs/reference/lifecycle.md#your-own-workers), not to Redis: its claim follows.
        AND NOT EXISTS (SELECT 1 FROM worker_leases l WHERE l.job_id = q.job_id)`,
    values: [withinMs],
  });
  return rows.map((r) => ({ jobId: r.job_id, type: r.type, envelopeId: r.envelope_id, status: "pending" }));
}
