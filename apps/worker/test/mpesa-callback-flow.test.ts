// The M-Pesa round trip across both apps: a job created with POST /jobs, the mobile_money_stk handler pushing to
// the Daraja fake with its callback waitpoint in the API's database, and the fake calling the real API back over
// HTTP at the job's CallBackURL, which completes the waitpoint the handler waits on. (The handler is called directly,
// its steps kept across attempts by withStoredSteps; the whole trip through worker processes, a SIGKILL included, is
// test/jobs-mobile-money-stk.test.ts.)
import { stkCallbackStore } from "@conveyor/db";
import { createLogger } from "@conveyor/logger";
import { createApiKey, createOrg, createSecondOrg, startTestApi, type SecondOrg, type TestApi } from "@conveyor/api/testing";
import { startDarajaFake, type DarajaFake, darajaSettings } from "@conveyor/testkit/fakes";
import { loadWorkerConfig } from "../src/env";
import { mobileMoneyStkHandler } from "../src/handlers/mobile-money-stk";
import { handlerContext, StillWaiting, withStoredSteps } from "./support/handler-context";

let api: TestApi;
let publicUrl: string;
let daraja: DarajaFake;
let apiKey: string;
let orgId: string;
let other: SecondOrg;

beforeAll(async () => {
  api = await startTestApi();
  publicUrl = await api.listen();
  daraja = await startDarajaFake();
  const owner = await createOrg(api.database.db, api.deps.config);
  orgId = owner.orgId;
  apiKey = (await createApiKey(api.database.db, owner)).key;
  other = await createSecondOrg(api.database.db);
  await other.watch(api.get);
});
afterEach(() => other.expectUntouched({ "X-API-Key": apiKey }));
afterAll(async () => {
  await daraja?.close();
  await api?.close();
});

function handler() {
  const config = loadWorkerConfig({
    NODE_ENV: "test",
    ...darajaSettings(daraja.url),
    PUBLIC_URL: publicUrl,
  });
  return mobileMoneyStkHandler({
    settings: config,
    logger: createLogger({ service: "worker", level: "error", json: true }),
    stkCallbacks: stkCallbackStore(api.database.db.pool),
  });
}

async function createJob(): Promise<string> {
  const res = await api.request
    .post("/jobs")
    .set("X-API-Key", apiKey)
    .send({ type: "mobile_money_stk", payload: { phone: "0708374149", amount: 10, ref: "ORDER77" } });
  expect(res.status).toBe(202);
  return res.body.id;
}

/** Attempts of one job: the first waits for the callback, a later one ends with it. */
function attempts(jobId: string) {
  const stored = new Map<string, unknown>();
  return (attempt: number) => withStoredSteps(handlerContext({ jobId, orgId, type: "mobile_money_stk", attempt }), api.database.db.pool, stored);
}

describe("M-Pesa STK push and callback across the worker handler and the API", () => {
  it("completes the push's waitpoint with a paid callback, and the job ends with it in its result and logs", async () => {
    const id = await createJob();
    const job = await api.request.get(`/jobs/${id}`).set("X-API-Key", apiKey);
    const attempt = attempts(id);
    const handle = handler();
    const waiting = await handle(job.body.payload, attempt(1)).catch((error: unknown) => error);
    expect(waiting).toBeInstanceOf(StillWaiting);
    const waitpointId = (waiting as StillWaiting).waitpointId;
    // The API normalised the phone number before storing the payload.
    const push = daraja.pushes.at(-1)!;
    expect(push.body).toMatchObject({ PhoneNumber: "254708374149", Amount: 10, AccountReference: "ORDER77" });
    const open = await api.request.get(`/waitpoints/${waitpointId}`).set("X-API-Key", apiKey);
    expect(open.body).toMatchObject({ status: "waiting", job_id: id, description: "M-Pesa STK push callback" });

    const answer = await daraja.completeAndCallBack(push.checkoutRequestId!, { receipt: "QK7ABC1XYZ" });
    expect(answer).toEqual({ status: 200, body: JSON.stringify({ ResultCode: 0, ResultDesc: "Accepted" }) });
    const completed = await api.request.get(`/waitpoints/${waitpointId}`).set("X-API-Key", apiKey);
    expect(completed.body).toMatchObject({ status: "completed", data: { checkout_request_id: push.checkoutRequestId } });

    const resumed = attempt(1);
    const result = (await handle(job.body.payload, resumed)) as Record<string, any>;
    expect(result).toMatchObject({ CheckoutRequestID: push.checkoutRequestId, MerchantRequestID: push.merchantRequestId });
    expect(result.callback).toMatchObject({ result_code: 0, mpesa_receipt_number: "QK7ABC1XYZ", amount: 10, phone_number: "254708374149" });
    expect(resumed.lines).toEqual([{ level: "info", message: expect.stringContaining("receipt QK7ABC1XYZ, amount 10") }]);
    expect(daraja.pushes.filter((p) => p.checkoutRequestId === push.checkoutRequestId)).toHaveLength(1);

    // Safaricom retries callbacks it thinks were lost: the second delivery changes nothing.
    expect((await daraja.completeAndCallBack(push.checkoutRequestId!, { receipt: "QK7ABC1XYZ" })).status).toBe(200);
    const again = await api.request.get(`/waitpoints/${waitpointId}`).set("X-API-Key", apiKey);
    expect(again.body).toEqual(completed.body);
    // The callback URL carried the secret; the API's logs never show it.
    const secret = new URL(push.body.CallBackURL).searchParams.get("secret")!;
    expect(api.logs()).not.toContain(secret);
  });

  it("ends with a cancelled push's callback as a warning", async () => {
    const id = await createJob();
    const job = await api.request.get(`/jobs/${id}`).set("X-API-Key", apiKey);
    const attempt = attempts(id);
    const handle = handler();
    await expect(handle(job.body.payload, attempt(1))).rejects.toBeInstanceOf(StillWaiting);
    await daraja.completeAndCallBack(daraja.pushes.at(-1)!.checkoutRequestId!, { resultCode: 1032, resultDesc: "Request cancelled by user" });
    const resumed = attempt(1);
    expect(await handle(job.body.payload, resumed)).toMatchObject({ callback: { result_code: 1032, result_desc: "Request cancelled by user" } });
    expect(resumed.lines).toEqual([{ level: "warn", message: "M-Pesa callback: ResultCode 1032 (Request cancelled by user)" }]);
  });
});
