// mobile_money_stk end to end: POST /jobs on the real API (listening, so Safaricom's callback can reach it), a
// real worker process with its Postgres push store, and the strict Daraja fake.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createApp } from "@conveyor/api";
import { SANDBOX, startDarajaFake, type DarajaFake } from "@conveyor/testkit/fakes";
import { startStack, starts, type Stack } from "@conveyor/testkit/stack";

const terminal = (job: { status: string }) => job.status === "done" || job.status === "failed";

let stack: Stack;
let server: Server;
let daraja: DarajaFake;

beforeAll(async () => {
  daraja = await startDarajaFake();
  // The worker builds CallBackURL from PUBLIC_URL before the API is listening, so take a port first.
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const publicUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stack = await startStack({
    apiEnv: { PUBLIC_URL: publicUrl },
    workerEnv: {
      WORKER_TYPES: "mobile_money_stk",
      PUBLIC_URL: publicUrl,
      MPESA_BASE_URL: daraja.url,
      MPESA_CONSUMER_KEY: SANDBOX.consumerKey,
      MPESA_CONSUMER_SECRET: SANDBOX.consumerSecret,
      MPESA_SHORTCODE: SANDBOX.shortcode,
      MPESA_PASSKEY: SANDBOX.passkey,
      PROVIDER_TIMEOUT_MS: "1500",
    },
  });
  server.on("request", createApp(stack.api.deps));
  await stack.startWorker();
});
afterEach(() => stack?.expectOtherOrgUntouched());
afterAll(async () => {
  await stack?.close();
  await new Promise((resolve) => server?.close(resolve));
  await daraja?.close();
});

describe("mobile_money_stk through the API and a worker", () => {
  it("pushes once, ends done with the CheckoutRequestID, and records Safaricom's callback", async () => {
    const created = await stack.post("/jobs", { type: "mobile_money_stk", payload: { phone: "0708374149", amount: 10, ref: "ORDER88" }, max_retries: 2 });
    expect(created.status).toBe(202);
    const job = await stack.waitForJob(created.body.id, terminal);
    expect(job.status).toBe("done");
    const checkout = (job.result as { CheckoutRequestID: string }).CheckoutRequestID;
    expect(checkout).toMatch(/^ws_CO_/);
    expect(daraja.pushes).toHaveLength(1);
    expect(daraja.pushes[0]!.body).toMatchObject({ PhoneNumber: "254708374149", PartyA: "254708374149", Amount: 10, AccountReference: "ORDER88" });
    expect(new URL(daraja.pushes[0]!.body.CallBackURL).pathname).toBe(`/callbacks/mpesa/${job.id}`);

    const answer = await daraja.completeAndCallBack(checkout, { receipt: "QK7E2E0001" });
    expect(answer.status).toBe(200);
    const after = await stack.job(job.id);
    expect(after.status).toBe("done");
    expect(after.result).toMatchObject({ CheckoutRequestID: checkout, callback: { result_code: 0, mpesa_receipt_number: "QK7E2E0001", amount: 10 } });
    const logs = await stack.logs(job.id);
    expect(starts(logs)).toBe(1);
    expect(logs.at(-1)).toMatchObject({ level: "info", message: expect.stringContaining("receipt QK7E2E0001") });
  });

  it("never prompts the payer twice: a push that timed out fails with 'outcome unknown' instead of retrying", async () => {
    daraja.scriptPush("hang");
    const pushesBefore = daraja.pushes.length;
    const created = await stack.post("/jobs", { type: "mobile_money_stk", payload: { phone: "254708374149", amount: 5, ref: "ORDER89" }, max_retries: 3 });
    const job = await stack.waitForJob(created.body.id, terminal, 60_000);
    expect(job.status).toBe("failed");
    expect(job.error).toMatch(/outcome unknown/);
    expect(daraja.pushes.length - pushesBefore).toBe(1);
  });
});
