// The M-Pesa round trip across both apps: a job created with POST /jobs, the mobile_money_stk handler pushing to
// the Daraja fake with its records in the API's database, and the fake calling the real API back over HTTP at the
// job's CallBackURL. (The handler is called directly; the worker process passes it the same store. The whole
// trip through a worker process is test/jobs-mobile-money-stk.test.ts.)
import { stkPushStore } from "@conveyor/db";
import { createLogger } from "@conveyor/logger";
import { createApiKey, createOrg, createSecondOrg, startTestApi, type SecondOrg, type TestApi } from "@conveyor/testkit/api";
import { SANDBOX, startDarajaFake, type DarajaFake } from "@conveyor/testkit/fakes";
import { loadWorkerConfig } from "../src/env";
import { mobileMoneyStkHandler } from "../src/handlers/mobile-money-stk";
import { handlerContext } from "./support/handler-context";

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
    MPESA_BASE_URL: daraja.url,
    MPESA_CONSUMER_KEY: SANDBOX.consumerKey,
    MPESA_CONSUMER_SECRET: SANDBOX.consumerSecret,
    MPESA_SHORTCODE: SANDBOX.shortcode,
    MPESA_PASSKEY: SANDBOX.passkey,
    PUBLIC_URL: publicUrl,
  });
  return mobileMoneyStkHandler({
    settings: config,
    logger: createLogger({ service: "worker", level: "error", json: true }),
    stkPushes: stkPushStore(api.database.db.pool),
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

describe("M-Pesa STK push and callback across the worker handler and the API", () => {
  it("records a paid push's callback in the job's logs and result", async () => {
    const id = await createJob();
    const job = await api.request.get(`/jobs/${id}`).set("X-API-Key", apiKey);
    const ctx = handlerContext({ jobId: id, orgId, type: "mobile_money_stk" });
    const pushed = (await handler()(job.body.payload, ctx)) as { CheckoutRequestID: string };
    // The API normalised the phone number before storing the payload.
    expect(daraja.pushes.at(-1)!.body).toMatchObject({ PhoneNumber: "254708374149", Amount: 10, AccountReference: "ORDER77" });

    const answer = await daraja.completeAndCallBack(pushed.CheckoutRequestID, { receipt: "QK7ABC1XYZ" });
    expect(answer).toEqual({ status: 200, body: JSON.stringify({ ResultCode: 0, ResultDesc: "Accepted" }) });

    const after = await api.request.get(`/jobs/${id}`).set("X-API-Key", apiKey);
    expect(after.body.result.callback).toMatchObject({ result_code: 0, mpesa_receipt_number: "QK7ABC1XYZ", amount: 10, phone_number: "254708374149" });
    const logs = await api.request.get(`/jobs/${id}/logs`).set("X-API-Key", apiKey);
    expect(logs.body.at(-1)).toMatchObject({ attempt: 1, level: "info", message: expect.stringContaining("receipt QK7ABC1XYZ, amount 10") });

    // Safaricom retries callbacks it thinks were lost: the second delivery changes nothing.
    expect((await daraja.completeAndCallBack(pushed.CheckoutRequestID, { receipt: "QK7ABC1XYZ" })).status).toBe(200);
    const again = await api.request.get(`/jobs/${id}/logs`).set("X-API-Key", apiKey);
    expect(again.body).toHaveLength(logs.body.length);
    // The callback URL carried the secret; the API's logs never show it.
    const secret = new URL(daraja.pushes.at(-1)!.body.CallBackURL).searchParams.get("secret")!;
    expect(api.logs()).not.toContain(secret);
  });

  it("records a cancelled push as a warning", async () => {
    const id = await createJob();
    const job = await api.request.get(`/jobs/${id}`).set("X-API-Key", apiKey);
    const pushed = (await handler()(job.body.payload, handlerContext({ jobId: id, orgId }))) as { CheckoutRequestID: string };
    await daraja.completeAndCallBack(pushed.CheckoutRequestID, { resultCode: 1032, resultDesc: "Request cancelled by user" });
    const logs = await api.request.get(`/jobs/${id}/logs`).set("X-API-Key", apiKey);
    expect(logs.body.at(-1)).toMatchObject({ level: "warn", message: "M-Pesa callback: ResultCode 1032 (Request cancelled by user)" });
  });
});
