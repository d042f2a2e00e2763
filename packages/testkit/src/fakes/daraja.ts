// A strict fake of Safaricom Daraja (docs/reference/providers.md#m-pesa-daraja): OAuth with Basic auth and a string expires_in, STK push
// that checks the bearer token, the JSON content type, every field, the Timestamp (Kenyan time) and the
// Password derived from it, STK query (pending until the payer "answers"), and real-format callbacks POSTed to
// the push's CallBackURL. Tests script per-endpoint error answers and count pushes.
import { randomBytes } from "node:crypto";
import { headerValue, mediaType, parseJson, startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from "./fake-server";

export type DarajaCredentials = { consumerKey: string; consumerSecret: string; shortcode: string; passkey: string };

/** The sandbox shortcode and passkey (public test values) with made-up app credentials. */
export const SANDBOX: DarajaCredentials = {
  consumerKey: "fake-consumer-key-0123456789",
  consumerSecret: "fake-consumer-secret-9876543210",
  shortcode: "174379",
  passkey: "bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919",
};

/** The worker's settings that send its STK pushes to the fake at `url` with the sandbox credentials. */
export function darajaSettings(url: string): Record<string, string> {
  return {
    MPESA_BASE_URL: url,
    MPESA_CONSUMER_KEY: SANDBOX.consumerKey,
    MPESA_CONSUMER_SECRET: SANDBOX.consumerSecret,
    MPESA_SHORTCODE: SANDBOX.shortcode,
    MPESA_PASSKEY: SANDBOX.passkey,
  };
}

/** Scripted answers to the next STK push (after it passed validation). */
export type PushScript =
  | "invalid_token"
  | "spike_arrest"
  | "quota_violation"
  | "internal_error"
  | "lock_subscriber"
  | "merchant_does_not_exist"
  | "wrong_credentials"
  | "invalid_shortcode"
  | "bad_gateway"
  | "hang"
  /** Accepted (the payer is prompted; completeAndCallBack works) but the answer never comes: a response lost in flight. */
  | "accept_and_hang"
  | FakeReply;

export type RecordedPush = {
  body: Record<string, any>;
  /** The CheckoutRequestID Daraja answered with, when it accepted the push. */
  checkoutRequestId?: string;
  merchantRequestId?: string;
};

type Checkout = { merchantRequestId: string; callbackUrl: string; amount: number; phone: string; result?: { code: number; desc: string } };

export type CallbackOptions = {
  resultCode?: number;
  resultDesc?: string;
  /** Defaults to a fresh receipt number; ignored when resultCode is not 0 (failures carry no metadata). */
  receipt?: string;
};

export type DarajaFake = {
  url: string;
  server: FakeServer;
  credentials: DarajaCredentials;
  /** Every STK push request received, whatever happened to it (hung, dropped, refused or accepted). */
  pushRequests(): RecordedRequest[];
  /** STK pushes that were read (not hung or dropped before reading), with the ids of accepted ones. */
  pushes: RecordedPush[];
  /** OAuth token requests received. */
  tokenRequests(): number;
  queries(): RecordedRequest[];
  /** The next STK push that passes validation gets this answer. */
  scriptPush(...answers: PushScript[]): void;
  /** Tokens issued so far stop working (Daraja's 404.001.03). */
  revokeTokens(): void;
  /** expires_in of tokens issued from now on (seconds, sent as a string). */
  setTokenLifetime(seconds: number): void;
  /** The payer answered: the query reports it, and the callback is POSTed to the push's CallBackURL. */
  completeAndCallBack(checkoutRequestId: string, options?: CallbackOptions): Promise<{ status: number; body: string }>;
  /** The payer answered, but no callback is sent (only the query knows). */
  complete(checkoutRequestId: string, resultCode: number, resultDesc: string): void;
  /** The callback body Safaricom would send for `checkoutRequestId`. */
  callbackBody(checkoutRequestId: string, options?: CallbackOptions): object;
  close(): Promise<void>;
};

const darajaError = (status: number, errorCode: string, errorMessage: string): FakeReply => ({
  status,
  body: { requestId: `${randomBytes(4).toString("hex")}-${randomBytes(4).toString("hex")}`, errorCode, errorMessage },
});
const badRequest = (what: string) => darajaError(400, "400.002.02", `Bad Request - Invalid ${what}`);

const SCRIPTS: Record<Exclude<PushScript, FakeReply | "hang" | "accept_and_hang">, FakeReply> = {
  invalid_token: darajaError(404, "404.001.03", "Invalid Access Token"),
  spike_arrest: darajaError(500, "500.003.02", "Error Occured: Spike Arrest Violation"),
  quota_violation: darajaError(500, "500.003.03", "Error Occured: Quota Violation"),
  internal_error: darajaError(500, "500.003.1001", "Internal Server Error"),
  lock_subscriber: darajaError(500, "500.001.1001", "Unable to lock subscriber, a transaction is already in process for the current subscriber"),
  merchant_does_not_exist: darajaError(500, "500.001.1001", "Merchant does not exist"),
  wrong_credentials: darajaError(500, "500.001.1001", "Wrong credentials"),
  invalid_shortcode: badRequest("BusinessShortCode"),
  bad_gateway: { status: 502, body: "<html><body>502 Bad Gateway</body></html>", headers: { "Content-Type": "text/html" } },
};

/** What Kenyan wall-clock time is now, as Daraja's YYYYMMDDHHmmss. */
function eatNow(): Date {
  return new Date(Date.now() + 3 * 3_600_000);
}

function parseTimestamp(value: unknown): Date | null {
  if (typeof value !== "string" || !/^\d{14}$/.test(value)) return null;
  const [y, mo, d, h, mi, s] = [value.slice(0, 4), value.slice(4, 6), value.slice(6, 8), value.slice(8, 10), value.slice(10, 12), value.slice(12, 14)].map(
    Number,
  ) as number[];
  const date = new Date(Date.UTC(y!, mo! - 1, d!, h!, mi!, s!));
  return date.getUTCMonth() === mo! - 1 && date.getUTCDate() === d! && date.getUTCHours() === h! ? date : null;
}

export async function startDarajaFake(credentials: DarajaCredentials = SANDBOX): Promise<DarajaFake> {
  const issued = new Map<string, number>(); // token → expiry (ms)
  let tokenLifetime = 3599;
  let tokenCount = 0;
  const pushes: RecordedPush[] = [];
  const scripts: PushScript[] = [];
  const checkouts = new Map<string, Checkout>();

  const tokenValid = (request: RecordedRequest) => {
    const match = /^Bearer (\S+)$/.exec(headerValue(request, "authorization") ?? "");
    const expiry = match ? issued.get(match[1]!) : undefined;
    return expiry !== undefined && expiry > Date.now();
  };

  /** Checks shared by push and query: bearer token, JSON, shortcode, timestamp and password. */
  function checkCommon(request: RecordedRequest): { refusal: FakeReply } | { fields: Record<string, any> } {
    if (request.method !== "POST") return { refusal: darajaError(405, "405.001", "Method Not Allowed") };
    if (!tokenValid(request)) return { refusal: darajaError(404, "404.001.03", "Invalid Access Token") };
    if (mediaType(request) !== "application/json") return { refusal: badRequest("Content-Type: expected application/json") };
    const parsed = parseJson(request.body);
    if (!parsed.ok || typeof parsed.value !== "object" || parsed.value === null || Array.isArray(parsed.value)) return { refusal: badRequest("JSON body") };
    const body = parsed.value as Record<string, any>;
    if (String(body.BusinessShortCode ?? "") !== credentials.shortcode) return { refusal: badRequest("BusinessShortCode") };
    const stamp = parseTimestamp(body.Timestamp);
    // Kenyan time, give or take five minutes: a UTC timestamp is three hours off.
    if (!stamp || Math.abs(stamp.getTime() - eatNow().getTime()) > 5 * 60_000) return { refusal: badRequest("Timestamp") };
    const expected = Buffer.from(`${credentials.shortcode}${credentials.passkey}${body.Timestamp}`).toString("base64");
    if (body.Password !== expected) return { refusal: darajaError(500, "500.001.1001", "Wrong credentials") };
    return { fields: body };
  }

  function refusePush(body: Record<string, any>): FakeReply | undefined {
    if (body.TransactionType !== "CustomerPayBillOnline" && body.TransactionType !== "CustomerBuyGoodsOnline") return badRequest("TransactionType");
    if (!Number.isInteger(Number(body.Amount)) || Number(body.Amount) < 1 || Number(body.Amount) > 250_000) return badRequest("Amount");
    if (!/^254[17]\d{8}$/.test(String(body.PartyA ?? ""))) return badRequest("PartyA");
    if (!/^\d{5,7}$/.test(String(body.PartyB ?? ""))) return badRequest("PartyB");
    if (!/^254[17]\d{8}$/.test(String(body.PhoneNumber ?? ""))) return badRequest("PhoneNumber");
    try {
      const url = new URL(String(body.CallBackURL));
      if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error();
    } catch {
      return badRequest("CallBackURL");
    }
    if (typeof body.AccountReference !== "string" || !/^[A-Za-z0-9 ]{1,12}$/.test(body.AccountReference)) return badRequest("AccountReference");
    if (body.TransactionDesc !== undefined && (typeof body.TransactionDesc !== "string" || body.TransactionDesc.length > 13))
      return badRequest("TransactionDesc");
    return undefined;
  }

  const server = await startFakeServer({
    refuse(request) {
      if (request.path === "/oauth/v1/generate") {
        if (request.method !== "GET") return darajaError(405, "405.001", "Method Not Allowed");
        if (request.query.get("grant_type") !== "client_credentials") return darajaError(400, "400.008.02", "Invalid grant type passed");
        const expected = `Basic ${Buffer.from(`${credentials.consumerKey}:${credentials.consumerSecret}`).toString("base64")}`;
        if (headerValue(request, "authorization") !== expected) return darajaError(400, "400.008.01", "Invalid Authentication passed");
        return undefined;
      }
      if (request.path === "/mpesa/stkpush/v1/processrequest") {
        const common = checkCommon(request);
        pushes.push({ body: "fields" in common ? common.fields : {} });
        return "refusal" in common ? common.refusal : refusePush(common.fields);
      }
      if (request.path === "/mpesa/stkpushquery/v1/query") {
        const common = checkCommon(request);
        if ("refusal" in common) return common.refusal;
        if (!checkouts.has(String(common.fields.CheckoutRequestID))) return badRequest("CheckoutRequestID");
        return undefined;
      }
      return darajaError(404, "404.001.01", "Resource not found");
    },
    async answer(request) {
      if (request.path === "/oauth/v1/generate") {
        const token = randomBytes(21).toString("base64url");
        issued.set(token, Date.now() + tokenLifetime * 1000);
        tokenCount++;
        return { status: 200, body: { access_token: token, expires_in: String(tokenLifetime) } };
      }
      const body = JSON.parse(request.body) as Record<string, any>;
      if (request.path === "/mpesa/stkpushquery/v1/query") {
        const checkout = checkouts.get(String(body.CheckoutRequestID))!;
        if (!checkout.result) return darajaError(500, "500.001.1001", "The transaction is being processed");
        return {
          status: 200,
          body: {
            ResponseCode: "0",
            ResponseDescription: "The service request has been accepted successsfully",
            MerchantRequestID: checkout.merchantRequestId,
            CheckoutRequestID: body.CheckoutRequestID,
            ResultCode: String(checkout.result.code),
            ResultDesc: checkout.result.desc,
          },
        };
      }
      // STK push.
      const script = scripts.shift();
      if (script === "hang") return new Promise<FakeReply>(() => {});
      if (script !== undefined && script !== "accept_and_hang") return typeof script === "string" ? SCRIPTS[script] : script;
      const merchantRequestId = `${randomBytes(2).toString("hex")}-${randomBytes(4).toString("hex")}-1`;
      const checkoutRequestId = `ws_CO_${eatNow().toISOString().replace(/\D/g, "").slice(0, 14)}${randomBytes(5).toString("hex")}`;
      checkouts.set(checkoutRequestId, { merchantRequestId, callbackUrl: body.CallBackURL, amount: Number(body.Amount), phone: body.PhoneNumber });
      const record = pushes.at(-1)!;
      record.checkoutRequestId = checkoutRequestId;
      record.merchantRequestId = merchantRequestId;
      if (script === "accept_and_hang") return new Promise<FakeReply>(() => {});
      return {
        status: 200,
        body: {
          MerchantRequestID: merchantRequestId,
          CheckoutRequestID: checkoutRequestId,
          ResponseCode: "0",
          ResponseDescription: "Success. Request accepted for processing",
          CustomerMessage: "Success. Request accepted for processing",
        },
      };
    },
  });

  function callbackBody(checkoutRequestId: string, options: CallbackOptions = {}): object {
    const checkout = checkouts.get(checkoutRequestId);
    if (!checkout) throw new Error(`no push with CheckoutRequestID ${checkoutRequestId}`);
    const code = options.resultCode ?? 0;
    const stkCallback: Record<string, unknown> = {
      MerchantRequestID: checkout.merchantRequestId,
      CheckoutRequestID: checkoutRequestId,
      ResultCode: code,
      ResultDesc: options.resultDesc ?? (code === 0 ? "The service request is processed successfully." : "Request cancelled by user"),
    };
    if (code === 0) {
      stkCallback.CallbackMetadata = {
        Item: [
          { Name: "Amount", Value: checkout.amount },
          { Name: "MpesaReceiptNumber", Value: options.receipt ?? randomBytes(5).toString("hex").toUpperCase() },
          { Name: "Balance" },
          { Name: "TransactionDate", Value: Number(eatNow().toISOString().replace(/\D/g, "").slice(0, 14)) },
          { Name: "PhoneNumber", Value: Number(checkout.phone) },
        ],
      };
    }
    return { Body: { stkCallback } };
  }

  return {
    url: server.url,
    server,
    credentials,
    pushes,
    pushRequests: () => server.requests.filter((r) => r.path === "/mpesa/stkpush/v1/processrequest"),
    tokenRequests: () => tokenCount,
    queries: () => server.requests.filter((r) => r.path === "/mpesa/stkpushquery/v1/query"),
    scriptPush: (...answers) => void scripts.push(...answers),
    revokeTokens: () => issued.clear(),
    setTokenLifetime: (seconds) => void (tokenLifetime = seconds),
    complete(checkoutRequestId, resultCode, resultDesc) {
      const checkout = checkouts.get(checkoutRequestId);
      if (!checkout) throw new Error(`no push with CheckoutRequestID ${checkoutRequestId}`);
      checkout.result = { code: resultCode, desc: resultDesc };
    },
    async completeAndCallBack(checkoutRequestId, options = {}) {
      const body = callbackBody(checkoutRequestId, options) as { Body: { stkCallback: { ResultCode: number; ResultDesc: string } } };
      const checkout = checkouts.get(checkoutRequestId)!;
      checkout.result = { code: body.Body.stkCallback.ResultCode, desc: body.Body.stkCallback.ResultDesc };
      const response = await fetch(checkout.callbackUrl, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      return { status: response.status, body: await response.text() };
    },
    callbackBody,
    close: () => server.close(),
  };
}
