// POST /callbacks/mpesa/{job_id}?secret=…: Safaricom's STK callback, authenticated by the per-job secret, completes
// the push's callback waitpoint. Most cases here are a job that is already over (a push accepted before the handler
// waited on waitpoints, as the migration that dropped job_callbacks left it): the callback is recorded on the job as
// before. A job that waits reads it from ctx.waitFor (apps/worker/test/mpesa-callback-flow.test.ts).
import { createHash, randomBytes } from "node:crypto";
import { newId } from "@conveyor/db";
import { createOrg, type TestMember, startTestApi, type TestApi } from "@conveyor/api/testing";

type Push = { jobId: string; secret: string; checkoutRequestId: string; merchantRequestId: string };

function successBody(push: Pick<Push, "checkoutRequestId" | "merchantRequestId">, receipt = "ABC1DEF2GH") {
  return {
    Body: {
      stkCallback: {
        MerchantRequestID: push.merchantRequestId,
        CheckoutRequestID: push.checkoutRequestId,
        ResultCode: 0,
        ResultDesc: "The service request is processed successfully.",
        CallbackMetadata: {
          Item: [
            { Name: "Amount", Value: 1.0 },
            { Name: "MpesaReceiptNumber", Value: receipt },
            { Name: "Balance" },
            { Name: "TransactionDate", Value: 20250101120130 },
            { Name: "PhoneNumber", Value: 254708374149 },
          ],
        },
      },
    },
  };
}

function cancelledBody(push: Pick<Push, "checkoutRequestId" | "merchantRequestId">) {
  return {
    Body: {
      stkCallback: {
        MerchantRequestID: push.merchantRequestId,
        CheckoutRequestID: push.checkoutRequestId,
        ResultCode: 1032,
        ResultDesc: "Request cancelled by user",
      },
    },
  };
}

describe("POST /callbacks/mpesa/{job_id}", () => {
  let api: TestApi;
  let org: TestMember;
  let otherOrg: TestMember;

  beforeAll(async () => {
    api = await startTestApi();
    org = await createOrg(api.database.db, api.deps.config);
    otherOrg = await createOrg(api.database.db, api.deps.config);
  });
  afterAll(() => api.close());

  /**
   * A mobile_money_stk job whose push Daraja accepted, over and with its callback waitpoint (as the migration left
   * pushes in flight), or `running`: still in its attempt, the worker not having stored the push step yet.
   */
  async function acceptedPush(options: { orgId?: string; retries?: number; running?: boolean } = {}): Promise<Push & { waitpointId: string }> {
    const jobId = newId();
    const secret = randomBytes(32).toString("base64url");
    const checkoutRequestId = `ws_CO_${randomBytes(8).toString("hex")}`;
    const merchantRequestId = `${randomBytes(3).toString("hex")}-${randomBytes(4).toString("hex")}-1`;
    const { prisma } = api.database.db;
    await prisma.job.create({
      data: {
        id: jobId,
        orgId: options.orgId ?? org.orgId,
        type: "mobile_money_stk",
        status: options.running ? "processing" : "done",
        payload: { phone: "254708374149", amount: 1, ref: "INV0042" },
        retries: options.retries ?? 0,
        maxRetries: 3,
        ...(!options.running && {
          result: {
            CheckoutRequestID: checkoutRequestId,
            MerchantRequestID: merchantRequestId,
            ResponseDescription: "Success. Request accepted for processing",
          },
        }),
      },
    });
    const waitpointId = newId();
    await prisma.waitpoint.create({
      data: {
        id: waitpointId,
        orgId: options.orgId ?? org.orgId,
        jobId,
        description: "M-Pesa STK push callback",
        tags: ["mobile_money_stk"],
        tokenHash: new Uint8Array(createHash("sha256").update(secret).digest()),
        expiresAt: new Date(Date.now() + 86_400_000),
      },
    });
    return { jobId, secret, checkoutRequestId, merchantRequestId, waitpointId };
  }

  const post = (jobId: string, secret: string | undefined, body: object) =>
    api.request
      .post(`/callbacks/mpesa/${jobId}${secret === undefined ? "" : `?secret=${encodeURIComponent(secret)}`}`)
      .set("Content-Type", "application/json")
      .send(body);

  const logsOf = (jobId: string) => api.database.db.prisma.jobLog.findMany({ where: { jobId }, orderBy: { id: "asc" } });
  const resultOf = async (jobId: string) => (await api.database.db.prisma.job.findUniqueOrThrow({ where: { id: jobId } })).result as Record<string, any>;

  it("records a successful payment as an info log line and result.callback, keeping the push's result", async () => {
    const push = await acceptedPush({ retries: 1 });
    const res = await post(push.jobId, push.secret, successBody(push));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ResultCode: 0, ResultDesc: "Accepted" });

    const logs = await logsOf(push.jobId);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      attempt: 2,
      level: "info",
      message: "M-Pesa callback: ResultCode 0 (The service request is processed successfully.), receipt ABC1DEF2GH, amount 1",
    });
    const result = await resultOf(push.jobId);
    expect(result).toEqual({
      CheckoutRequestID: push.checkoutRequestId,
      MerchantRequestID: push.merchantRequestId,
      ResponseDescription: "Success. Request accepted for processing",
      callback: {
        result_code: 0,
        result_desc: "The service request is processed successfully.",
        mpesa_receipt_number: "ABC1DEF2GH",
        amount: 1,
        phone_number: "254708374149",
        // 2025-01-01 12:01:30 in Nairobi (UTC+3).
        transaction_date: "2025-01-01T09:01:30.000Z",
        received_at: api.clock.now().toISOString(),
      },
    });
    expect(api.logs()).not.toContain(push.secret);
  });

  it("announces the payment's outcome as one job.updated event carrying result.callback", async () => {
    const push = await acceptedPush();
    const eventsOf = async () =>
      (
        await api.database.db.pool.query<{ type: string; data: { result: Record<string, unknown> } }>(
          "SELECT type, data FROM events WHERE job_id = $1 ORDER BY id",
          [push.jobId],
        )
      ).rows;
    const before = await eventsOf();
    expect((await post(push.jobId, push.secret, successBody(push))).status).toBe(200);
    expect((await post(push.jobId, push.secret, successBody(push))).status).toBe(200);
    const added = (await eventsOf()).slice(before.length);
    expect(added.map((e) => e.type)).toEqual(["job.updated"]);
    expect(added[0]!.data.result.callback).toMatchObject({ result_code: 0, mpesa_receipt_number: "ABC1DEF2GH" });
  });

  it("records a failed payment (no metadata) as a warn line", async () => {
    const push = await acceptedPush();
    expect((await post(push.jobId, push.secret, cancelledBody(push))).status).toBe(200);
    const logs = await logsOf(push.jobId);
    expect(logs.map((l) => [l.attempt, l.level, l.message])).toEqual([[1, "warn", "M-Pesa callback: ResultCode 1032 (Request cancelled by user)"]]);
    expect((await resultOf(push.jobId)).callback).toEqual({ result_code: 1032, result_desc: "Request cancelled by user", received_at: expect.any(String) });
  });

  it("acknowledges a repeated callback without recording it twice", async () => {
    const push = await acceptedPush();
    expect((await post(push.jobId, push.secret, successBody(push))).status).toBe(200);
    const first = (await resultOf(push.jobId)).callback;
    api.clock.advance(60_000);
    const again = await post(push.jobId, push.secret, successBody(push));
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ResultCode: 0, ResultDesc: "Accepted" });
    const concurrent = await Promise.all([1, 2, 3].map(() => post(push.jobId, push.secret, successBody(push))));
    expect(concurrent.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await logsOf(push.jobId)).toHaveLength(1);
    expect((await resultOf(push.jobId)).callback).toEqual(first);
  });

  it("records concurrent first deliveries once", async () => {
    const push = await acceptedPush();
    const answers = await Promise.all([1, 2, 3, 4].map(() => post(push.jobId, push.secret, successBody(push))));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await logsOf(push.jobId)).toHaveLength(1);
  });

  it("answers an unknown job, a wrong or missing secret, another job's secret and a malformed id with the same 404", async () => {
    const push = await acceptedPush();
    const other = await acceptedPush({ orgId: otherOrg.orgId });
    const body = successBody(push);
    const answers = await Promise.all([
      post(push.jobId, "wrong-secret", body),
      post(push.jobId, undefined, body),
      post(push.jobId, "", body),
      post(push.jobId, other.secret, body),
      post(other.jobId, push.secret, body),
      post(newId(), push.secret, body),
      post("not-a-uuid", push.secret, body),
      post(push.jobId, push.secret.slice(0, -1), body),
    ]);
    for (const res of answers) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: "not_found", message: "Callback not found." } });
    }
    expect(await logsOf(push.jobId)).toHaveLength(0);
    expect(await logsOf(other.jobId)).toHaveLength(0);
    expect((await resultOf(other.jobId)).callback).toBeUndefined();
  });

  it("refuses a callback for another push of the same job with 404", async () => {
    const push = await acceptedPush();
    const res = await post(push.jobId, push.secret, successBody({ ...push, checkoutRequestId: "ws_CO_someone_else" }));
    expect(res.status).toBe(404);
    expect(await logsOf(push.jobId)).toHaveLength(0);
  });

  it("accepts a callback that beats the worker's own record of the push, completing its waitpoint for the job to read", async () => {
    const push = await acceptedPush({ running: true });
    expect((await post(push.jobId, push.secret, successBody(push))).status).toBe(200);
    const row = await api.database.db.prisma.waitpoint.findUniqueOrThrow({ where: { id: push.waitpointId } });
    expect(row).toMatchObject({ status: "completed", finishedBy: "token" });
    expect(row.data).toMatchObject({
      checkout_request_id: push.checkoutRequestId,
      callback: { result_code: 0, mpesa_receipt_number: "ABC1DEF2GH" },
      log: { level: "info", message: expect.stringContaining("receipt ABC1DEF2GH") },
    });
    // The job still runs: its handler writes the line and the result when ctx.waitFor answers.
    expect(await logsOf(push.jobId)).toHaveLength(0);
    expect((await api.database.db.prisma.job.findUniqueOrThrow({ where: { id: push.jobId } })).result).toBeNull();
    // Another push's id for the same secret is refused; the same callback again is acknowledged.
    expect((await post(push.jobId, push.secret, successBody({ ...push, checkoutRequestId: "ws_CO_someone_else" }))).status).toBe(404);
    expect((await post(push.jobId, push.secret, successBody(push))).status).toBe(200);
  });

  it("refuses a callback once its waitpoint expired or was cancelled (no callback is expected any more)", async () => {
    const push = await acceptedPush();
    await api.database.db.prisma.waitpoint.update({ where: { id: push.waitpointId }, data: { status: "cancelled", finishedAt: new Date() } });
    expect((await post(push.jobId, push.secret, successBody(push))).status).toBe(404);
    expect(await logsOf(push.jobId)).toHaveLength(0);
  });

  it.each([
    [
      "a string ResultCode",
      (p: Push) => ({ Body: { stkCallback: { ...cancelledBody(p).Body.stkCallback, ResultCode: "1032" } } }),
      "Body.stkCallback.ResultCode",
    ],
    [
      "no CheckoutRequestID",
      (p: Push) => ({ Body: { stkCallback: { MerchantRequestID: p.merchantRequestId, ResultCode: 0, ResultDesc: "ok" } } }),
      "Body.stkCallback.CheckoutRequestID",
    ],
    ["no Body", () => ({ stkCallback: {} }), "Body"],
    [
      "items without Name",
      (p: Push) => ({ Body: { stkCallback: { ...successBody(p).Body.stkCallback, CallbackMetadata: { Item: [{ Value: 1 }] } } } }),
      "Body.stkCallback.CallbackMetadata.Item.0.Name",
    ],
  ])("answers 400 validation_failed to a body with %s", async (_label, body, path) => {
    const push = await acceptedPush();
    const res = await post(push.jobId, push.secret, body(push));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_failed");
    expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    expect(await logsOf(push.jobId)).toHaveLength(0);
  });

  it("ignores fields Safaricom may add and keeps the log line on one line", async () => {
    const push = await acceptedPush();
    const body = successBody(push) as any;
    body.Body.stkCallback.ResultDesc = "Processed\r\nfake line";
    body.Body.stkCallback.NewField = { nested: true };
    body.Body.Extra = 1;
    expect((await post(push.jobId, push.secret, body)).status).toBe(200);
    const [line] = await logsOf(push.jobId);
    expect(line!.message).toBe("M-Pesa callback: ResultCode 0 (Processed fake line), receipt ABC1DEF2GH, amount 1");
  });

  it("never writes the secret to the API's logs", async () => {
    const push = await acceptedPush();
    await post(push.jobId, push.secret, successBody(push));
    await post(push.jobId, `${push.secret}x`, successBody(push));
    expect(api.logs()).toContain(`/callbacks/mpesa/${push.jobId}`);
    expect(api.logs()).not.toContain(push.secret);
  });
});
