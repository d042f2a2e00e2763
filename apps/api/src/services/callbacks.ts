// Safaricom's STK callback for a mobile_money_stk job (docs/reference/lifecycle.md#built-in-handlers, docs/reference/lifecycle.md#waitpoints-and-durable-steps). Callbacks are not signed: the secret in the
// CallBackURL (only its SHA-256 is stored, as the token hash of the push's callback waitpoint) proves the caller got
// that URL from Daraja, and the CheckoutRequestID must be the job's push. The callback completes that waitpoint once
// per push; the waiting job resumes and ends with it as `result.callback` and a log line.
import { createHash } from "node:crypto";
import Joi from "joi";
import { isStkCallbackSecret, isUuid, recordJobCallback } from "@conveyor/db";
import type { ServiceDeps } from "./infrastructure/deps";
import { notFound } from "./infrastructure/errors";
import { validate } from "./infrastructure/validate";

type StkCallback = {
  MerchantRequestID: string;
  CheckoutRequestID: string;
  ResultCode: number;
  ResultDesc: string;
  CallbackMetadata?: { Item: { Name: string; Value?: string | number }[] };
};

// Safaricom may add fields at any level; only what is read here is checked.
export const callbackBody = Joi.object<{ Body: { stkCallback: StkCallback } }>({
  Body: Joi.object({
    stkCallback: Joi.object({
      MerchantRequestID: Joi.string().max(128).required(),
      CheckoutRequestID: Joi.string().max(128).required(),
      ResultCode: Joi.number().integer().required(),
      ResultDesc: Joi.string().max(1000).allow("").required(),
      CallbackMetadata: Joi.object({
        Item: Joi.array()
          .max(100)
          .items(Joi.object({ Name: Joi.string().max(100).required(), Value: Joi.alternatives(Joi.number(), Joi.string().max(1000)) }).unknown(true))
          .required(),
      }).unknown(true),
    })
      .unknown(true)
      .required(),
  })
    .unknown(true)
    .required(),
}).unknown(true);

export type MpesaCallbackOptions = {
  jobId: string;
  secret: string | undefined;
  body: unknown;
};

/**
 * Records the callback; resolves for a new or a repeated one. Unknown job, wrong secret, other push: 404. The
 * waitpoint is found by the secret's hash (as a capability URL's token is), so a wrong secret and an unknown job cost
 * the same lookup.
 */
export async function recordMpesaCallback({ jobId, secret, body }: MpesaCallbackOptions, deps: Pick<ServiceDeps, "db" | "clock">): Promise<void> {
  const refused = () => notFound("Callback");
  if (!secret || !isUuid(jobId)) throw refused();
  const secretHash = createHash("sha256").update(secret).digest();
  // The body is checked after the secret is known to name a push: an unknown caller learns nothing from a 400.
  if (!(await isStkCallbackSecret(deps.db.pool, jobId.toLowerCase(), secretHash))) throw refused();

  const { stkCallback } = validate(callbackBody, body).Body;
  const at = deps.clock.now();
  const callback = summarize(stkCallback, at);
  const outcome = await recordJobCallback(deps.db.pool, {
    jobId: jobId.toLowerCase(),
    secretHash,
    checkoutRequestId: stkCallback.CheckoutRequestID,
    log: { level: stkCallback.ResultCode === 0 ? "info" : "warn", message: callbackLogLine(callback) },
    callback,
    at,
  });
  if (outcome === "missing" || outcome === "mismatch") throw refused();
}

type CallbackSummary = {
  result_code: number;
  result_desc: string;
  mpesa_receipt_number?: string;
  amount?: number;
  phone_number?: string;
  transaction_date?: string;
  received_at: string;
};

function summarize(callback: StkCallback, at: Date): CallbackSummary {
  // Items are looked up by Name, never by position; Balance may come without a Value.
  const item = (name: string) => callback.CallbackMetadata?.Item.find((i) => i.Name === name)?.Value;
  const receipt = item("MpesaReceiptNumber");
  const amount = Number(item("Amount"));
  const phone = item("PhoneNumber");
  const date = item("TransactionDate");
  return {
    result_code: callback.ResultCode,
    result_desc: callback.ResultDesc,
    ...(receipt !== undefined && { mpesa_receipt_number: String(receipt) }),
    ...(item("Amount") !== undefined && Number.isFinite(amount) && { amount }),
    ...(phone !== undefined && { phone_number: String(phone) }),
    ...(date !== undefined && { transaction_date: kenyanTimeToIso(String(date)) }),
    received_at: at.toISOString(),
  };
}

/** Daraja's TransactionDate is Kenyan wall-clock time (UTC+3) as YYYYMMDDHHmmss; anything else is kept as sent. */
function kenyanTimeToIso(value: string): string {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(value);
  if (!m) return value;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const utc = new Date(Date.UTC(y, mo - 1, d, h, mi, s) - 3 * 3_600_000);
  return Number.isNaN(utc.getTime()) ? value : utc.toISOString();
}

/** One line whatever the provider sent: CR/LF folded to spaces. */
function callbackLogLine(summary: CallbackSummary): string {
  const parts = [`M-Pesa callback: ResultCode ${summary.result_code} (${summary.result_desc})`];
  if (summary.mpesa_receipt_number !== undefined) parts.push(`receipt ${summary.mpesa_receipt_number}`);
  if (summary.amount !== undefined) parts.push(`amount ${summary.amount}`);
  return parts.join(", ").replace(/[\r\n\u2028\u2029]+/g, " ");
}
