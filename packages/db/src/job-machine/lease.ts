// Leases of the worker protocol (docs/reference/lifecycle.md#your-own-workers): an organization's own workers, in any language, run its jobs over HTTP.
// A lease is not a transition of its own: it is the dispatcher's decision and two existing transitions, in order —
//   1. which due jobs may start: findDueWork + takeDueJobs (../flow/dispatch.ts), the same "held back" definition,
//      priority, age order and limits as the built-in workers' hand-over, which marks them handed over (handOver);
//   2. "started": claimJobs (./start.ts) with the lease token as the attempt's fence, which re-checks pauses, rate
//      limits and cancellations exactly as a built-in worker's claim does;
// plus a row in worker_leases saying until when the token holds, written with the hand-over marks (so a job handed
// over to a lease is never mistaken for one a dispatcher lost before Redis had it). A lapsed lease (its worker died, or stopped
// heartbeating) is taken over by the next lease call of the organization for that type: claimJobs again, which counts
// the lost attempt as an interruption, as for a killed built-in worker. Outcomes, steps, sleeps and waits are the job
// machine's own transitions under the token (finish.ts, steps.ts, suspend.ts); this file only keeps the lease rows.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { inTransaction } from "../core/transaction";
import { findDueWork, jobsInFlight, takeDueJobs } from "../flow/dispatch";
import { returnToLine } from "./hand-over";
import { claimJobs, type ClaimedJob, type ClaimWait } from "./start";

/**
 * How long past its expiry a lease is left alone before it is taken over: a call that found its lease valid has at
 * least this long to record what it came to record (the check and the write are two statements).
 */
export const LEASE_TAKE_OVER_GRACE_MS = 2_000;

export type LeaseRequest = {
  orgId: string;
  /** The organization's own types the worker serves (checked by the caller). */
  types: readonly string[];
  max: number;
  workerId: string;
  leaseMs: number;
};

/** A step an earlier attempt of a leased job recorded (the lease answer's replay), with a wait's waitpoint. */
export type LeaseStep = { name: string; kind: string; status: string; result: unknown; waitpoint_id: string | null; wake_at: Date | null };

export type LeasedJob = ClaimedJob & { leaseToken: string; leaseExpiresAt: Date; steps: LeaseStep[] };

const newLeaseToken = () => `lt_${randomBytes(24).toString("base64url")}`;

/** What one lease attempt found: the jobs started, and whether another caller was taking the same types meanwhile. */
export type LeaseAttempt = { jobs: LeasedJob[]; contended: boolean };

/**
 * Leases up to `max` jobs of the organization's `types` to one worker: lapsed leases first (taken over), then due jobs
 * in the dispatcher's order. An attempt that finds nothing costs one indexed read (no transaction, no lock), so idle
 * polls cost Postgres little; a type another caller is taking right now is skipped (`contended`), never waited for
 * while holding a connection.
 */
export async function leaseJobs(pool: pg.Pool, request: LeaseRequest, woken?: { types: readonly string[] }): Promise<LeaseAttempt> {
  if (request.max <= 0 || request.types.length === 0) return { jobs: [], contended: false };
  // Woken by new jobs of some of its types (their insert's NOTIFY): those are due, and the probe's round trip is
  // skipped — a lone job's latency. Lapsed leases are looked for by the next attempt that was not woken so.
  const probe = woken?.types.length ? [{ lapsed: false, due: request.types.filter((t) => woken.types.includes(t)) }] : await probeLeasable(pool, request);
  const { lapsed: anyLapsed, due } = probe[0]!;
  const leased: LeasedJob[] = [];
  let contended = false;
  // 1. Lapsed leases: their tokens are replaced in one statement (SKIP LOCKED: two callers never take the same one),
  // so the old holder's calls answer 409 from now on; then the start transition takes the attempt over.
  if (anyLapsed) {
    const tokens = Array.from({ length: request.max }, newLeaseToken);
    const { rows: lapsed } = await pool.query<{ job_id: string; token: string; expires_at: Date }>(
      `WITH picked AS (
         SELECT job_id FROM worker_leases
          WHERE org_id = $1 AND type = ANY($2::text[]) AND expires_at < now() - ${LEASE_TAKE_OVER_GRACE_MS} * interval '1 millisecond'
          ORDER BY expires_at LIMIT $3 FOR UPDATE SKIP LOCKED
       ), numbered AS (
         SELECT job_id, row_number() OVER () AS n FROM picked
       )
       UPDATE worker_leases l SET token = ($6::text[])[n.n], worker_id = $4, expires_at = now() + $5 * interval '1 millisecond'
         FROM numbered n WHERE l.job_id = n.job_id
       RETURNING l.job_id, l.token, l.expires_at`,
      [request.orgId, request.types, request.max, request.workerId, request.leaseMs, tokens],
    );
    if (lapsed.length)
      leased.push(
        ...(await start(
          pool,
          request,
          lapsed.map((r) => ({ id: r.job_id, fence: r.token, expiresAt: r.expires_at })),
        )),
      );
  }
  // 2. Due jobs, type by type, while there is room. Takes of one organization's type are serialized (a transaction
  // lock, tried: a caller finding it taken moves on), so what they count in flight for concurrency keys and caps is
  // exact, as the one dispatcher's is.
  for (const type of due) {
    const room = request.max - leased.length;
    if (room <= 0) break;
    const handed = await inTransaction(pool, async (tx) => {
      const { rows: lock } = await tx.query<{ locked: boolean }>(
        // The hand-over marks need no durable commit (a mark lost in a crash is a job handed over again: the dispatcher's
        // marks are written the same way); the claim that follows commits durably, and with it what came before.
        "SELECT set_config('synchronous_commit', 'off', true), pg_try_advisory_xact_lock(hashtextextended('conveyor_lease ' || $1 || ' ' || $2, 0)) AS locked",
        [request.orgId, type],
      );
      if (!lock[0]!.locked) {
        contended = true;
        return [];
      }
      const found = await findDueWork(tx, type, null, 0);
      // Another organization may have a type of the same name: only this one's jobs are leased here.
      const work = found.work.flatMap((level) => (level.orgs.includes(request.orgId) ? [{ priority: level.priority, orgs: [request.orgId] }] : []));
      if (work.length === 0 || found.limits.typePausedUntil) return [];
      const envelopes = await takeDueJobs(tx, {
        type,
        work,
        room,
        inFlightByOrg: found.limits.orgCaps.size > 0 ? await jobsInFlight(tx, type) : new Map<string, number>(),
        limits: found.limits,
        after: null,
        envelopeSize: (taken) => taken,
      });
      const ids = envelopes.flatMap((e) => e.jobs.map((j) => j.jobId));
      // The lease rows go in with the hand-over marks, in the same transaction: a job handed over to a lease is never
      // one "handed over but in no envelope Redis holds" (a new dispatcher leader's recovery and the reconciler leave
      // jobs with a lease row alone), and the lease needs no statement of its own after the claim.
      return writeLeases(
        tx,
        request,
        ids.map((id) => ({ id, type, fence: newLeaseToken() })),
      );
    });
    if (handed.length === 0) continue;
    leased.push(...(await start(pool, request, handed)));
  }
  return { jobs: leased, contended };
}

/** Whether a lease of the organization's `types` lapsed (past the grace), and which of them have due jobs: one indexed read. */
async function probeLeasable(pool: pg.Pool, request: LeaseRequest): Promise<{ lapsed: boolean; due: string[] }[]> {
  const { rows } = await pool.query<{ lapsed: boolean; due: string[] }>(
    `SELECT EXISTS (SELECT 1 FROM worker_leases WHERE org_id = $1 AND type = ANY($2::text[])
                      AND expires_at < now() - ${LEASE_TAKE_OVER_GRACE_MS} * interval '1 millisecond') AS lapsed,
            -- One due row probed per type: a scalar subquery with LIMIT 1, not EXISTS, which the planner ran as a semi-join
            -- reading every due row of the organization (as typesWithDueJobs did, flow/dispatch.ts).
            ARRAY(SELECT t FROM unnest($2::text[]) AS t
                   WHERE (SELECT true FROM job_queue q WHERE q.type = t AND q.org_id = $1 AND q.dispatched_at IS NULL AND q.due_at <= now() LIMIT 1)) AS due`,
    [request.orgId, request.types],
  );
  return rows;
}

type HandedToLease = { id: string; fence: string; expiresAt: Date };

/** Lease rows for jobs just handed over to `request`'s worker (or taken over from a lapsed lease: a new token). */
async function writeLeases(db: pg.Pool | pg.PoolClient, request: LeaseRequest, jobs: { id: string; type: string; fence: string }[]): Promise<HandedToLease[]> {
  if (jobs.length === 0) return [];
  const { rows } = await db.query<{ job_id: string; token: string; expires_at: Date }>(
    `INSERT INTO worker_leases (job_id, org_id, type, token, worker_id, expires_at)
     SELECT t.job_id, $1, t.type, t.token, $2, now() + $3 * interval '1 millisecond'
       FROM unnest($4::uuid[], $5::text[], $6::text[]) AS t(job_id, type, token)
     ON CONFLICT (job_id) DO UPDATE SET token = EXCLUDED.token, worker_id = EXCLUDED.worker_id, expires_at = EXCLUDED.expires_at, type = EXCLUDED.type
     RETURNING job_id, token, expires_at`,
    [request.orgId, request.workerId, request.leaseMs, jobs.map((j) => j.id), jobs.map((j) => j.type), jobs.map((j) => j.fence)],
  );
  return rows.map((r) => ({ id: r.job_id, fence: r.token, expiresAt: r.expires_at }));
}

/**
 * The start transition for jobs handed over to this lease (their lease rows written). A claim asked to wait goes back
 * in line, and a job not started (cancelled meanwhile, or waiting) loses its lease row.
 */
async function start(pool: pg.Pool, request: LeaseRequest, handed: HandedToLease[]): Promise<LeasedJob[]> {
  // The steps earlier attempts recorded are read beside the claim, not after it (a lone job's latency): nothing writes
  // a handed-over job's steps meanwhile, and a lapsed lease's old holder was fenced out past the take-over grace.
  const [answers, steps] = await Promise.all([
    claimJobs(pool, handed),
    readLeaseSteps(
      pool,
      handed.map((h) => h.id),
    ),
  ]);
  const waits = answers.filter((a): a is ClaimWait => "retryAt" in a);
  // A rate limit's window frees in a moment: back in line (the next lease call takes it), rather than hold the caller.
  if (waits.length)
    await returnToLine(
      pool,
      waits.map((w) => w.id),
    );
  const claimed = answers.filter((a): a is ClaimedJob => !("retryAt" in a));
  const started = new Set(claimed.map((c) => c.id));
  const unstarted = handed.filter((h) => !started.has(h.id));
  if (unstarted.length)
    await dropLeases(
      pool,
      unstarted.map((h) => h.id),
      unstarted.map((h) => h.fence),
    );
  const byId = new Map(handed.map((h) => [h.id, h]));
  return claimed.map((c) => ({ ...c, leaseToken: byId.get(c.id)!.fence, leaseExpiresAt: byId.get(c.id)!.expiresAt, steps: steps.get(c.id) ?? [] }));
}

/** A lease as a protocol call finds it: live (its token current, not lapsed, the job still running under it). */
export type LiveLease = {
  jobId: string;
  orgId: string;
  type: string;
  retries: number;
  maxRetries: number;
  cancelRequested: boolean;
  expiresAt: Date;
};

/**
 * The live lease of `jobId` under `token` in `orgId`, extended by `extendMs` when given (a heartbeat); null when the
 * token is not the job's current, live lease (lapsed, superseded, or the job has ended or moved on).
 */
export async function liveLease(
  db: pg.Pool | pg.PoolClient,
  lease: { orgId: string; jobId: string; token: string; extendMs?: number },
): Promise<LiveLease | null> {
  const { rows } = await db.query<{
    job_id: string;
    org_id: string;
    type: string;
    retries: number;
    max_retries: number;
    cancel_requested: boolean;
    expires_at: Date;
  }>(
    `WITH live AS (
       SELECT l.job_id, l.org_id, l.type, j.retries, j.max_retries, j.cancel_requested_at IS NOT NULL AS cancel_requested, l.expires_at
         FROM worker_leases l JOIN jobs j ON j.id = l.job_id AND j.fence = l.token AND j.status = 'processing'
        WHERE l.job_id = $1 AND l.token = $2 AND l.org_id = $3 AND l.expires_at > now()
     ), extended AS (
       UPDATE worker_leases l SET expires_at = now() + $4::double precision * interval '1 millisecond' FROM live WHERE $4::double precision IS NOT NULL AND l.job_id = live.job_id
       RETURNING l.expires_at
     )
     SELECT live.job_id, live.org_id, live.type, live.retries, live.max_retries, live.cancel_requested,
            coalesce((SELECT expires_at FROM extended), live.expires_at) AS expires_at
       FROM live`,
    [lease.jobId, lease.token, lease.orgId, lease.extendMs ?? null],
  );
  const r = rows[0];
  return r
    ? {
        jobId: r.job_id,
        orgId: r.org_id,
        type: r.type,
        retries: r.retries,
        maxRetries: r.max_retries,
        cancelRequested: r.cancel_requested,
        expiresAt: r.expires_at,
      }
    : null;
}

/** The live leases among `leases` (each its org, job and token), in one statement: what a batch of reports checks. */
export async function liveLeases(
  db: pg.Pool | pg.PoolClient,
  leases: readonly { orgId: string; jobId: string; token: string }[],
): Promise<Map<string, LiveLease>> {
  if (leases.length === 0) return new Map();
  const { rows } = await db.query<{
    job_id: string;
    org_id: string;
    type: string;
    retries: number;
    max_retries: number;
    cancel_requested: boolean;
    expires_at: Date;
    token: string;
  }>(
    `SELECT l.job_id, l.org_id, l.type, j.retries, j.max_retries, j.cancel_requested_at IS NOT NULL AS cancel_requested, l.expires_at, l.token
       FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS t(org_id, job_id, token)
       JOIN worker_leases l ON l.job_id = t.job_id AND l.token = t.token AND l.org_id = t.org_id AND l.expires_at > now()
       JOIN jobs j ON j.id = l.job_id AND j.fence = l.token AND j.status = 'processing'
      WHERE l.job_id = ANY($2::uuid[])`,
    [leases.map((l) => l.orgId), leases.map((l) => l.jobId), leases.map((l) => l.token)],
  );
  return new Map(
    rows.map((r) => [
      `${r.job_id} ${r.token}`,
      {
        jobId: r.job_id,
        orgId: r.org_id,
        type: r.type,
        retries: r.retries,
        maxRetries: r.max_retries,
        cancelRequested: r.cancel_requested,
        expiresAt: r.expires_at,
      },
    ]),
  );
}

/** Ends leases whose attempt ended (an outcome, a sleep, a wait): only under their own token. */
export async function dropLeases(db: pg.Pool | pg.PoolClient, jobIds: readonly string[], tokens: readonly string[]): Promise<void> {
  if (jobIds.length === 0) return;
  await db.query("DELETE FROM worker_leases l USING unnest($1::uuid[], $2::text[]) AS t(job_id, token) WHERE l.job_id = t.job_id AND l.token = t.token", [
    jobIds,
    tokens,
  ]);
}

/**
 * Milliseconds until a lease call of the organization for `types` could find work it cannot find now (by Postgres'
 * clock): the earliest due time of a waiting job, or the lapse (plus the grace) of a lease. Null when nothing waits
 * (only a new job wakes the caller then).
 */
export async function msUntilLeasable(db: pg.Pool | pg.PoolClient, orgId: string, types: readonly string[]): Promise<number | null> {
  const { rows } = await db.query<{ ms: number | null }>(
    `SELECT extract(epoch FROM least(
       (SELECT min(due_at) FROM job_queue WHERE org_id = $1 AND type = ANY($2::text[]) AND dispatched_at IS NULL),
       (SELECT min(expires_at) + ${LEASE_TAKE_OVER_GRACE_MS} * interval '1 millisecond' FROM worker_leases WHERE org_id = $1 AND type = ANY($2::text[]))
     ) - now()) * 1000 AS ms`,
    [orgId, types],
  );
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? null : Math.max(0, Number(ms));
}

/** The stored steps of several jobs (the lease answer's replay), with a wait's waitpoint status and data. */
async function readLeaseSteps(db: pg.Pool | pg.PoolClient, jobIds: readonly string[]): Promise<Map<string, LeaseStep[]>> {
  const byJob = new Map<string, LeaseStep[]>();
  if (jobIds.length === 0) return byJob;
  const { rows } = await db.query<{
    job_id: string;
    name: string;
    kind: string;
    status: string;
    result: unknown;
    waitpoint_id: string | null;
    wake_at: Date | null;
  }>(
    `SELECT s.job_id, s.name, s.kind, s.status, s.result, s.waitpoint_id, s.wake_at FROM job_steps s WHERE s.job_id = ANY($1::uuid[]) ORDER BY s.job_id, s.started_at, s.name`,
    [jobIds],
  );
  for (const r of rows) {
    const list = byJob.get(r.job_id) ?? [];
    list.push({ name: r.name, kind: r.kind, status: r.status, result: r.result, waitpoint_id: r.waitpoint_id, wake_at: r.wake_at });
    byJob.set(r.job_id, list);
  }
  return byJob;
}
