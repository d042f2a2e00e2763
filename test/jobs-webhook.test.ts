// webhook end to end: POST /jobs on the real API, a real worker process, and a local receiver that verifies
// the Standard Webhooks signature with the reference library. The receiver is on loopback, so both API and
// worker run with ALLOW_PRIVATE_NETWORK=true and WEBHOOK_ALLOW_HTTP=true.
import { randomBytes } from "node:crypto";
import { startWebhookReceiver, verifyDelivery, type FakeServer } from "@conveyor/testkit/fakes";
import { attemptLines, startStack, starts, type Stack } from "@conveyor/api/testing/stack";

const SECRET = `whsec_${randomBytes(32).toString("base64")}`;
const local = { ALLOW_PRIVATE_NETWORK: "true", WEBHOOK_ALLOW_HTTP: "true" };
const terminal = (job: { status: string }) => job.status === "done" || job.status === "failed";

let stack: Stack;
let receiver: FakeServer;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  stack = await startStack({ apiEnv: local, workerEnv: { ...local, WORKER_TYPES: "webhook", WEBHOOK_SIGNING_SECRET: SECRET } });
  await stack.startWorker();
});
afterEach(() => stack?.expectOtherOrgUntouched());
afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});
beforeEach(() => receiver.reset());

describe("webhook through the API and a worker", () => {
  it("delivers a signed POST and stores the delivery result", async () => {
    const payload = { type: "invoice.paid", data: { id: "inv_42" } };
    const created = await stack.post("/jobs", { type: "webhook", payload: { url: `${receiver.url}/hooks/in`, payload } });
    expect(created.status).toBe(202);

    const job = await stack.waitForJob(created.body.id, terminal);
    expect(job).toMatchObject({
      status: "done",
      retries: 0,
      error: null,
      result: { status: 200, webhook_id: `msg_${job.id}`, duration_ms: expect.any(Number) },
    });
    expect(receiver.requests).toHaveLength(1);
    expect(verifyDelivery(SECRET, receiver.lastRequest())).toEqual(payload);
    expect(attemptLines(await stack.logs(job.id), 1)).toContain(
      `POST to 127.0.0.1:${receiver.port} (${JSON.stringify(payload).length} bytes, signed, webhook-id msg_${job.id})`,
    );
  });

  it("retries a 503 with the same webhook-id, and every attempt's signature verifies", async () => {
    receiver.failNext(503, "maintenance", { "Retry-After": "1" });
    const created = await stack.post("/jobs", { type: "webhook", payload: { url: receiver.url, payload: { n: 1 } }, max_retries: 2 });

    const job = await stack.waitForJob(created.body.id, terminal);
    expect(job).toMatchObject({ status: "done", retries: 1, error: null });
    expect(receiver.requests.map((r) => r.headers["webhook-id"])).toEqual([`msg_${job.id}`, `msg_${job.id}`]);
    for (const request of receiver.requests) expect(verifyDelivery(SECRET, request)).toEqual({ n: 1 });
    expect(starts(await stack.logs(job.id))).toBe(2);
  });

  it("fails a 410 at once without consuming retries", async () => {
    receiver.failNext(410);
    const created = await stack.post("/jobs", { type: "webhook", payload: { url: receiver.url, payload: {} }, max_retries: 3 });

    const job = await stack.waitForJob(created.body.id, terminal);
    expect(job).toMatchObject({ status: "failed", retries: 0, error: `127.0.0.1:${receiver.port} answered 410: endpoint gone` });
    expect(receiver.requests).toHaveLength(1);
  });
});
