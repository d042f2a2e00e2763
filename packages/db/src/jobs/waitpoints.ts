// Waitpoints (docs/reference/lifecycle.md#waitpoints-and-durable-steps): points jobs wait on until someone completes them. A waitpoint's end — completed, expired
// or cancelled — writes its event and settles the jobs waiting on it (job-machine/dependencies.ts) in one
// transaction, as a job's final transition does: completed counts as a dependency done, expired or cancelled as one
// failed. Every change is a conditional update of a waiting row, so of concurrent completions, an expiry and a
// cancellation exactly one wins and the others see what it left: the row their `target` CTE's FOR UPDATE returned
// once the winner let go of it (the winner's version), never a read of the statement's snapshot (still waiting), which
// made a loser of identical concurrent completions answer 409 against a row it saw waiting.
import type pg from "pg";
import type { WaitpointStatus } from "@conveyor/contracts";
import { EVENTS_CHANNEL, EVENT_BASE, iso } from "../core/job-sql";
import { settleDependents } from "../job-machine/dependencies";
import { inTransaction } from "../core/transaction";

/** A waitpoint as the API shows it (GET /waitpoints/{id}), rendered by Postgres in the statement that read it. */
export type WaitpointJson = {
  id: string;
  status: WaitpointStatus;
  description: string | null;
  tags: string[];
  data: unknown;
  job_id: string | null;
  expires_at: string;
  finished_at: string | null;
  created_at: string;
};

/** The SQL of a waitpoint row `w` as WaitpointJson. */
export const waitpointJson = (w: string) =>
  `json_build_object('id', ${w}.id, 'status', ${w}.status, 'description', ${w}.description, 'tags', coalesce(${w}.tags, '{}'),
     'data', ${w}.data, 'job_id', ${w}.job_id, 'expires_at', ${iso(`${w}.expires_at`)}, 'finished_at', ${iso(`${w}.finished_at`)},
     'created_at', ${iso(`${w}.created_at`)})`;

/** The event type of a waitpoint's end. */
const EVENT_OF_END = { completed: "waitpoint.completed", expired: "waitpoint.expired", cancelled: "waitpoint.cancelled" } as const;

/**
 * CTEs after `ended` (waitpoint rows that just ended, as they are now): each one's event, and a notification for the
 * event readers. For use after EVENT_BASE.
 */
const announceEnds = `announced AS (
       INSERT INTO events (id, org_id, job_id, type, time, data)
       SELECT e.base + row_number() OVER (ORDER BY x.id), x.org_id, x.id,
              CASE x.status ${Object.entries(EVENT_OF_END)
                .map(([status, event]) => `WHEN '${status}' THEN '${event}'`)
                .join(" ")} END, now(), ${waitpointJson("x")}::jsonb
         FROM ended x CROSS JOIN event_base e
     ), notified AS (
       SELECT pg_notify('${EVENTS_CHANNEL}', '') FROM (SELECT 1 FROM ended LIMIT 1) AS any_ended
     )`;

export type NewWaitpoint = {
  id: string;
  orgId: string;
  tokenHash: Buffer;
  timeoutSeconds: number;
  description: string | null;
  tags: readonly string[];
  /** The job whose ctx.waitFor made it. */
  jobId?: string | null;
};

export type WaitpointInsert = { created: true; waitpoint: WaitpointJson } | { created: false; waitpoint: WaitpointJson; requestHash: Buffer | null };

/**
 * Inserts a waitpoint (expiring `timeoutSeconds` after now, by Postgres' clock). With an idempotency key: of
 * requests with one key within `ttlMs`, the first creates and the others get its waitpoint (and the hash of its
 * request, for the caller to compare); a key older than that is taken over.
 */
export async function insertWaitpoint(
  db: pg.Pool | pg.PoolClient,
  wp: NewWaitpoint,
  idempotency?: { key: string; requestHash: Buffer; ttlMs: number },
): Promise<WaitpointInsert> {
  for (;;) {
    const { rows } = await db.query<{ json: WaitpointJson }>(
      `INSERT INTO waitpoints AS w (id, org_id, status, description, tags, token_hash, expires_at, job_id, idempotency_key, request_hash, created_at)
       VALUES ($1, $2, 'waiting', $3, $4::text[], $5, now() + $6 * interval '1 second', $7, $8, $9, now())
       ON CONFLICT (org_id, idempotency_key) DO NOTHING
       RETURNING ${waitpointJson("w")} AS json`,
      [wp.id, wp.orgId, wp.description, wp.tags, wp.tokenHash, wp.timeoutSeconds, wp.jobId ?? null, idempotency?.key ?? null, idempotency?.requestHash ?? null],
    );
    if (rows[0]) return { created: true, waitpoint: rows[0].json };
    const existing = await db.query<{ json: WaitpointJson; request_hash: Buffer | null; stale: boolean }>(
      `SELECT ${waitpointJson("w")} AS json, w.request_hash, w.created_at <= now() - $3 * interval '1 millisecond' AS stale
         FROM waitpoints w WHERE w.org_id = $1 AND w.idempotency_key = $2`,
      [wp.orgId, idempotency!.key, idempotency!.ttlMs],
    );
    const row = existing.rows[0];
    if (!row) continue; // Taken over meanwhile: try again.
    if (!row.stale) return { created: false, waitpoint: row.json, requestHash: row.request_hash };
    // An expired key: the old waitpoint lets go of it.
    await db.query(`UPDATE waitpoints SET idempotency_key = NULL WHERE org_id = $1 AND idempotency_key = $2 AND id = $3`, [
      wp.orgId,
      idempotency!.key,
      row.json.id,
    ]);
  }
}

/**
 * Inserts waitpoints without idempotency keys in one statement (a batch's, POST /jobs/batch: `db` is the graph's
 * transaction, so they commit with the jobs that depend on them), each expiring `timeoutSeconds` after now by
 * Postgres' clock. Answers them in the order given.
 */
export async function insertWaitpoints(db: pg.Pool | pg.PoolClient, wps: readonly NewWaitpoint[]): Promise<WaitpointJson[]> {
  if (wps.length === 0) return [];
  const { rows } = await db.query<{ json: WaitpointJson; n: number }>(
    `WITH given AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::bytea[], $6::int[]) WITH ORDINALITY
         AS g(id, org_id, description, tags, token_hash, timeout_seconds, n)
     ), made AS (
       INSERT INTO waitpoints AS w (id, org_id, status, description, tags, token_hash, expires_at, created_at)
       SELECT g.id, g.org_id, 'waiting', g.description, coalesce(g.tags::text[], '{}'), g.token_hash, now() + g.timeout_seconds * interval '1 second', now()
         FROM given g ORDER BY g.n
       RETURNING w.*
     )
     SELECT ${waitpointJson("w")} AS json, g.n FROM made w JOIN given g ON g.id = w.id ORDER BY g.n`,
    [
      wps.map((w) => w.id),
      wps.map((w) => w.orgId),
      wps.map((w) => w.description),
      // Each tag list as a Postgres array literal: unnest cannot take an array of arrays of different lengths.
      wps.map((w) => `{${w.tags.map((t) => `"${t.replace(/["\\]/g, (c) => `\\${c}`)}"`).join(",")}}`),
      wps.map((w) => w.tokenHash),
      wps.map((w) => w.timeoutSeconds),
    ],
  );
  return rows.map((r) => r.json);
}

/** The org's waitpoint, or null (another org's is null too). */
export async function findWaitpoint(db: pg.Pool | pg.PoolClient, orgId: string, id: string): Promise<WaitpointJson | null> {
  const { rows } = await db.query<{ json: WaitpointJson }>(`SELECT ${waitpointJson("w")} AS json FROM waitpoints w WHERE w.id = $1 AND w.org_id = $2`, [
    id,
    orgId,
  ]);
  return rows[0]?.json ?? null;
}

/** Which of `ids` are the org's waitpoints. */
export async function findOrgWaitpoints(db: pg.Pool | pg.PoolClient, orgId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM waitpoints WHERE org_id = $1 AND id = ANY($2::uuid[])`, [orgId, ids]);
  return rows.map((r) => r.id);
}

/** One page of the org's waitpoints, newest first (ids are UUID v7), after the cursor's id. */
export async function listWaitpoints(
  db: pg.Pool | pg.PoolClient,
  orgId: string,
  filter: { status?: WaitpointStatus; tag?: string; before?: string; limit: number },
): Promise<WaitpointJson[]> {
  const { rows } = await db.query<{ json: WaitpointJson }>(
    `SELECT ${waitpointJson("w")} AS json FROM waitpoints w
      WHERE w.org_id = $1 AND ($2::text IS NULL OR w.status = $2) AND ($3::text IS NULL OR $3 = ANY(w.tags)) AND ($4::uuid IS NULL OR w.id < $4)
      ORDER BY w.id DESC LIMIT $5`,
    [orgId, filter.status ?? null, filter.tag ?? null, filter.before ?? null, filter.limit],
  );
  return rows.map((r) => r.json);
}

/** Who ended a waitpoint (stored in finished_by). */
export type WaitpointActor = { type: "user" | "api_key" | "job"; id: string } | { type: "token" | "system" };
const actorText = (actor: WaitpointActor) => ("id" in actor ? `${actor.type}:${actor.id}` : actor.type);

export type Completion =
  /** This call completed it. */
  | { outcome: "completed"; waitpoint: WaitpointJson }
  /** It was completed before with the same data (a repeat): the same waitpoint. */
  | { outcome: "repeated"; waitpoint: WaitpointJson }
  /** It was completed before with other data, or has expired or was cancelled. */
  | { outcome: "conflict"; waitpoint: WaitpointJson }
  | { outcome: "not_found" };

/**
 * Completes a waiting waitpoint with `dataJson` (JSON text), found by id in the org or by the hash of its token:
 * its event and the settling of the jobs waiting on it commit with it. A waiting one past its expiry is expired here
 * instead (what the expiry loop would do) and answers conflict: completion and expiry end in one state.
 */
export async function completeWaitpoint(
  pool: pg.Pool,
  target: { orgId: string; id: string } | { tokenHash: Buffer },
  dataJson: string,
  actor: WaitpointActor,
  /** Runs in the transaction once this call has completed it (an audit entry). */
  onCompleted?: (tx: pg.PoolClient, waitpoint: WaitpointJson) => Promise<void>,
): Promise<Completion> {
  const where = "tokenHash" in target ? "w.token_hash = $1" : "w.id = $1 AND w.org_id = $2";
  const key: unknown[] = "tokenHash" in target ? [target.tokenHash, null] : [target.id, target.orgId];
  return inTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: string; status: WaitpointStatus; json: WaitpointJson; same: boolean; ended_here: boolean }>(
      `WITH ${EVENT_BASE}, target AS (
         SELECT w.* FROM waitpoints w WHERE ${where} AND ($2::uuid IS NULL OR w.org_id = $2) FOR UPDATE
       ), ended AS (
         UPDATE waitpoints w
            SET status = CASE WHEN w.expires_at <= now() THEN 'expired' ELSE 'completed' END,
                data = CASE WHEN w.expires_at <= now() THEN NULL ELSE $3::jsonb END,
                finished_at = now(),
                finished_by = CASE WHEN w.expires_at <= now() THEN 'system' ELSE $4 END
           FROM target t WHERE w.id = t.id AND w.status = 'waiting'
         RETURNING w.*
       ), ${announceEnds}
       SELECT w.id, w.status, ${waitpointJson("w")} AS json, w.data = $3::jsonb AS same, true AS ended_here, (SELECT count(*) FROM notified) AS n
         FROM ended w
       UNION ALL
       SELECT w.id, w.status, ${waitpointJson("w")} AS json, coalesce(w.data = $3::jsonb, false), false, 0
         FROM target w WHERE NOT EXISTS (SELECT 1 FROM ended)`,
      [...key, dataJson, actorText(actor)],
    );
    const row = rows[0];
    if (!row) return { outcome: "not_found" };
    // Only one half of the statement answers: the row this call ended, or the row as another left it.
    if (row.ended_here) {
      await settleDependents(tx, [row.id]);
      if (row.status === "completed") {
        await onCompleted?.(tx, row.json);
        return { outcome: "completed", waitpoint: row.json };
      }
      return { outcome: "conflict", waitpoint: row.json };
    }
    if (row.status === "completed" && row.same) return { outcome: "repeated", waitpoint: row.json };
    return { outcome: "conflict", waitpoint: row.json };
  });
}

export type Cancellation = { outcome: "cancelled" | "conflict"; waitpoint: WaitpointJson } | { outcome: "not_found" };

/** Cancels the org's waiting waitpoint (its waiting jobs count it as a failed dependency); a final one is a conflict. */
export async function cancelWaitpoint(
  pool: pg.Pool,
  orgId: string,
  id: string,
  actor: WaitpointActor,
  onCancelled?: (tx: pg.PoolClient, waitpoint: WaitpointJson) => Promise<void>,
): Promise<Cancellation> {
  return inTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ json: WaitpointJson; ended_here: boolean }>(
      `WITH ${EVENT_BASE}, target AS (
         SELECT w.* FROM waitpoints w WHERE w.id = $1 AND w.org_id = $2 FOR UPDATE
       ), ended AS (
         UPDATE waitpoints w
            SET status = CASE WHEN w.expires_at <= now() THEN 'expired' ELSE 'cancelled' END, finished_at = now(),
                finished_by = CASE WHEN w.expires_at <= now() THEN 'system' ELSE $3 END
           FROM target t WHERE w.id = t.id AND w.status = 'waiting'
         RETURNING w.*
       ), ${announceEnds}
       SELECT ${waitpointJson("w")} AS json, true AS ended_here, (SELECT count(*) FROM notified) AS n FROM ended w
       UNION ALL
       SELECT ${waitpointJson("w")} AS json, false, 0 FROM target w WHERE NOT EXISTS (SELECT 1 FROM ended)`,
      [id, orgId, actorText(actor)],
    );
    const row = rows[0];
    if (!row) return { outcome: "not_found" };
    if (!row.ended_here) return { outcome: "conflict", waitpoint: row.json };
    await settleDependents(tx, [row.json.id]);
    if (row.json.status !== "cancelled") return { outcome: "conflict", waitpoint: row.json };
    await onCancelled?.(tx, row.json);
    return { outcome: "cancelled", waitpoint: row.json };
  });
}

/**
 * Expires up to `limit` waiting waitpoints whose time has passed (the leader's loop, apps/worker/src/maintenance/
 * waitpoint-expiry.ts): their events and the settling of the jobs waiting on them commit with them. Rows another
 * transaction holds (a completion under way) are skipped: that one decides, and a late completion expires it itself.
 */
export async function expireWaitpoints(pool: pg.Pool, limit: number): Promise<string[]> {
  return inTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      `WITH ${EVENT_BASE}, due AS (
         SELECT w.id FROM waitpoints w WHERE w.status = 'waiting' AND w.expires_at <= now()
          ORDER BY w.id LIMIT $1 FOR UPDATE SKIP LOCKED
       ), ended AS (
         UPDATE waitpoints w SET status = 'expired', finished_at = now(), finished_by = 'system'
           FROM due d WHERE w.id = d.id AND w.status = 'waiting'
         RETURNING w.*
       ), ${announceEnds}
       SELECT id, (SELECT count(*) FROM notified) AS n FROM ended`,
      [limit],
    );
    const ids = rows.map((r) => r.id);
    if (ids.length) await settleDependents(tx, ids);
    return ids;
  });
}

/** When the next waiting waitpoint expires (null when none waits): how long the expiry loop may sleep. */
export async function nextWaitpointExpiry(db: pg.Pool): Promise<Date | null> {
  const { rows } = await db.query<{ at: Date | null }>(`SELECT min(expires_at) AS at FROM waitpoints WHERE status = 'waiting'`);
  return rows[0]?.at ?? null;
}
