// Data access behind M-Pesa STK pushes (table job_callbacks): the worker records each push's state so a
// retried attempt never prompts the payer twice, and the API authenticates and records Safaricom's callback.
import type pg from "pg";
import type { LogLevel } from "@conveyor/contracts";
import type { Db } from "./client";
import { isUniqueViolation } from "./errors";
import { amendResult } from "./job-machine/amend";

/** What an earlier attempt left behind about its push. */
export type StkPushRecord = {
  checkoutRequestId: string | null;
  merchantRequestId: string | null;
  /** Set while a push's outcome is not known to have been a refusal. */
  pushStartedAt: Date | null;
};

export async function findStkPush(db: Db, jobId: string): Promise<StkPushRecord | null> {
  return db.jobCallback.findUnique({ where: { jobId }, select: { checkoutRequestId: true, merchantRequestId: true, pushStartedAt: true } });
}

/**
 * Claims the job's push before it is sent, storing the hash of the new callback secret. False when another
 * attempt has already sent one (or is sending one): the caller must not push.
 */
export async function beginStkPush(db: Db, jobId: string, secretHash: Buffer, at: Date): Promise<boolean> {
  const data = { secretHash: new Uint8Array(secretHash), pushStartedAt: at };
  const claimed = await db.jobCallback.updateMany({ where: { jobId, pushStartedAt: null, checkoutRequestId: null }, data });
  if (claimed.count === 1) return true;
  try {
    await db.jobCallback.create({ data: { jobId, ...data } });
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

/** Daraja accepted the push: the callback and any later attempt are tied to this CheckoutRequestID. */
export async function recordStkPushAccepted(db: Db, jobId: string, ids: { checkoutRequestId: string; merchantRequestId: string }): Promise<void> {
  await db.jobCallback.updateMany({
    where: { jobId, OR: [{ checkoutRequestId: null }, { checkoutRequestId: ids.checkoutRequestId }] },
    data: ids,
  });
}

/** Daraja refused the push before processing it, so a later attempt may push again. */
export async function recordStkPushRefused(db: Db, jobId: string): Promise<void> {
  await db.jobCallback.updateMany({ where: { jobId, checkoutRequestId: null }, data: { pushStartedAt: null } });
}

/** The three writes above, bound to one client: what the worker hands to the mobile_money_stk handler. */
export function stkPushStore(db: Db) {
  return {
    find: (jobId: string) => findStkPush(db, jobId),
    beginPush: (jobId: string, secretHash: Buffer) => beginStkPush(db, jobId, secretHash, new Date()),
    pushAccepted: (jobId: string, ids: { checkoutRequestId: string; merchantRequestId: string }) => recordStkPushAccepted(db, jobId, ids),
    pushRefused: (jobId: string) => recordStkPushRefused(db, jobId),
  };
}

/** The secret hash and push of a job, for authenticating its callback. */
export async function findCallbackTarget(db: Db, jobId: string): Promise<{ secretHash: Buffer; checkoutRequestId: string | null } | null> {
  const row = await db.jobCallback.findUnique({ where: { jobId }, select: { secretHash: true, checkoutRequestId: true } });
  return row ? { secretHash: Buffer.from(row.secretHash), checkoutRequestId: row.checkoutRequestId } : null;
}

export type JobCallbackInput = {
  jobId: string;
  checkoutRequestId: string;
  /** One line for the job's logs. */
  log: { level: LogLevel; message: string };
  /** Merged into the job's result as `result.callback`. */
  callback: Record<string, unknown>;
  at: Date;
};

/** recorded: first callback of this push; duplicate: already recorded; mismatch: another push's id; missing: no push. */
export type JobCallbackOutcome = "recorded" | "duplicate" | "mismatch" | "missing";

/**
 * Records Safaricom's callback once per push: a log line in the job's current attempt and `result.callback` (with its
 * job.updated event). The row lock makes concurrent deliveries of the same callback record it once.
 */
export async function recordJobCallback(pool: pg.Pool, input: JobCallbackInput): Promise<JobCallbackOutcome> {
  const { jobId, checkoutRequestId, at } = input;
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const { rows } = await client.query<{ checkout_request_id: string | null; callback_received_at: Date | null; retries: number }>(
      `SELECT c.checkout_request_id, c.callback_received_at, j.retries
         FROM job_callbacks c JOIN jobs j ON j.id = c.job_id
        WHERE c.job_id = $1::uuid
          FOR UPDATE OF c`,
      [jobId],
    );
    const row = rows[0];
    // A callback may beat the worker's own write of the CheckoutRequestID; its secret already proves it belongs to
    // this job's push, so it names the push.
    const outcome: JobCallbackOutcome = !row
      ? "missing"
      : row.checkout_request_id !== null && row.checkout_request_id !== checkoutRequestId
        ? "mismatch"
        : row.callback_received_at
          ? "duplicate"
          : "recorded";
    if (outcome !== "recorded") {
      await client.query("ROLLBACK");
      return outcome;
    }
    await client.query("UPDATE job_callbacks SET checkout_request_id = $2, callback_received_at = $3 WHERE job_id = $1::uuid", [jobId, checkoutRequestId, at]);
    // The line takes Postgres's time, like the lifecycle lines read from events, so it sorts after "succeeded".
    await client.query("INSERT INTO job_logs (job_id, attempt, level, message, timestamp) VALUES ($1, $2, $3::log_level, $4, now())", [
      jobId,
      row!.retries + 1,
      input.log.level,
      input.log.message,
    ]);
    await amendResult(client, { jobId, fields: { callback: input.callback }, at });
    await client.query("COMMIT");
    return "recorded";
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    // Another job's push already holds this CheckoutRequestID.
    if (isUniqueViolation(error)) return "mismatch";
    throw error;
  } finally {
    client.release();
  }
}
