// mobile_money_stk: one M-Pesa STK push (a PIN prompt on the payer's phone) through Safaricom Daraja, then the
// payment's outcome, which Safaricom posts to POST /callbacks/mpesa/{job_id} (docs/reference/lifecycle.md#built-in-handlers, docs/reference/lifecycle.md#waitpoints-and-durable-steps "Dogfood").
//
// A push is not idempotent: sending it twice prompts the payer twice. So it is built on durable steps and a waitpoint:
//   1. step "push N: callback waitpoint" makes the waitpoint the callback will complete (its token hash is the hash
//      of the secret in the CallBackURL) — stored before anything is sent, it also marks "a push may be under way";
//   2. step "push N" sends the push. Stored when Daraja accepts it, so a later attempt (after a SIGKILL, a restart)
//      replays it and never sends it again. A push whose outcome this attempt could not learn (timeout, reset, a
//      gateway's error) fails the job permanently rather than risk a second prompt. An attempt that finds step 1
//      stored but not step 2 (an earlier attempt died mid-push) stores "outcome unknown" instead of pushing, and
//      waits for that push's callback: if the push reached the payer, Safaricom calls back and the job completes;
//      if not, the waitpoint expires and the job fails. Only a push Daraja clearly refused is recorded as refused,
//      and the next attempt tries push N+1;
//   3. ctx.waitFor("push N: callback") frees the worker's slot until the callback completes the waitpoint; the job
//      then ends done with the push's ids and `result.callback`.
// The step names are read by the migration that dropped job_callbacks (in-flight pushes became steps): keep them.
import { createHash, randomBytes } from "node:crypto";
import { PermanentJobError, WaitpointFailedError, type JobContext, type JobHandler, type LogLevel, type MobileMoneyStkPayload } from "@conveyor/contracts";
import { DarajaTokens, PushOutcomeUnknownError, PushRefusedError, queryStkPush, sendStkPush, type DarajaConfig, type StkPushAccepted } from "./mpesa/daraja";
import { requireSetting } from "./settings";
import type { HandlerDeps } from "./types";

/** Daraja shows at most 13 characters of TransactionDesc. */
const TRANSACTION_DESC = "Payment";

/** How long a push's callback is waited for: a prompt times out on the phone within minutes, and Safaricom calls back. */
const STK_CALLBACK_TIMEOUT_SECONDS = 86_400;

/**
 * What step "push N" stores: Daraja's acceptance (and the waitpoint its callback completes), a refusal, or that an
 * earlier attempt's push has an unknown outcome (its callback may still come).
 */
type PushStep = { accepted: StkPushAccepted; waitpoint_id: string } | { refused: string } | { unknown_since: string; waitpoint_id: string };

/** What the callback completes the waitpoint with (StkCallbackData in @conveyor/db). */
type CallbackData = { checkout_request_id: string; callback: Record<string, unknown>; log: { level: LogLevel; message: string } };

const pushStepName = (n: number) => `push ${n}`;
const callbackWaitpointStepName = (n: number) => `push ${n}: callback waitpoint`;
const callbackWaitStepName = (n: number) => `push ${n}: callback`;

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
    const store = deps.stkCallbacks;
    if (!store) throw new PermanentJobError("mobile_money_stk needs the worker's database for its callback waitpoints, and this worker was started without it");
    const who = `${maskPhone(payload.phone)} for KES ${payload.amount} (ref ${payload.ref})`;

    for (let n = 1; ; n++) {
      // Set only by this attempt's own run of the steps: a replayed step leaves them as they are.
      let preparedHere = false;
      let secret = "";
      let refusal: PushRefusedError | undefined;
      const prepared = await ctx.step(callbackWaitpointStepName(n), async () => {
        preparedHere = true;
        secret = randomBytes(32).toString("base64url");
        const secretHash = createHash("sha256").update(secret).digest();
        const waitpointId = await store.createWaitpoint({ jobId: ctx.jobId, orgId: ctx.orgId, secretHash, timeoutSeconds: STK_CALLBACK_TIMEOUT_SECONDS });
        return { waitpoint_id: waitpointId, started_at: new Date().toISOString() };
      });
      let unknownHere = false;
      const push = await ctx.step<PushStep>(pushStepName(n), async () => {
        if (!preparedHere) {
          unknownHere = true;
          return { unknown_since: prepared.started_at, waitpoint_id: prepared.waitpoint_id };
        }
        try {
          const accepted = await sendStkPush(
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
          return { accepted: { ...accepted }, waitpoint_id: prepared.waitpoint_id };
        } catch (error) {
          if (error instanceof PushRefusedError) {
            // Nothing reached the payer: recorded, so the next attempt pushes afresh (push N+1).
            refusal = error;
            await store.cancelWaitpoint({ orgId: ctx.orgId, jobId: ctx.jobId, waitpointId: prepared.waitpoint_id });
            return { refused: error.message };
          }
          if (error instanceof PushOutcomeUnknownError) {
            ctx.log("error", `STK push to ${who}: ${error.message}. Its outcome is unknown, so it will not be sent again.`);
            throw new PermanentJobError(
              `STK push outcome unknown (${error.message}); not retried, so the payer is not prompted twice. Check M-Pesa before sending a new job.`,
            );
          }
          // Aborted mid-push: step 1 stays without step 2, so the next attempt treats the outcome as unknown.
          throw error;
        }
      });
      if ("refused" in push) {
        if (refusal) throw refusal.failure;
        continue; // An earlier attempt's refused push: this attempt tries the next one.
      }

      if ("unknown_since" in push) {
        if (unknownHere) {
          ctx.log(
            "warn",
            `An earlier attempt sent an STK push to ${who} at ${push.unknown_since} and never learnt its outcome: not pushing again, so the payer is not prompted twice. Waiting for that push's callback instead.`,
          );
        }
        let data: CallbackData;
        try {
          data = (await ctx.waitFor(callbackWaitStepName(n), push.waitpoint_id)) as CallbackData;
        } catch (error) {
          if (error instanceof WaitpointFailedError) throw unknownEarlierPush(new Date(push.unknown_since));
          throw error;
        }
        ctx.log(data.log.level, data.log.message);
        return { CheckoutRequestID: data.checkout_request_id, callback: data.callback };
      }

      const { accepted } = push;
      if (preparedHere) {
        ctx.log(
          "info",
          `STK push sent to ${who}: ${accepted.ResponseDescription || "accepted"} (CheckoutRequestID ${accepted.CheckoutRequestID}). The payment outcome arrives by callback.`,
        );
      }
      let data: CallbackData;
      try {
        data = (await ctx.waitFor(callbackWaitStepName(n), push.waitpoint_id)) as CallbackData;
      } catch (error) {
        if (!(error instanceof WaitpointFailedError)) throw error;
        return await noCallback(config, accepted, ctx);
      }
      ctx.log(data.log.level, data.log.message);
      return { ...accepted, callback: data.callback };
    }
  };

  /** The callback never came (its waitpoint expired): report the push with Daraja's current status of it. */
  async function noCallback(config: DarajaConfig, accepted: StkPushAccepted, ctx: JobContext) {
    const status = await queryStkPush(config, tokens, accepted.CheckoutRequestID, ctx.signal);
    const line = `No M-Pesa callback arrived for CheckoutRequestID ${accepted.CheckoutRequestID} within ${STK_CALLBACK_TIMEOUT_SECONDS / 3600} hours.`;
    if (status.state === "final") ctx.log("warn", `${line} STK query: ResultCode ${status.result_code} (${status.result_desc}).`);
    else if (status.state === "pending") ctx.log("warn", `${line} STK query: still pending (${status.result_desc}).`);
    else ctx.log("warn", `${line} The STK query failed: ${status.reason}.`);
    return { ...accepted, query: status };
  }
}

/** An earlier attempt started a push, never learnt its outcome, and no callback came for it. */
function unknownEarlierPush(startedAt: Date): PermanentJobError {
  return new PermanentJobError(
    `An earlier attempt sent an STK push at ${startedAt.toISOString()} and never learnt its outcome, and no callback came for it within ${STK_CALLBACK_TIMEOUT_SECONDS / 3600} hours; not pushing again, so the payer is not prompted twice. Check M-Pesa before sending a new job.`,
  );
}

/** 254712345678 → 2547••••5678: enough to recognise, not to copy. */
function maskPhone(phone: string): string {
  return phone.length > 8 ? `${phone.slice(0, 4)}${"•".repeat(phone.length - 8)}${phone.slice(-4)}` : phone;
}
