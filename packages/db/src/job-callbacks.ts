// Data access behind M-Pesa STK pushes (table job_callbacks): the worker records each push's state so a
// retried attempt never prompts the payer twice, and the API authenticates and records Safaricom's callback.
import type pg from "pg";
import type { LogLevel } from "@conveyor/contracts";
import { isUniqueViolation } from "./errors";
import { amendResult } from "./job-machine/amend";
import { inTransaction, type Queryable } from "./transaction";

/** What an earlier attempt left behind about its push. */
export type StkPushRecord = {
  checkoutRequestId: string | null;
  merchantRequestId: string | null;
  /** Set while a push's outcome is not known to have been a refusal. */
  pushStartedAt: Date | null;
};

export async function findStkPush(db: Queryable, jobId: string): Promise<StkPushRecord | null> {
  const { rows } = await db.query<StkPushRecord>(
    `SELECT checkout_request_id AS "checkoutRequestId", merchant_request_id AS "merchantRequestId", push_started_at AS "pushStartedAt"
       FROM job_callbacks WHERE job_id = $1::uuid`,
    [jobId],
  );
  return rows[0] ?? null;
}

/**
 * Claims the job's push before it is sent, storing the hash of the new callback secret. False when another
 * attempt has already sent one (or is sending one): the caller must not push.
 */
export async function beginStkPush(db: Queryable, jobId: string, secretHash: Buffer, at: Date): Promise<boolean> {
  const claimed = await db.query(
    "UPDATE job_callbacks SET secret_hash = $2, push_started_at = $3 WHERE job_id = $1::uuid AND push_started_at IS NULL AND checkout_request_id IS NULL",
    [jobId, secretHash, at],
  );
  if (claimed.rowCount === 1) return true;
  try {
    await db.query("INSERT INTO job_callbacks (job_id, secret_hash, push_started_at) VALUES ($1::uuid, $2, $3)", [jobId, secretHash, at]);
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

/** Daraja accepted the push: the callback and any later attempt are tied to this CheckoutRequestID. */
export async function recordStkPushAccepted(db: Queryable, jobId: string, ids: { checkoutRequestId: string; merchantRequestId: string }): Promise<void> {
  await db.query(
    `UPDATE job_callbacks SET checkout_request_id = $2, merchant_request_id = $3
      WHERE job_id = $1::uuid AND (checkout_request_id IS NULL OR checkout_request_id = $2)`,
    [jobId, ids.checkoutRequestId, ids.merchantRequestId],
  );
}

/** Daraja refused the push before processing it, so a later attempt may push again. */
export async function recordStkPushRefused(db: Queryable, jobId: string): Promise<void> {
  await db.query("UPDATE job_callbacks SET push_started_at = NULL WHERE job_id = $1::uuid AND checkout_request_id IS NULL", [jobId]);
}

/** The three writes above, bound to one client: what the worker hands to the mobile_money_stk handler. */
export function stkPushStore(db: Queryable) {
  return {
    find: (jobId: string) => findStkPush(db, jobId),
    beginPush: (jobId: string, secretHash: Buffer) => beginStkPush(db, jobId, secretHash, new Date()),
    pushAccepted: (jobId: string, ids: { checkoutRequestId: string; merchantRequestId: string }) => recordStkPushAccepted(db, jobId, ids),
    pushRefused: (jobId: string) => recordStkPushRefused(db, jobId),
  };
}

/** The secret hash and push of a job, for authenticating its callback. */
export async function findCallbackTarget(db: Queryable, jobId: string): Promise<{ secretHash: Buffer; checkoutRequestId: string | null } | null> {
  const { rows } = await db.query<{ secretHash: Buffer; checkoutRequestId: string | null }>(
    `SELECT secret_hash AS "secretHash", checkout_request_id AS "checkoutRequestId" FROM job_callbacks WHERE job_id = $1::uuid`,
    [jobId],
  );
  return rows[0] ?? null;
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
  try {
    return await inTransaction(pool, async (client) => {
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
        return outcome;
      }
      await client.query("UPDATE job_callbacks SET checkout_request_id = $2, callback_received_at = $3 WHERE job_id = $1::uuid", [
        jobId,
        checkoutRequestId,
        at,
      ]);
      // The line takes Postgres's time, like the lifecycle lines read from events, so it sorts after "succeeded".
      await client.query("INSERT INTO job_logs (job_id, attempt, level, message, timestamp) VALUES ($1, $2, $3::log_level, $4, now())", [
        jobId,
        row!.retries + 1,
        input.log.level,
        input.log.message,
      ]);
      await amendResult(client, { jobId, fields: { callback: input.callback }, at });
      return "recorded";
    });
  } catch (error) {
    // Another job's push already holds this CheckoutRequestID.
    if (isUniqueViolation(error)) return "mismatch";
    throw error;
  }
}
