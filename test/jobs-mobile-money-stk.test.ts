// mobile_money_stk end to end: POST /jobs on the real API (listening, so Safaricom's callback can reach it), real
// worker processes (the push a durable step, the callback a waitpoint the job waits on), and the strict Daraja fake.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createApp } from "@conveyor/api";
import { waitFor } from "@conveyor/testkit";
import { startDarajaFake, type DarajaFake, darajaSettings } from "@conveyor/testkit/fakes";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

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
      ...darajaSettings(daraja.url),
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
  const detail = async (id: string) => (await stack.api.request.get(`/jobs/${id}`).set("X-API-Key", stack.apiKey)).body;

  it("pushes once, waits for Safaricom's callback without a worker slot, and ends done with it", async () => {
    const created = await stack.post("/jobs", { type: "mobile_money_stk", payload: { phone: "0708374149", amount: 10, ref: "ORDER88" }, max_retries: 2 });
    expect(created.status).toBe(202);
    const id = created.body.id as string;
    const waiting = await waitFor(async () => {
      const job = await detail(id);
      return job.status === "pending" && job.waiting_for === "waitpoint" ? job : null;
    }, "the job to wait for its callback");
    expect(waiting.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
      ["push 1: callback waitpoint", "succeeded"],
      ["push 1", "succeeded"],
      ["push 1: callback", "waiting"],
    ]);
    expect(daraja.pushes).toHaveLength(1);
    const push = daraja.pushes[0]!;
    expect(push.body).toMatchObject({ PhoneNumber: "254708374149", PartyA: "254708374149", Amount: 10, AccountReference: "ORDER88" });
    expect(new URL(push.body.CallBackURL).pathname).toBe(`/callbacks/mpesa/${id}`);

    const answer = await daraja.completeAndCallBack(push.checkoutRequestId!, { receipt: "QK7E2E0001" });
    expect(answer.status).toBe(200);
    const job = await stack.waitForJob(id, terminal);
    expect(job.status).toBe("done");
    expect(job.result).toMatchObject({
      CheckoutRequestID: push.checkoutRequestId,
      callback: { result_code: 0, mpesa_receipt_number: "QK7E2E0001", amount: 10 },
    });
    const logs = await stack.logs(id);
    expect(logs.map((l) => l.message)).toContainEqual(expect.stringContaining("receipt QK7E2E0001"));
    expect(daraja.pushes).toHaveLength(1);
  });

  // docs/reference/robustness.md#r49: the worker dies (SIGKILL) after Daraja took the push and before its answer was recorded.
  it("prompts the payer once when the push is retried after a SIGKILL, and the callback completes the job", async () => {
    const live = () => stack.workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
    // A provider timeout longer than the test, so the attempt is still inside the push when it is killed.
    const env = { PROVIDER_TIMEOUT_MS: "120000", WORKER_LOCK_MS: "3000" };
    await Promise.all(live().map((w) => w.stop("SIGKILL")));
    const doomed = await stack.startWorker(env);
    daraja.scriptPush("accept_and_hang");
    const pushesBefore = daraja.pushes.length;
    const created = await stack.post("/jobs", { type: "mobile_money_stk", payload: { phone: "254708374149", amount: 7, ref: "ORDER90" }, max_retries: 3 });
    const id = created.body.id as string;
    // Daraja took the push (the payer is prompted); its answer never reaches the worker.
    const push = await waitFor(
      () => (daraja.pushes.length > pushesBefore && daraja.pushes.at(-1)!.checkoutRequestId ? daraja.pushes.at(-1)! : null),
      "the push",
    );
    await doomed.stop("SIGKILL");
    await stack.startWorker(env);

    // The retry does not push again: it waits for the callback of the push that may have left.
    const waiting = await waitFor(
      async () => {
        const job = await detail(id);
        return job.status === "pending" && job.waiting_for === "waitpoint" ? job : null;
      },
      "the retried job to wait for the callback",
      30_000,
    );
    expect(waiting.steps.find((s: { name: string }) => s.name === "push 1")).toMatchObject({ status: "succeeded" });
    expect(daraja.pushes.length - pushesBefore).toBe(1);

    expect((await daraja.completeAndCallBack(push.checkoutRequestId!, { receipt: "QK7E2E0002" })).status).toBe(200);
    const job = await stack.waitForJob(id, terminal, 30_000);
    expect(job.status).toBe("done");
    expect(job.result).toMatchObject({
      CheckoutRequestID: push.checkoutRequestId,
      callback: { result_code: 0, mpesa_receipt_number: "QK7E2E0002", amount: 7 },
    });
    const logs = await stack.logs(id);
    expect(logs.map((l) => l.message)).toContainEqual(expect.stringMatching(/never learnt its outcome: not pushing again/));
    expect(daraja.pushes.length - pushesBefore).toBe(1);
    // The next test gets a worker with the file's settings.
    await Promise.all(live().map((w) => w.stop("SIGKILL")));
    await stack.startWorker();
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
