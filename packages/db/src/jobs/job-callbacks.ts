// Data access behind M-Pesa STK pushes (docs/reference/lifecycle.md#waitpoints-and-durable-steps "Dogfood"). A push's callback is a waitpoint: the worker makes one
// (with the job's id, and the SHA-256 of the secret in the push's CallBackURL as its token hash) in a durable step
// before it pushes, and waits for it with ctx.waitFor; Safaricom's callback, authenticated by that secret, completes
// it with the payment's outcome. Completion, its event and the release of the waiting job are the waitpoint's
// (waitpoints.ts): nothing here changes a job's status.
import type pg from "pg";
import type { LogLevel } from "@conveyor/contracts";
import { newId } from "../core/ids";
import { amendResult } from "../job-machine/amend";
import { cancelWaitpoint, completeWaitpoint, findWaitpoint, insertWaitpoint } from "./waitpoints";

/** The description and tag of a push's callback waitpoint (the console lists them among the org's waitpoints). */
const STK_CALLBACK_DESCRIPTION = "M-Pesa STK push callback";
const STK_CALLBACK_TAG = "mobile_money_stk";

/** Makes the waitpoint a push's callback completes; its token hash is the hash of the CallBackURL's secret. */
async function createStkCallbackWaitpoint(pool: pg.Pool, w: { jobId: string; orgId: string; secretHash: Buffer; timeoutSeconds: number }): Promise<string> {
  const id = newId();
  await insertWaitpoint(pool, {
    id,
    orgId: w.orgId,
    jobId: w.jobId,
    tokenHash: w.secretHash,
    timeoutSeconds: w.timeoutSeconds,
    description: STK_CALLBACK_DESCRIPTION,
    tags: [STK_CALLBACK_TAG],
  });
  return id;
}

/** A push Daraja refused will never be called back: its waitpoint is cancelled (nothing waits on it yet). */
async function cancelStkCallbackWaitpoint(pool: pg.Pool, w: { orgId: string; jobId: string; waitpointId: string }): Promise<void> {
  await cancelWaitpoint(pool, w.orgId, w.waitpointId, { type: "job", id: w.jobId });
}

/** The two writes above, bound to one pool: what the worker hands to the mobile_money_stk handler. */
export function stkCallbackStore(pool: pg.Pool) {
  return {
    createWaitpoint: (w: { jobId: string; orgId: string; secretHash: Buffer; timeoutSeconds: number }) => createStkCallbackWaitpoint(pool, w),
    cancelWaitpoint: (w: { orgId: string; jobId: string; waitpointId: string }) => cancelStkCallbackWaitpoint(pool, w),
  };
}

/** Whether `secretHash` is the callback secret of one of the job's pushes. */
export async function isStkCallbackSecret(pool: pg.Pool, jobId: string, secretHash: Buffer): Promise<boolean> {
  const { rowCount } = await pool.query(`SELECT 1 FROM waitpoints WHERE token_hash = $1 AND job_id = $2::uuid`, [secretHash, jobId]);
  return rowCount === 1;
}

/**
 * What a push's callback completes its waitpoint with (ctx.waitFor's answer to the handler): the push it names,
 * `result.callback`, and the job's log line about it.
 */
type StkCallbackData = { checkout_request_id: string; callback: Record<string, unknown>; log: { level: LogLevel; message: string } };

export type JobCallbackInput = {
  jobId: string;
  /** SHA-256 of the secret the callback came with. */
  secretHash: Buffer;
  checkoutRequestId: string;
  /** `result.callback`. */
  callback: Record<string, unknown>;
  /** The job's log line (the handler writes it; here, only for a job that is already over). */
  log: { level: LogLevel; message: string };
  at: Date;
};

/** recorded: first callback of this push; duplicate: already recorded; mismatch: another push's id; missing: no push (or no longer expected). */
export type JobCallbackOutcome = "recorded" | "duplicate" | "mismatch" | "missing";

/**
 * Records Safaricom's callback once per push by completing its waitpoint (found by the secret's hash and the job's
 * id). The push's CheckoutRequestID, once known (the push step's result, or the result of a job whose push was
 * accepted before waitpoints), must match. A job that is already final — its push was accepted by the handler
 * before it waited on waitpoints, and the migration that dropped job_callbacks made its waitpoint — gets the callback
 * as before: `result.callback` and a log line, in the completion's transaction. A job still running reads it from
 * ctx.waitFor.
 */
export async function recordJobCallback(pool: pg.Pool, input: JobCallbackInput): Promise<JobCallbackOutcome> {
  const { rows } = await pool.query<{ id: string; org_id: string; status: string; data: StkCallbackData | null; expected: string | null }>(
    `SELECT w.id, w.org_id, w.status, w.data,
            coalesce((SELECT s.result->>'CheckoutRequestID' FROM job_steps s
                       WHERE s.job_id = w.job_id AND s.kind = 'step' AND s.result->>'waitpoint_id' = w.id::text LIMIT 1),
                     CASE WHEN j.status IN ('done', 'failed', 'cancelled') THEN j.result->>'CheckoutRequestID' END) AS expected
       FROM waitpoints w JOIN jobs j ON j.id = w.job_id
      WHERE w.token_hash = $1 AND w.job_id = $2::uuid`,
    [input.secretHash, input.jobId],
  );
  const row = rows[0];
  if (!row) return "missing";
  if (row.expected !== null && row.expected !== input.checkoutRequestId) return "mismatch";
  const data: StkCallbackData = { checkout_request_id: input.checkoutRequestId, callback: input.callback, log: input.log };
  const completion = await completeWaitpoint(pool, { orgId: row.org_id, id: row.id }, JSON.stringify(data), { type: "token" }, async (tx) => {
    // Only a job that is over (and so waits on nothing) takes the callback here; a running one reads it in ctx.waitFor.
    const final = await tx.query<{ retries: number }>(`SELECT retries FROM jobs WHERE id = $1 AND status IN ('done', 'failed', 'cancelled') FOR UPDATE`, [
      input.jobId,
    ]);
    const job = final.rows[0];
    if (!job) return;
    // The line takes Postgres's time, like the lifecycle lines read from events, so it sorts after "succeeded".
    await tx.query("INSERT INTO job_logs (job_id, attempt, level, message, timestamp) VALUES ($1, $2, $3::log_level, $4, now())", [
      input.jobId,
      job.retries + 1,
      input.log.level,
      input.log.message,
    ]);
    await amendResult(tx, { jobId: input.jobId, fields: { callback: input.callback }, at: input.at });
  });
  switch (completion.outcome) {
    case "completed":
      return "recorded";
    case "not_found":
      return "missing";
    default: {
      // Read again: a completion that waited for a concurrent one's lock answers the row as its statement first saw it.
      const waitpoint = (await findWaitpoint(pool, row.org_id, row.id)) ?? completion.waitpoint;
      if (waitpoint.status !== "completed") return "missing"; // Expired or cancelled: no callback is expected any more.
      // Safaricom repeats callbacks it thinks were lost; each carries its own received_at, so compare the push.
      return (waitpoint.data as StkCallbackData | null)?.checkout_request_id === input.checkoutRequestId ? "duplicate" : "mismatch";
    }
  }
}
