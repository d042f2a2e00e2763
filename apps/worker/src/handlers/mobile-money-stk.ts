// mobile_money_stk: one M-Pesa STK push (a PIN prompt on the payer's phone) through Safaricom Daraja. The job is
// done once Daraja accepts the push; the payment's outcome arrives later at POST /callbacks/mpesa/{job_id}.
//
// A push is not idempotent: sending it twice prompts the payer twice. So every push is recorded before it is
// sent (with the hash of the secret in its callback URL), and a retried attempt looks first: a push Daraja
// accepted is queried, never re-sent; a push whose outcome is unknown (timeout, reset, gateway error) fails the
// job permanently rather than risk a second prompt. Only pushes Daraja clearly refused are sent again.
import { createHash, randomBytes } from "node:crypto";
import { PermanentJobError, type JobContext, type JobHandler, type MobileMoneyStkPayload } from "@conveyor/contracts";
import { DarajaTokens, PushOutcomeUnknownError, PushRefusedError, queryStkPush, sendStkPush, type DarajaConfig, type StkPushAccepted } from "./mpesa/daraja";
import { requireSetting } from "./settings";
import type { HandlerDeps, StkPushStore } from "./types";

/** Daraja shows at most 13 characters of TransactionDesc. */
const TRANSACTION_DESC = "Payment";

export function mobileMoneyStkHandler(deps: HandlerDeps): JobHandler<MobileMoneyStkPayload> {
  // One token for every job of this process.
  const tokens = new DarajaTokens();

  return async (payload, ctx) => {
    const { settings } = deps;
    const config: DarajaConfig = {
      baseUrl: settings.MPESA_BASE_URL.replace(/\/+$/, ""),
      consumerKey: requireSetting(settings.MPESA_CONSUMER_KEY, "MPESA_CONSUMER_KEY"),
      consumerSecret: requireSetting(settings.MPESA_CONSUMER_SECRET, "MPESA_CONSUMER_SECRET"),
      shortcode: requireSetting(settings.MPESA_SHORTCODE, "MPESA_SHORTCODE"),
      passkey: requireSetting(settings.MPESA_PASSKEY, "MPESA_PASSKEY"),
      timeoutMs: settings.PROVIDER_TIMEOUT_MS,
    };
    const publicUrl = requireSetting(settings.PUBLIC_URL, "PUBLIC_URL");
    const store = deps.stkPushes;
    if (!store) throw new PermanentJobError("mobile_money_stk needs the worker's database to track its pushes, and this worker was started without it");

    const earlier = await store.find(ctx.jobId);
    if (earlier?.checkoutRequestId) return resume(config, earlier.checkoutRequestId, earlier.merchantRequestId ?? "", ctx);
    if (earlier?.pushStartedAt) throw unknownEarlierPush(earlier.pushStartedAt);

    const secret = randomBytes(32).toString("base64url");
    if (!(await store.beginPush(ctx.jobId, createHash("sha256").update(secret).digest()))) {
      // Another attempt of this job claimed the push between find() and here.
      const now = await store.find(ctx.jobId);
      if (now?.checkoutRequestId) return resume(config, now.checkoutRequestId, now.merchantRequestId ?? "", ctx);
      throw unknownEarlierPush(now?.pushStartedAt ?? new Date());
    }

    const who = `${maskPhone(payload.phone)} for KES ${payload.amount} (ref ${payload.ref})`;
    let accepted: StkPushAccepted;
    try {
      accepted = await sendStkPush(
        config,
        tokens,
        {
          phone: payload.phone,
          amount: payload.amount,
          accountReference: payload.ref,
          transactionDesc: TRANSACTION_DESC,
          // The secret stays in the query string: access logs carry paths only.
          callbackUrl: `${publicUrl}/callbacks/mpesa/${ctx.jobId}?secret=${secret}`,
          transactionType: settings.MPESA_TRANSACTION_TYPE,
          partyB: settings.MPESA_PARTY_B ?? config.shortcode,
        },
        ctx.signal,
      );
    } catch (error) {
      if (error instanceof PushRefusedError) {
        await store.pushRefused(ctx.jobId);
        throw error.failure;
      }
      if (error instanceof PushOutcomeUnknownError) {
        ctx.log("error", `STK push to ${who}: ${error.message}. Its outcome is unknown, so it will not be sent again.`);
        throw new PermanentJobError(
          `STK push outcome unknown (${error.message}); not retried, so the payer is not prompted twice. Check M-Pesa before sending a new job; a late callback is still recorded on this job.`,
        );
      }
      // Aborted mid-push: the record stays "started", so the next attempt treats the outcome as unknown.
      throw error;
    }

    await recordAccepted(store, ctx, accepted);
    ctx.log(
      "info",
      `STK push sent to ${who}: ${accepted.ResponseDescription || "accepted"} (CheckoutRequestID ${accepted.CheckoutRequestID}). The payment outcome arrives by callback.`,
    );
    return { ...accepted };
  };

  /** An earlier attempt's push was accepted: report it (with its current status) instead of pushing again. */
  async function resume(config: DarajaConfig, checkoutRequestId: string, merchantRequestId: string, ctx: JobContext) {
    const status = await queryStkPush(config, tokens, checkoutRequestId, ctx.signal);
    const line = `An earlier attempt's STK push was accepted (CheckoutRequestID ${checkoutRequestId}); not pushing again.`;
    if (status.state === "final") ctx.log("info", `${line} STK query: ResultCode ${status.result_code} (${status.result_desc}).`);
    else if (status.state === "pending") ctx.log("info", `${line} STK query: still pending (${status.result_desc}).`);
    else ctx.log("warn", `${line} The STK query failed: ${status.reason}. The outcome arrives by callback.`);
    return {
      CheckoutRequestID: checkoutRequestId,
      MerchantRequestID: merchantRequestId,
      ResponseDescription: "Accepted by an earlier attempt",
      CustomerMessage: "",
      query: status,
    };
  }
}

/** An earlier (or concurrent) attempt started a push and has not recorded its outcome. */
function unknownEarlierPush(startedAt: Date): PermanentJobError {
  return new PermanentJobError(
    `An earlier attempt sent an STK push at ${startedAt.toISOString()} and never learnt its outcome; not pushing again, so the payer is not prompted twice. Check M-Pesa before sending a new job.`,
  );
}

/** A write failure here must not fail an accepted push: the callback can still name the push (its secret proves it). */
async function recordAccepted(store: StkPushStore, ctx: JobContext, accepted: StkPushAccepted): Promise<void> {
  const ids = { checkoutRequestId: accepted.CheckoutRequestID, merchantRequestId: accepted.MerchantRequestID };
  try {
    await store.pushAccepted(ctx.jobId, ids);
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 500));
    await store.pushAccepted(ctx.jobId, ids).catch((error: Error) => {
      ctx.log("warn", `Could not record the CheckoutRequestID for later attempts: ${error.message}`);
    });
  }
}

/** 254712345678 → 2547••••5678: enough to recognise, not to copy. */
function maskPhone(phone: string): string {
  return phone.length > 8 ? `${phone.slice(0, 4)}${"•".repeat(phone.length - 8)}${phone.slice(-4)}` : phone;
}
