// mobile_money_stk against a strict Daraja fake, with its callback waitpoints in a real (per-file) Postgres database.
// The handler is called directly: its steps are kept in memory across a job's attempts and ctx.waitFor answers from
// the real waitpoint row (the worker runtime's steps, SIGKILLs included, are test/jobs-mobile-money-stk.test.ts's).
import { createHash } from "node:crypto";
import { PassThrough } from "node:stream";
import { PermanentJobError, RetryableJobError, type MobileMoneyStkPayload } from "@conveyor/contracts";
import { expireWaitpoints, newId, recordJobCallback, stkCallbackStore } from "@conveyor/db";
import { createLogger } from "@conveyor/logger";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";
import { loadWorkerConfig } from "../../src/env";
import { mobileMoneyStkHandler } from "../../src/handlers/mobile-money-stk";
import { DarajaTokens, darajaTimestamp } from "../../src/handlers/mpesa/daraja";
import { MissingSettingError } from "../../src/handlers/settings";
import type { HandlerDeps } from "../../src/handlers/types";
import { startDarajaFake, SANDBOX, type DarajaFake, startFakeServer, type FakeServer, darajaSettings } from "@conveyor/testkit/fakes";
import { handlerContext, StillWaiting, withStoredSteps, type RecordedContext } from "../support/handler-context";

const PAYLOAD: MobileMoneyStkPayload = { phone: "254708374149", amount: 1, ref: "INV0042" };
const PUSH_PATH = "/mpesa/stkpush/v1/processrequest";

type Accepted = { CheckoutRequestID: string; MerchantRequestID: string };

describe("mobile_money_stk", () => {
  let database: TestDatabase;
  let daraja: DarajaFake;
  let receiver: FakeServer;
  let orgId: string;
  let output = "";

  beforeAll(async () => {
    database = await createTestDatabase();
    daraja = await startDarajaFake();
    // Stands in for the API's callback endpoint (PUBLIC_URL).
    receiver = await startFakeServer({ answer: () => ({ status: 200, body: { ResultCode: 0, ResultDesc: "Accepted" } }) });
    orgId = newId();
    await database.db.prisma.organization.create({ data: { id: orgId, name: "M-Pesa test org" } });
  });
  afterAll(async () => {
    await daraja.close();
    await receiver.close();
    await database.drop();
  });
  beforeEach(() => {
    daraja.server.reset();
    daraja.pushes.length = 0;
  });

  function deps(env: Record<string, string | undefined> = {}, store: HandlerDeps["stkCallbacks"] | null = stkCallbackStore(database.db.pool)): HandlerDeps {
    const stream = new PassThrough();
    stream.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    const config = loadWorkerConfig({
      NODE_ENV: "test",
      ...darajaSettings(daraja.url),
      PUBLIC_URL: `${receiver.url}/`,
      PROVIDER_TIMEOUT_MS: "1000",
      ...env,
    });
    return { settings: config, logger: createLogger({ service: "worker", level: "debug", json: true, stream }), stkCallbacks: store ?? undefined };
  }

  /** Each job's stored steps, by job id: what its later attempts replay. */
  const storedSteps = new Map<string, Map<string, unknown>>();

  /** A context for an attempt of the job: ctx.step kept across its attempts, ctx.waitFor read from the waitpoint. */
  function attemptOf(jobId: string, attempt: number): RecordedContext {
    const stored = storedSteps.get(jobId) ?? new Map<string, unknown>();
    storedSteps.set(jobId, stored);
    return withStoredSteps(handlerContext({ jobId, orgId, type: "mobile_money_stk", attempt, maxRetries: 3 }), database.db.pool, stored);
  }

  /** A job row for the handler's waitpoints to belong to; returns a context for its attempt 1. */
  async function newJob() {
    const id = newId();
    await database.db.prisma.job.create({ data: { id, orgId, type: "mobile_money_stk", payload: PAYLOAD, status: "processing" } });
    return attemptOf(id, 1);
  }

  /** Runs an attempt up to its wait for the callback; the waitpoint it waits for. */
  async function untilCallback(handle: ReturnType<typeof mobileMoneyStkHandler>, ctx: RecordedContext): Promise<string> {
    const outcome = await handle(PAYLOAD, ctx).catch((error: unknown) => error);
    if (!(outcome instanceof StillWaiting)) throw new Error(`expected the attempt to wait for the callback, got ${String(outcome)}`);
    return outcome.waitpointId;
  }

  /** The push step "push n" as stored. */
  const pushStep = (jobId: string, n = 1) =>
    storedSteps.get(jobId)?.get(`push ${n}`) as { accepted?: Accepted; waitpoint_id?: string; refused?: string } | undefined;

  /** The job's callback waitpoints, oldest first. */
  const waitpoints = async (jobId: string) =>
    (
      await database.db.pool.query<{ id: string; status: string; token_hash: Buffer; description: string; tags: string[] }>(
        "SELECT id, status, token_hash, description, tags FROM waitpoints WHERE job_id = $1 ORDER BY id",
        [jobId],
      )
    ).rows;

  it("sends one STK push with Daraja's fields, stores its ids in the push step, and keeps only the callback secret's hash", async () => {
    const handle = mobileMoneyStkHandler(deps());
    const ctx = await newJob();
    const waitpointId = await untilCallback(handle, ctx);

    expect(daraja.pushRequests()).toHaveLength(1);
    const push = daraja.pushes[0]!;
    expect(pushStep(ctx.jobId)).toEqual({
      waitpoint_id: waitpointId,
      accepted: {
        CheckoutRequestID: push.checkoutRequestId,
        MerchantRequestID: push.merchantRequestId,
        ResponseDescription: "Success. Request accepted for processing",
        CustomerMessage: "Success. Request accepted for processing",
      },
    });
    const body = push.body;
    expect(body).toMatchObject({
      BusinessShortCode: "174379",
      TransactionType: "CustomerPayBillOnline",
      Amount: 1,
      PartyA: "254708374149",
      PartyB: "174379",
      PhoneNumber: "254708374149",
      AccountReference: "INV0042",
    });
    expect(body.Timestamp).toMatch(/^\d{14}$/);
    expect(Buffer.from(body.Password, "base64").toString()).toBe(`174379${SANDBOX.passkey}${body.Timestamp}`);
    expect(body.TransactionDesc.length).toBeLessThanOrEqual(13);

    const callback = new URL(body.CallBackURL);
    expect(`${callback.origin}${callback.pathname}`).toBe(`${receiver.url}/callbacks/mpesa/${ctx.jobId}`);
    const secret = callback.searchParams.get("secret")!;
    expect(secret.length).toBeGreaterThanOrEqual(43);
    // The callback's waitpoint: only the secret's hash is kept, as its token hash.
    const [row, ...others] = await waitpoints(ctx.jobId);
    expect(others).toEqual([]);
    expect(row).toMatchObject({ id: waitpointId, status: "waiting", description: "M-Pesa STK push callback", tags: ["mobile_money_stk"] });
    expect(row!.token_hash).toEqual(createHash("sha256").update(secret).digest());

    expect(ctx.lines).toEqual([{ level: "info", message: expect.stringContaining(`CheckoutRequestID ${push.checkoutRequestId}`) }]);
    const written = JSON.stringify(ctx.lines) + output;
    for (const secretValue of [secret, SANDBOX.passkey, SANDBOX.consumerSecret, body.Password]) expect(written).not.toContain(secretValue);
  });

  it("sends Daraja's real callback format to the CallBackURL, secret included", async () => {
    const handle = mobileMoneyStkHandler(deps());
    const ctx = await newJob();
    await untilCallback(handle, ctx);
    const result = pushStep(ctx.jobId)!.accepted!;
    receiver.reset();
    const answer = await daraja.completeAndCallBack(result.CheckoutRequestID, { receipt: "ABC1DEF2GH" });
    expect(answer.status).toBe(200);
    const delivered = receiver.lastRequest();
    expect(delivered.path).toBe(`/callbacks/mpesa/${ctx.jobId}`);
    expect(createHash("sha256").update(delivered.query.get("secret")!).digest()).toEqual((await waitpoints(ctx.jobId))[0]!.token_hash);
    expect(JSON.parse(delivered.body).Body.stkCallback).toMatchObject({
      CheckoutRequestID: result.CheckoutRequestID,
      ResultCode: 0,
      CallbackMetadata: {
        Item: expect.arrayContaining([
          { Name: "MpesaReceiptNumber", Value: "ABC1DEF2GH" },
          { Name: "Amount", Value: 1 },
        ]),
      },
    });
  });

  it("reuses one OAuth token across jobs of the process", async () => {
    const handle = mobileMoneyStkHandler(deps());
    const before = daraja.tokenRequests();
    await untilCallback(handle, await newJob());
    await untilCallback(handle, await newJob());
    await Promise.all([untilCallback(handle, await newJob()), untilCallback(handle, await newJob())]);
    expect(daraja.tokenRequests() - before).toBe(1);
    expect(daraja.pushRequests()).toHaveLength(4);
  });

  it("uses MPESA_PARTY_B and Buy Goods when configured", async () => {
    const handle = mobileMoneyStkHandler(deps({ MPESA_TRANSACTION_TYPE: "CustomerBuyGoodsOnline", MPESA_PARTY_B: "600000" }));
    await untilCallback(handle, await newJob());
    expect(daraja.pushes[0]!.body).toMatchObject({ TransactionType: "CustomerBuyGoodsOnline", PartyB: "600000", BusinessShortCode: "174379" });
  });

  it("refreshes a token Daraja calls invalid and pushes once more", async () => {
    const handle = mobileMoneyStkHandler(deps());
    await untilCallback(handle, await newJob());
    daraja.revokeTokens();
    const before = daraja.tokenRequests();
    daraja.server.reset();
    daraja.pushes.length = 0;
    const ctx = await newJob();
    await untilCallback(handle, ctx);
    const result = pushStep(ctx.jobId)!.accepted!;
    expect(daraja.tokenRequests() - before).toBe(1);
    expect(daraja.pushRequests()).toHaveLength(2);
    expect(result.CheckoutRequestID).toBe(daraja.pushes[1]!.checkoutRequestId);
  });

  it("gives up on a token that stays invalid after one refresh, as a retryable failure that may push again", async () => {
    const handle = mobileMoneyStkHandler(deps());
    daraja.scriptPush("invalid_token", "invalid_token");
    const ctx = await newJob();
    await expect(handle(PAYLOAD, ctx)).rejects.toThrow(RetryableJobError);
    expect(daraja.pushRequests()).toHaveLength(2);
    // Recorded as refused, so a retry may push again; its waitpoint will never be called back.
    expect(pushStep(ctx.jobId)).toEqual({ refused: expect.any(String) });
    expect(await waitpoints(ctx.jobId)).toMatchObject([{ status: "cancelled" }]);
  });

  it.each([
    ["spike_arrest", "500.003.02"],
    ["quota_violation", "500.003.03"],
    ["internal_error", "500.003.1001"],
  ] as const)("retries %s (%s), and the retry pushes again", async (script, code) => {
    const handle = mobileMoneyStkHandler(deps());
    daraja.scriptPush(script);
    const ctx = await newJob();
    const failure = await handle(PAYLOAD, ctx).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(RetryableJobError);
    expect(failure).not.toBeInstanceOf(PermanentJobError);
    expect((failure as Error).message).toContain(code);
    expect(pushStep(ctx.jobId)).toEqual({ refused: expect.any(String) });

    const waitpointId = await untilCallback(handle, attemptOf(ctx.jobId, 2));
    expect(daraja.pushRequests()).toHaveLength(2);
    expect(pushStep(ctx.jobId, 2)).toEqual({
      waitpoint_id: waitpointId,
      accepted: expect.objectContaining({ CheckoutRequestID: daraja.pushes[1]!.checkoutRequestId }),
    });
    expect((await waitpoints(ctx.jobId)).map((w) => w.status)).toEqual(["cancelled", "waiting"]);
  });

  it("waits at least a minute after 'Unable to lock subscriber'", async () => {
    const handle = mobileMoneyStkHandler(deps());
    daraja.scriptPush("lock_subscriber");
    const failure = (await handle(PAYLOAD, await newJob()).catch((error: Error) => error)) as RetryableJobError;
    expect(failure).toBeInstanceOf(RetryableJobError);
    expect(failure.retryAfterMs).toBeGreaterThanOrEqual(60_000);
  });

  it.each([
    ["merchant_does_not_exist", "Merchant does not exist"],
    ["invalid_shortcode", "400.002.02"],
    [{ status: 404, body: { requestId: "x", errorCode: "404.001.01", errorMessage: "Resource not found" } }, "404.001.01"],
    [{ status: 405, body: { requestId: "x", errorCode: "405.001", errorMessage: "Method Not Allowed" } }, "405.001"],
  ] as const)("fails permanently on %j", async (script, text) => {
    const handle = mobileMoneyStkHandler(deps());
    daraja.scriptPush(script);
    const failure = await handle(PAYLOAD, await newJob()).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(PermanentJobError);
    expect((failure as Error).message).toContain(text);
    expect(daraja.pushRequests()).toHaveLength(1);
  });

  it("fails permanently when the passkey is wrong (Daraja's 'Wrong credentials')", async () => {
    const handle = mobileMoneyStkHandler(deps({ MPESA_PASSKEY: "not-the-passkey" }));
    const failure = await handle(PAYLOAD, await newJob()).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(PermanentJobError);
    expect((failure as Error).message).toMatch(/Wrong credentials.*MPESA_PASSKEY/);
    expect((failure as Error).message).not.toContain("not-the-passkey");
  });

  it("fails permanently, without pushing, when the consumer key and secret are refused", async () => {
    const handle = mobileMoneyStkHandler(deps({ MPESA_CONSUMER_SECRET: "wrong-secret" }));
    const ctx = await newJob();
    const failure = await handle(PAYLOAD, ctx).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(PermanentJobError);
    expect((failure as Error).message).toMatch(/400\.008\.01.*MPESA_CONSUMER_KEY and MPESA_CONSUMER_SECRET/);
    expect((failure as Error).message).not.toContain("wrong-secret");
    expect(daraja.pushRequests()).toHaveLength(0);
    expect(pushStep(ctx.jobId)).toEqual({ refused: expect.any(String) });
  });

  it("never pushes twice after a push that timed out: the job fails as 'outcome unknown', and a retry does not push", async () => {
    const handle = mobileMoneyStkHandler(deps());
    daraja.scriptPush("hang");
    const ctx = await newJob();
    const failure = await handle(PAYLOAD, ctx).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(PermanentJobError);
    expect((failure as Error).message).toMatch(/outcome unknown.*Check M-Pesa/);
    expect(ctx.lines.at(-1)).toMatchObject({ level: "error" });

    // Were it retried, the next attempt would wait for that push's callback instead of pushing.
    const retry = attemptOf(ctx.jobId, 2);
    expect(await untilCallback(handle, retry)).toBe((await waitpoints(ctx.jobId))[0]!.id);
    expect(pushStep(ctx.jobId)).toEqual({ unknown_since: expect.any(String), waitpoint_id: (await waitpoints(ctx.jobId))[0]!.id });
    expect(retry.lines).toEqual([{ level: "warn", message: expect.stringMatching(/never learnt its outcome: not pushing again/) }]);
    expect(daraja.pushRequests()).toHaveLength(1);
  });

  it("never pushes twice after the connection was reset mid-push", async () => {
    const handle = mobileMoneyStkHandler(deps());
    await untilCallback(handle, await newJob()); // warms the token, so the next request is the push
    daraja.server.reset();
    daraja.server.dropNext();
    const ctx = await newJob();
    await expect(handle(PAYLOAD, ctx)).rejects.toThrow(/outcome unknown/);
    await untilCallback(handle, attemptOf(ctx.jobId, 2));
    expect(daraja.server.requests.filter((r) => r.path === PUSH_PATH)).toHaveLength(1);
  });

  it("treats a gateway's 502 without Daraja's error body as an unknown outcome", async () => {
    const handle = mobileMoneyStkHandler(deps());
    daraja.scriptPush("bad_gateway");
    const ctx = await newJob();
    await expect(handle(PAYLOAD, ctx)).rejects.toThrow(/outcome unknown/);
    await untilCallback(handle, attemptOf(ctx.jobId, 2));
    expect(daraja.pushRequests()).toHaveLength(1);
  });

  it("leaves an attempt aborted mid-push as an unknown outcome for the next attempt", async () => {
    const handle = mobileMoneyStkHandler(deps({ PROVIDER_TIMEOUT_MS: "30000" }));
    daraja.scriptPush("hang");
    const ctx = await newJob();
    const pending = handle(PAYLOAD, ctx);
    await daraja.server.waitForRequests(2); // token, then the push
    ctx.abort("worker shutting down");
    await expect(pending).rejects.toThrow();
    // The next attempt does not push: it waits for the callback of the push that may have left, and fails if none comes.
    const waitpointId = await untilCallback(handle, attemptOf(ctx.jobId, 2));
    expect(daraja.pushRequests()).toHaveLength(1);
    await database.db.pool.query("UPDATE waitpoints SET expires_at = now() - interval '1 second' WHERE id = $1", [waitpointId]);
    await expireWaitpoints(database.db.pool, 10);
    await expect(handle(PAYLOAD, attemptOf(ctx.jobId, 3))).rejects.toThrow(/never learnt its outcome, and no callback came/);
    expect(daraja.pushRequests()).toHaveLength(1);
  });

  it("leaves the push free for the next attempt when stopped before sending it", async () => {
    const handle = mobileMoneyStkHandler(deps());
    const ctx = await newJob();
    ctx.abort("worker shutting down");
    await expect(handle(PAYLOAD, ctx)).rejects.toThrow(RetryableJobError);
    expect(daraja.pushRequests()).toHaveLength(0);
    await untilCallback(handle, attemptOf(ctx.jobId, 2));
    expect(daraja.pushRequests()).toHaveLength(1);
  });

  it("retries a push that could not connect at all (it never left), and pushes on the retry", async () => {
    const other = await startDarajaFake();
    const handle = mobileMoneyStkHandler(deps({ MPESA_BASE_URL: other.url }));
    await untilCallback(handle, await newJob()); // caches a token, so the next job goes straight to the push
    await other.close(); // nothing listens there any more: the connection is refused
    const ctx = await newJob();
    const failure = await handle(PAYLOAD, ctx).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(RetryableJobError);
    expect((failure as Error).message).toMatch(/ECONNREFUSED/);
    expect(pushStep(ctx.jobId)).toEqual({ refused: expect.any(String) });

    await untilCallback(mobileMoneyStkHandler(deps()), attemptOf(ctx.jobId, 2));
    expect(daraja.pushRequests()).toHaveLength(1);
  });

  it("waits for the callback instead of pushing again when an earlier attempt's push was accepted, and ends with it", async () => {
    const handle = mobileMoneyStkHandler(deps());
    const ctx = await newJob();
    const waitpointId = await untilCallback(handle, ctx);
    const { accepted } = pushStep(ctx.jobId)!;

    // The worker died while the job waited: the job runs again, and waits for the same callback.
    expect(await untilCallback(handle, attemptOf(ctx.jobId, 2))).toBe(waitpointId);
    expect(daraja.pushRequests()).toHaveLength(1);

    // The callback (as POST /callbacks/mpesa records it) completes the waitpoint; the next attempt ends with it.
    const secret = new URL(daraja.pushes[0]!.body.CallBackURL).searchParams.get("secret")!;
    const callback = { result_code: 0, result_desc: "The service request is processed successfully.", mpesa_receipt_number: "QK7ABC1XYZ" };
    const recorded = await recordJobCallback(database.db.pool, {
      jobId: ctx.jobId,
      secretHash: createHash("sha256").update(secret).digest(),
      checkoutRequestId: accepted!.CheckoutRequestID,
      callback,
      log: { level: "info", message: "M-Pesa callback: ResultCode 0 (The service request is processed successfully.), receipt QK7ABC1XYZ" },
      at: new Date(),
    });
    expect(recorded).toBe("recorded");
    const third = attemptOf(ctx.jobId, 3);
    expect(await handle(PAYLOAD, third)).toEqual({ ...accepted, callback });
    expect(third.lines).toEqual([{ level: "info", message: expect.stringContaining("receipt QK7ABC1XYZ") }]);
    expect(daraja.pushRequests()).toHaveLength(1);
  });

  it("queries Daraja when no callback came before its waitpoint expired, and ends with the query's answer", async () => {
    const handle = mobileMoneyStkHandler(deps());
    const ctx = await newJob();
    const waitpointId = await untilCallback(handle, ctx);
    const { accepted } = pushStep(ctx.jobId)!;
    daraja.complete(accepted!.CheckoutRequestID, 1032, "Request cancelled by user");
    await database.db.pool.query("UPDATE waitpoints SET expires_at = now() - interval '1 second' WHERE id = $1", [waitpointId]);
    expect(await expireWaitpoints(database.db.pool, 10)).toContain(waitpointId);

    const retry = attemptOf(ctx.jobId, 2);
    expect(await handle(PAYLOAD, retry)).toMatchObject({
      ...accepted,
      query: { state: "final", result_code: "1032", result_desc: "Request cancelled by user" },
    });
    expect(retry.lines).toEqual([{ level: "warn", message: expect.stringMatching(/No M-Pesa callback arrived.*ResultCode 1032/) }]);
    expect(daraja.pushRequests()).toHaveLength(1);
    expect(daraja.queries()[0]!.body).toContain(accepted!.CheckoutRequestID);
  });

  it("fails permanently naming PUBLIC_URL when it is not set, before calling Daraja", async () => {
    const handle = mobileMoneyStkHandler(deps({ PUBLIC_URL: undefined }));
    const failure = await handle(PAYLOAD, await newJob()).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(MissingSettingError);
    expect((failure as MissingSettingError).variable).toBe("PUBLIC_URL");
    expect(daraja.server.requests).toHaveLength(0);
  });

  it.each(["MPESA_CONSUMER_KEY", "MPESA_CONSUMER_SECRET", "MPESA_SHORTCODE", "MPESA_PASSKEY"])(
    "fails permanently naming %s when it is missing",
    async (variable) => {
      const handle = mobileMoneyStkHandler(deps({ [variable]: undefined }));
      await expect(handle(PAYLOAD, await newJob())).rejects.toMatchObject({ name: "MissingSettingError", variable });
    },
  );

  it("fails permanently when the worker gave it no callback store", async () => {
    const handle = mobileMoneyStkHandler(deps({}, null));
    await expect(handle(PAYLOAD, await newJob())).rejects.toThrow(PermanentJobError);
    expect(daraja.server.requests).toHaveLength(0);
  });
});

describe("Daraja helpers", () => {
  it("formats the timestamp in Kenyan time (UTC+3)", () => {
    expect(darajaTimestamp(new Date("2025-01-01T21:30:05.900Z"))).toBe("20250102003005");
  });

  it("has a fake that refuses what Daraja refuses: a UTC timestamp, a non-JSON body, a bad password", async () => {
    const daraja = await startDarajaFake();
    try {
      const auth = `Basic ${Buffer.from(`${SANDBOX.consumerKey}:${SANDBOX.consumerSecret}`).toString("base64")}`;
      const oauth = await fetch(`${daraja.url}/oauth/v1/generate?grant_type=client_credentials`, { headers: { Authorization: auth } });
      const { access_token, expires_in } = (await oauth.json()) as { access_token: string; expires_in: unknown };
      expect(typeof expires_in).toBe("string");
      const push = (body: object, contentType = "application/json") =>
        fetch(`${daraja.url}${PUSH_PATH}`, {
          method: "POST",
          headers: { Authorization: `Bearer ${access_token}`, "Content-Type": contentType },
          body: JSON.stringify(body),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { errorCode: string; errorMessage: string } }));
      const utc = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
      const fields = { BusinessShortCode: "174379", Timestamp: utc, Password: Buffer.from(`174379${SANDBOX.passkey}${utc}`).toString("base64") };
      expect(await push(fields)).toEqual({
        status: 400,
        body: expect.objectContaining({ errorCode: "400.002.02", errorMessage: "Bad Request - Invalid Timestamp" }),
      });
      expect((await push(fields, "text/plain")).body.errorCode).toBe("400.002.02");
      const eat = darajaTimestamp(new Date());
      expect((await push({ ...fields, Timestamp: eat })).body).toMatchObject({ errorCode: "500.001.1001", errorMessage: "Wrong credentials" });
      const bad = await fetch(`${daraja.url}/oauth/v1/generate?grant_type=client_credentials`, { headers: { Authorization: "Basic eDp5" } });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ errorCode: "400.008.01" });
    } finally {
      await daraja.close();
    }
  });

  it("caches the OAuth token until shortly before expires_in (a string) runs out", async () => {
    const daraja = await startDarajaFake();
    try {
      daraja.setTokenLifetime(3599);
      let now = 1_000_000;
      const tokens = new DarajaTokens(() => now);
      const config = { baseUrl: daraja.url, ...SANDBOX, timeoutMs: 2000 };
      const first = await tokens.get(config);
      now += 54 * 60_000;
      expect(await tokens.get(config)).toBe(first);
      now += 2 * 60_000; // 56 minutes: within the refresh margin
      expect(await tokens.get(config)).not.toBe(first);
      expect(daraja.tokenRequests()).toBe(2);
    } finally {
      await daraja.close();
    }
  });
});
