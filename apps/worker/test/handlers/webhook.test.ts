// The webhook handler against a real local receiver (loopback, so ALLOW_PRIVATE_NETWORK=true here; the guard's
// refusals are proven with the guard on in ssrf-guard.test.ts).
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import type { Env } from "@conveyor/config";
import { PermanentJobError, RetryableJobError } from "@conveyor/contracts";
import { createLogger } from "@conveyor/logger";
import { Webhook } from "standardwebhooks";
import { loadWorkerConfig } from "../../src/env";
import type { HandlerDeps } from "../../src/handlers/types";
import { webhookHandler } from "../../src/handlers/webhook";
import { webhookSignature } from "../../src/handlers/webhook/signature";
import { type FakeServer, endless, startImageServer, type RouteServer, startWebhookReceiver, verifyDelivery } from "@conveyor/testkit/fakes";
import { handlerContext } from "../support/handler-context";

const secret = `whsec_${randomBytes(32).toString("base64")}`;
const local: Env = { ALLOW_PRIVATE_NETWORK: "true", WEBHOOK_ALLOW_HTTP: "true" };

function deps(env: Env): HandlerDeps {
  const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
  return { settings: loadWorkerConfig(env), logger: createLogger({ service: "test", stream: discard }) };
}

/** Resolves once the wall clock has moved into the next Unix second (a condition, not a guess). */
async function nextSecond(): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  while (Math.floor(Date.now() / 1000) === now) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe("webhook handler", () => {
  let receiver: FakeServer;
  let other: RouteServer;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    other = await startImageServer();
  });
  afterEach(() => {
    receiver.reset();
    other.hits.length = 0;
  });
  afterAll(async () => {
    await receiver.close();
    await other.close();
  });

  it("POSTs the payload as JSON with Standard Webhooks headers that the reference library verifies", async () => {
    const handle = webhookHandler(deps({ ...local, WEBHOOK_SIGNING_SECRET: secret }));
    const ctx = handlerContext({ type: "webhook" });
    const payload = { type: "invoice.paid", data: { id: "inv_1", amount: 1200, note: "ünïcode ✓" } };

    const result = await handle({ url: `${receiver.url}/hooks/abc?token=t0k3n`, payload }, ctx);

    const request = receiver.lastRequest();
    expect(request.method).toBe("POST");
    expect(request.path).toBe("/hooks/abc");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.body).toBe(JSON.stringify(payload));
    expect(verifyDelivery(secret, request)).toEqual(payload);
    expect(request.headers["webhook-id"]).toBe(`msg_${ctx.jobId}`);
    expect(request.headers["webhook-id"]).not.toContain(".");
    expect(Number(request.headers["webhook-timestamp"])).toBe(Math.floor(Number(request.headers["webhook-timestamp"])));
    expect(result).toEqual({ status: 200, webhook_id: request.headers["webhook-id"], response_excerpt: '{"received":true}', duration_ms: expect.any(Number) });
  });

  it("signs exactly like the standardwebhooks reference implementation", () => {
    const id = "msg_0190a1b2c3d4";
    const timestamp = 1_700_000_000;
    const body = JSON.stringify({ a: 1, text: "ünïcode" });
    expect(webhookSignature(secret, id, timestamp, body)).toBe(new Webhook(secret).sign(id, new Date(timestamp * 1000), body));
  });

  it("rejects a tampered body or a different secret when verifying on the receiving side", async () => {
    await webhookHandler(deps({ ...local, WEBHOOK_SIGNING_SECRET: secret }))({ url: receiver.url, payload: { amount: 1 } }, handlerContext());
    const request = receiver.lastRequest();
    expect(() => verifyDelivery(secret, { ...request, body: JSON.stringify({ amount: 1000 }) })).toThrow("No matching signature found");
    expect(() => verifyDelivery(`whsec_${randomBytes(32).toString("base64")}`, request)).toThrow("No matching signature found");
  });

  it("sends the same webhook-id on every attempt of a job, with a fresh timestamp and signature", async () => {
    const handle = webhookHandler(deps({ ...local, WEBHOOK_SIGNING_SECRET: secret }));
    const first = handlerContext({ attempt: 1, maxRetries: 3 });
    const second = handlerContext({ jobId: first.jobId, orgId: first.orgId, attempt: 2, maxRetries: 3 });
    const other = handlerContext({ attempt: 1 });
    const payload = { url: receiver.url, payload: { n: 1 } };

    await handle(payload, first);
    await nextSecond();
    await handle(payload, second);
    await handle(payload, other);

    const [a, b, c] = receiver.requests;
    expect(b!.headers["webhook-id"]).toBe(a!.headers["webhook-id"]);
    expect(c!.headers["webhook-id"]).not.toBe(a!.headers["webhook-id"]);
    expect(Number(b!.headers["webhook-timestamp"])).toBeGreaterThan(Number(a!.headers["webhook-timestamp"]));
    expect(b!.headers["webhook-signature"]).not.toBe(a!.headers["webhook-signature"]);
    expect(verifyDelivery(secret, a!)).toEqual({ n: 1 });
    expect(verifyDelivery(secret, b!)).toEqual({ n: 1 });
  });

  it("sends webhook-id and webhook-timestamp without a signature when no secret is set", async () => {
    const ctx = handlerContext();
    await webhookHandler(deps(local))({ url: receiver.url, payload: {} }, ctx);
    const request = receiver.lastRequest();
    expect(request.headers["webhook-id"]).toMatch(/^msg_[A-Za-z0-9_-]+$/);
    expect(request.headers["webhook-timestamp"]).toMatch(/^\d+$/);
    expect(request.headers["webhook-signature"]).toBeUndefined();
    expect(request.body).toBe("{}");
  });

  it.each([200, 201, 202, 204])("treats %i as delivered", async (status) => {
    receiver.failNext(status);
    const result = await webhookHandler(deps(local))({ url: receiver.url, payload: { ok: true } }, handlerContext());
    expect(result).toMatchObject({ status });
    expect(result).not.toHaveProperty("response_excerpt");
  });

  it.each([400, 401, 403, 404, 405, 413, 422])("fails permanently on %i", async (status) => {
    receiver.failNext(status, { error: "nope" });
    const failure = webhookHandler(deps(local))({ url: receiver.url, payload: {} }, handlerContext());
    await expect(failure).rejects.toThrow(PermanentJobError);
    await expect(failure).rejects.toThrow(`answered ${status}: {"error":"nope"}`);
  });

  it("fails permanently on 410 Gone, naming the endpoint as gone", async () => {
    receiver.failNext(410);
    await expect(webhookHandler(deps(local))({ url: receiver.url, payload: {} }, handlerContext())).rejects.toThrow(
      new PermanentJobError(`127.0.0.1:${receiver.port} answered 410: endpoint gone`),
    );
  });

  it.each([408, 429, 500, 502, 503, 504])("retries on %i", async (status) => {
    receiver.failNext(status, "busy");
    const failure = webhookHandler(deps(local))({ url: receiver.url, payload: {} }, handlerContext());
    await expect(failure).rejects.toThrow(RetryableJobError);
    await expect(failure).rejects.toThrow(`answered ${status}: busy`);
  });

  it.each([429, 503])("honours Retry-After on %i", async (status) => {
    receiver.failNext(status, undefined, { "Retry-After": "7" });
    const error = await webhookHandler(deps(local))({ url: receiver.url, payload: {} }, handlerContext()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryableJobError);
    expect((error as RetryableJobError).retryAfterMs).toBe(7000);
  });

  it.each([301, 302, 303, 307, 308])("never follows a %i redirect: the target receives nothing and the failure is permanent", async (status) => {
    other.route("/landing", (_req, res) => res.writeHead(200).end("ok"));
    receiver.failNext(status, undefined, { Location: `${other.url}/landing?secret=x` });

    const failure = webhookHandler(deps(local))({ url: receiver.url, payload: {} }, handlerContext());

    await expect(failure).rejects.toThrow(PermanentJobError);
    await expect(failure).rejects.toThrow(`answered ${status} (a redirect to http://127.0.0.1:${other.port}); webhooks never follow redirects`);
    expect(receiver.requests).toHaveLength(1);
    expect(other.hits).toEqual([]);
  });

  it("gives up after WEBHOOK_TIMEOUT_MS with a retryable error", async () => {
    receiver.hang();
    const failure = webhookHandler(deps({ ...local, WEBHOOK_TIMEOUT_MS: "300" }))({ url: receiver.url, payload: {} }, handlerContext());
    await expect(failure).rejects.toThrow(new RetryableJobError(`127.0.0.1:${receiver.port} did not answer within 300 ms`));
  });

  it("counts a body that never ends against the same deadline", async () => {
    other.route("/slow", endless({ chunkBytes: 16, intervalMs: 50 }));
    const failure = webhookHandler(deps({ ...local, WEBHOOK_TIMEOUT_MS: "300" }))({ url: `${other.url}/slow`, payload: {} }, handlerContext());
    await expect(failure).rejects.toThrow(RetryableJobError);
  });

  it("retries when the connection is refused or reset", async () => {
    const closed = await startWebhookReceiver();
    const url = closed.url;
    await closed.close();
    await expect(webhookHandler(deps(local))({ url, payload: {} }, handlerContext())).rejects.toThrow(/could not be reached \(ECONNREFUSED/);

    receiver.dropNext();
    await expect(webhookHandler(deps(local))({ url: receiver.url, payload: {} }, handlerContext())).rejects.toThrow(RetryableJobError);
  });

  it("stops reading an endless response after 64 KiB and keeps a short single-line excerpt", async () => {
    other.route("/endless", (req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("line one\r\nline two\n");
      endless()(req, res);
    });
    const result = await webhookHandler(deps(local))({ url: `${other.url}/endless`, payload: {} }, handlerContext());
    const excerpt = (result as { response_excerpt: string }).response_excerpt;
    expect(excerpt.startsWith("line one line two AAAA")).toBe(true);
    expect(excerpt).not.toMatch(/[\r\n]/);
    expect(excerpt.length).toBeLessThanOrEqual(201);
  });

  it("refuses an http URL unless WEBHOOK_ALLOW_HTTP is set", async () => {
    const failure = webhookHandler(deps({ ALLOW_PRIVATE_NETWORK: "true" }))({ url: receiver.url, payload: {} }, handlerContext());
    await expect(failure).rejects.toThrow(new PermanentJobError("URL refused: it must use https, not http"));
    expect(receiver.requests).toEqual([]);
  });

  it("keeps the secret, the path's token and the payload out of the job's log lines", async () => {
    const ctx = handlerContext();
    await webhookHandler(deps({ ...local, WEBHOOK_SIGNING_SECRET: secret }))(
      { url: `${receiver.url}/hook/t0k3n-in-path`, payload: { card: "4111-1111" } },
      ctx,
    );
    const text = ctx.lines.map((line) => line.message).join("\n");
    expect(text).toContain(`POST to 127.0.0.1:${receiver.port}`);
    for (const leak of [secret, secret.slice(6), "t0k3n-in-path", "4111-1111", receiver.lastRequest().headers["webhook-signature"] as string])
      expect(text).not.toContain(leak);
  });

  it("stops when the job's signal fires", async () => {
    receiver.hang();
    const ctx = handlerContext();
    const failure = webhookHandler(deps(local))({ url: receiver.url, payload: {} }, ctx);
    await receiver.waitForRequests(1);
    ctx.abort("shutting down");
    await expect(failure).rejects.toThrow("shutting down");
  });
});
