// The Daraja calls mobile_money_stk makes (docs/reference/providers.md#m-pesa-daraja): the OAuth token, STK push and STK query, and the
// reading of Daraja's answers into "accepted", "refused before processing" (safe to push again) and
// "unknown" (never push again). Requests and error messages never carry the key, secret, passkey or token.
import type { AxiosResponse } from "axios";
import { PermanentJobError, RetryableJobError } from "@conveyor/contracts";
import { bodyExcerpt, providerRequest, ProviderUnreachableError, rateLimited, retryAfterMs } from "../http";

export type DarajaConfig = {
  baseUrl: string;
  consumerKey: string;
  consumerSecret: string;
  shortcode: string;
  passkey: string;
  timeoutMs: number;
};

const PROVIDER = "M-Pesa";
/** Safaricom asks to wait at least a minute after "Unable to lock subscriber". */
export const LOCKED_SUBSCRIBER_RETRY_MS = 60_000;

/** Kenyan time (EAT, UTC+3 all year) as YYYYMMDDHHmmss, the format of Daraja's Timestamp. */
export function darajaTimestamp(at: Date): string {
  return new Date(at.getTime() + 3 * 3_600_000).toISOString().replace(/\D/g, "").slice(0, 14);
}

/** base64(BusinessShortCode + Passkey + Timestamp). */
export function darajaPassword(shortcode: string, passkey: string, timestamp: string): string {
  return Buffer.from(`${shortcode}${passkey}${timestamp}`, "utf8").toString("base64");
}

type DarajaErrorBody = { errorCode?: unknown; errorMessage?: unknown };

function errorOf(response: AxiosResponse): { code?: string; message?: string } {
  const data = response.data as DarajaErrorBody | undefined;
  if (!data || typeof data !== "object") return {};
  return {
    code: typeof data.errorCode === "string" ? data.errorCode : undefined,
    message: typeof data.errorMessage === "string" ? data.errorMessage : undefined,
  };
}

function describe(response: AxiosResponse): string {
  const { code, message } = errorOf(response);
  return code || message ? [code, message].filter(Boolean).join(" ") : bodyExcerpt(response.data, 200) || "no body";
}

const isInvalidToken = (response: AxiosResponse) => {
  const { code } = errorOf(response);
  return code === "404.001.03" || code === "400.003.01" || response.status === 401;
};

/** One OAuth token per process and credentials, shared by every job, refreshed shortly before it expires. */
export class DarajaTokens {
  private cached?: { key: string; token: string; expiresAt: number };
  private pending?: { key: string; promise: Promise<string> };

  constructor(private readonly now: () => number = Date.now) {}

  async get(config: DarajaConfig): Promise<string> {
    const key = `${config.baseUrl}\n${config.consumerKey}\n${config.consumerSecret}`;
    if (this.cached?.key === key && this.cached.expiresAt > this.now()) return this.cached.token;
    // Concurrent jobs share one token request.
    if (this.pending?.key !== key) {
      const promise = this.fetch(config, key).finally(() => {
        if (this.pending?.promise === promise) this.pending = undefined;
      });
      this.pending = { key, promise };
    }
    return this.pending.promise;
  }

  /** Forgets `token` after Daraja called it invalid, so the next get() asks for a new one. */
  invalidate(token: string): void {
    if (this.cached?.token === token) this.cached = undefined;
  }

  private async fetch(config: DarajaConfig, key: string): Promise<string> {
    const basic = Buffer.from(`${config.consumerKey}:${config.consumerSecret}`, "utf8").toString("base64");
    const response = await providerRequest<{ access_token?: unknown; expires_in?: unknown }>({
      provider: PROVIDER,
      timeoutMs: config.timeoutMs,
      method: "GET",
      url: `${config.baseUrl}/oauth/v1/generate`,
      params: { grant_type: "client_credentials" },
      headers: { Authorization: `Basic ${basic}`, Accept: "application/json" },
    });
    if (response.status === 200 && typeof response.data?.access_token === "string" && response.data.access_token) {
      // expires_in is a string ("3599") in the real API; refresh a tenth early, at most 5 minutes.
      const seconds = Number(response.data.expires_in);
      const lifetime = Number.isFinite(seconds) && seconds > 0 ? seconds : 3600;
      const expiresAt = this.now() + (lifetime - Math.min(300, lifetime / 10)) * 1000;
      this.cached = { key, token: response.data.access_token, expiresAt };
      return response.data.access_token;
    }
    if (response.status === 429)
      throw rateLimited(`${PROVIDER} OAuth answered 429: ${describe(response)}`, retryAfterMs(response.headers as Record<string, unknown>));
    if (response.status >= 500) {
      throw new RetryableJobError(
        `${PROVIDER} OAuth answered ${response.status}: ${describe(response)}`,
        retryAfterMs(response.headers as Record<string, unknown>),
      );
    }
    if (response.status === 200) throw new RetryableJobError(`${PROVIDER} OAuth answered 200 without an access_token`);
    throw new PermanentJobError(
      `${PROVIDER} refused the consumer key and secret (${response.status} ${describe(response)}); check MPESA_CONSUMER_KEY and MPESA_CONSUMER_SECRET`,
    );
  }
}

export type StkPushRequest = {
  phone: string;
  amount: number;
  accountReference: string;
  transactionDesc: string;
  callbackUrl: string;
  transactionType: string;
  partyB: string;
};

export type StkPushAccepted = {
  CheckoutRequestID: string;
  MerchantRequestID: string;
  ResponseDescription: string;
  CustomerMessage: string;
};

/** Daraja refused the push before processing it: no prompt was sent, so pushing again later is safe. */
export class PushRefusedError extends Error {
  override name = "PushRefusedError";
  constructor(readonly failure: PermanentJobError | RetryableJobError) {
    super(failure.message);
  }
}

/** The push may or may not have reached the payer: it must not be sent again. */
export class PushOutcomeUnknownError extends Error {
  override name = "PushOutcomeUnknownError";
}

/**
 * Sends one STK push, refreshing the token once if Daraja calls it invalid. Resolves when Daraja accepted it;
 * rejects with PushRefusedError (nothing was processed) or PushOutcomeUnknownError (anything else), or with
 * the AbortError of `signal`, which also leaves the outcome unknown.
 */
/**
 * POSTs `fields` to a Lipa Na M-Pesa endpoint with the bearer token and the fields every such call carries:
 * the shortcode, and the password derived from the passkey and this call's timestamp.
 */
function postToShortcodeApi(config: DarajaConfig, token: string, path: string, fields: Record<string, unknown>, signal: AbortSignal): Promise<AxiosResponse> {
  const timestamp = darajaTimestamp(new Date());
  return providerRequest({
    provider: PROVIDER,
    timeoutMs: config.timeoutMs,
    signal,
    method: "POST",
    url: `${config.baseUrl}${path}`,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json" },
    data: { BusinessShortCode: config.shortcode, Password: darajaPassword(config.shortcode, config.passkey, timestamp), Timestamp: timestamp, ...fields },
  });
}

export async function sendStkPush(config: DarajaConfig, tokens: DarajaTokens, push: StkPushRequest, signal: AbortSignal): Promise<StkPushAccepted> {
  for (let refreshed = false; ; refreshed = true) {
    let token: string;
    try {
      token = await tokens.get(config);
    } catch (error) {
      throw error instanceof PermanentJobError || error instanceof RetryableJobError ? new PushRefusedError(error) : error;
    }
    // Nothing has been sent yet: an abort now leaves no doubt about the outcome.
    if (signal.aborted) throw new PushRefusedError(new RetryableJobError("The attempt was stopped before its STK push was sent"));
    let response: AxiosResponse;
    try {
      response = await postToShortcodeApi(
        config,
        token,
        "/mpesa/stkpush/v1/processrequest",
        {
          TransactionType: push.transactionType,
          Amount: push.amount,
          PartyA: push.phone,
          PartyB: push.partyB,
          PhoneNumber: push.phone,
          CallBackURL: push.callbackUrl,
          AccountReference: push.accountReference,
          TransactionDesc: push.transactionDesc,
        },
        signal,
      );
    } catch (error) {
      if (error instanceof ProviderUnreachableError) {
        if (!error.mayHaveBeenProcessed) throw new PushRefusedError(error);
        throw new PushOutcomeUnknownError(`the STK push got no answer (${error.message})`);
      }
      throw error;
    }
    if (isInvalidToken(response)) {
      tokens.invalidate(token);
      if (!refreshed) continue;
      throw new PushRefusedError(new RetryableJobError(`${PROVIDER} refused a freshly issued access token (${describe(response)})`));
    }
    return readPushAnswer(response);
  }
}

function readPushAnswer(response: AxiosResponse): StkPushAccepted {
  const data = (response.data ?? {}) as Record<string, unknown>;
  if (response.status === 200 && typeof data.ResponseCode === "string") {
    if (data.ResponseCode === "0" && typeof data.CheckoutRequestID === "string" && data.CheckoutRequestID) {
      return {
        CheckoutRequestID: data.CheckoutRequestID,
        MerchantRequestID: String(data.MerchantRequestID ?? ""),
        ResponseDescription: String(data.ResponseDescription ?? ""),
        CustomerMessage: String(data.CustomerMessage ?? ""),
      };
    }
    if (data.ResponseCode !== "0") {
      return refuse(
        new PermanentJobError(
          `${PROVIDER} did not accept the STK push: ResponseCode ${data.ResponseCode} (${bodyExcerpt(data.ResponseDescription ?? "", 200)})`,
        ),
      );
    }
  }
  const { code, message = "" } = errorOf(response);
  const what = `${PROVIDER} refused the STK push (${response.status} ${describe(response)})`;
  if (code === "500.001.1001") {
    if (/unable to lock subscriber/i.test(message)) {
      return refuse(new RetryableJobError(`${what}: the payer's phone is busy with another transaction; retrying after a minute`, LOCKED_SUBSCRIBER_RETRY_MS));
    }
    if (/merchant does not exist|wrong credentials/i.test(message)) {
      return refuse(new PermanentJobError(`${what}; check MPESA_SHORTCODE, MPESA_PASSKEY and MPESA_TRANSACTION_TYPE`));
    }
    return refuse(new RetryableJobError(what));
  }
  if (code === "500.003.02" || code === "500.003.03" || code === "500.003.1001") {
    return refuse(new RetryableJobError(what, retryAfterMs(response.headers as Record<string, unknown>)));
  }
  if (response.status === 429) return refuse(rateLimited(what, retryAfterMs(response.headers as Record<string, unknown>)));
  // 400.002.02 (a field), 404.001.01 (path), 405.001 (method), other 4xx: fixing data or configuration is needed.
  if (response.status >= 400 && response.status < 500) return refuse(new PermanentJobError(what));
  if (code && response.status >= 500) return refuse(new RetryableJobError(what));
  // A 5xx without Daraja's error body (a gateway's 502/504) or a 200 we cannot read: it may have been processed.
  throw new PushOutcomeUnknownError(`${PROVIDER} answered the STK push with ${response.status} ${describe(response)}`);
}

function refuse(failure: PermanentJobError | RetryableJobError): never {
  throw new PushRefusedError(failure);
}

export type StkQueryAnswer =
  { state: "final"; result_code: string; result_desc: string } | { state: "pending"; result_desc: string } | { state: "unavailable"; reason: string };

/** Asks Daraja how a push ended. Never throws for Daraja's answers: the caller only reports them. */
export async function queryStkPush(config: DarajaConfig, tokens: DarajaTokens, checkoutRequestId: string, signal: AbortSignal): Promise<StkQueryAnswer> {
  for (let refreshed = false; ; refreshed = true) {
    let response: AxiosResponse;
    let token: string;
    try {
      token = await tokens.get(config);
      response = await postToShortcodeApi(config, token, "/mpesa/stkpushquery/v1/query", { CheckoutRequestID: checkoutRequestId }, signal);
    } catch (error) {
      if (signal.aborted) throw error;
      return { state: "unavailable", reason: (error as Error).message };
    }
    if (isInvalidToken(response) && !refreshed) {
      tokens.invalidate(token);
      continue;
    }
    const data = (response.data ?? {}) as Record<string, unknown>;
    if (response.status === 200 && data.ResultCode !== undefined && data.ResultCode !== null) {
      return { state: "final", result_code: String(data.ResultCode), result_desc: String(data.ResultDesc ?? "") };
    }
    const { message = "" } = errorOf(response);
    if (/being processed/i.test(message)) return { state: "pending", result_desc: message };
    return { state: "unavailable", reason: `${PROVIDER} answered the STK query with ${response.status} ${describe(response)}` };
  }
}
