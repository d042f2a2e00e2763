// The _webhook_delivery handler against a real database and a local receiver that checks deliveries the way a
// customer would: the signature with the `standardwebhooks` package, the body with the `cloudevents` SDK (docs/reference/events.md#events,
// docs/reference/robustness.md#r37). Loopback receivers need ALLOW_PRIVATE_NETWORK; the DNS-rebinding case runs with the guard on.
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { HTTP, type CloudEvent } from "cloudevents";
import { Webhook } from "standardwebhooks";
import { webhookSecretsKey, type Env } from "@conveyor/config";
import { PermanentJobError, RetryableJobError, WEBHOOK_DELIVERY_TYPE, webhookRetryDelayMs } from "@conveyor/contracts";
import { claimJobs, insertJobs, insertWebhookEndpoint, newId, sealSecret, writeOutcomes } from "@conveyor/db";
import { createLogger } from "@conveyor/logger";
import { createTestDatabase, type TestDatabase, insertOrgs } from "@conveyor/testkit";
import { startWebhookReceiver, type FakeServer, type RecordedRequest } from "@conveyor/testkit/fakes";
import { loadWorkerConfig } from "../../src/env";
import type { Resolver } from "@conveyor/net";
import { webhookDeliveryHandler, type DeliveryHandler } from "../../src/handlers/webhook-delivery";
import { handlerContext } from "../support/handler-context";

const local: Env = { ALLOW_PRIVATE_NETWORK: "true", WEBHOOK_ALLOW_HTTP: "true", WEBHOOK_TIMEOUT_MS: "2000" };
const discard = createLogger({ service: "test", stream: new Writable({ write: (_c, _e, done) => done() }) });

let database: TestDatabase;
let receiver: FakeServer;
let orgA: string;
let orgB: string;
const secretsSeen: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  receiver = await startWebhookReceiver();
  [orgA, orgB] = await insertOrgs(database.db, "A", "B");
});
afterEach(() => receiver.reset());
afterAll(async () => {
  // docs/reference/robustness.md#r37: no secret in any delivery record.
  const { rows } = await database.db.pool.query<{ row: string }>("SELECT row_to_json(d)::text AS row FROM webhook_deliveries d");
  for (const secret of secretsSeen) for (const { row } of rows) expect(row).not.toContain(secret.slice(6));
  await receiver.close();
  await database.drop();
});

const pool = () => database.db.pool;
const newSecret = () => {
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  secretsSeen.push(secret);
  return secret;
};

function handler(env: Env = local, resolve?: Resolver): DeliveryHandler {
  return webhookDeliveryHandler({ pool: pool(), settings: loadWorkerConfig(env), logger: discard }, resolve ? { resolve } : {});
}

async function endpoint(orgId: string, url: string, env: Env = local): Promise<{ id: string; secret: string }> {
  const id = newId();
  const secret = newSecret();
  const key = webhookSecretsKey(loadWorkerConfig(env));
  await insertWebhookEndpoint(pool(), { id, orgId, url, description: null, events: ["*"], sealedSecret: sealSecret(key, secret, id), createdBy: newId() });
  return { id, secret };
}

/** A finished job of `orgId`; returns its job.succeeded event's id and the job's id. */
async function succeededEvent(orgId: string): Promise<{ eventId: number; jobId: string }> {
  const jobId = newId();
  await insertJobs(pool(), [{ id: jobId, orgId, type: "word_count", payloadJson: '{"text":"the payload"}', maxRetries: 0, createdAt: new Date() }]);
  await claimJobs(pool(), [{ id: jobId, fence: "f" }]);
  await writeOutcomes(pool(), [], [{ id: jobId, fence: "f", status: "done", retries: 0, result: '{"words":2}', error: null, runAt: null }]);
  const { rows } = await pool().query<{ id: string }>("SELECT id::text FROM events WHERE job_id = $1 AND type = 'job.succeeded'", [jobId]);
  return { eventId: Number(rows[0]!.id), jobId };
}

const payload = (endpointId: string, eventId: number) => JSON.stringify({ endpoint_id: endpointId, event_id: eventId });
const ctx = (attempt = 1) => handlerContext({ type: WEBHOOK_DELIVERY_TYPE, attempt, maxRetries: 27 });

async function attempts(endpointId: string) {
  const { rows } = await pool().query<{ attempt: number; status_code: number | null; duration_ms: number; error: string | null; event_id: string }>(
    "SELECT attempt, status_code, duration_ms, error, event_id::text FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id",
    [endpointId],
  );
  return rows;
}

/** What the receiver's code would do: verify the signature with one of its secrets, then parse the CloudEvent. */
function receive(request: RecordedRequest, secret: string): CloudEvent<Record<string, unknown>> {
  new Webhook(secret).verify(request.body, {
    "webhook-id": String(request.headers["webhook-id"]),
    "webhook-timestamp": String(request.headers["webhook-timestamp"]),
    "webhook-signature": String(request.headers["webhook-signature"]),
  });
  return HTTP.toEvent({ headers: request.headers, body: request.body }) as CloudEvent<Record<string, unknown>>;
}

describe("delivering an event", () => {
  it("POSTs a CloudEvent that standardwebhooks verifies and the cloudevents SDK parses, and records the attempt", async () => {
    const target = await endpoint(orgA, `${receiver.url}/hooks/in?token=receiver-token`);
    const { eventId, jobId } = await succeededEvent(orgA);
    const result = await handler()(payload(target.id, eventId), ctx());

    const request = receiver.lastRequest();
    expect(request.method).toBe("POST");
    expect(request.headers["content-type"]).toBe("application/cloudevents+json; charset=utf-8");
    expect(request.headers["webhook-id"]).toBe(String(eventId));
    const event = receive(request, target.secret);
    expect(event).toMatchObject({
      specversion: "1.0",
      id: String(eventId),
      source: `/orgs/${orgA}`,
      type: "conveyor.job.succeeded",
      subject: jobId,
      datacontenttype: "application/json",
    });
    expect(event.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(event.data).toMatchObject({ id: jobId, status: "done", result: { words: 2 }, error: null });
    expect(event.data).not.toHaveProperty("payload");
    expect(request.body).not.toContain("the payload");

    expect(result).toMatchObject({ status: 200, event_id: eventId });
    expect(await attempts(target.id)).toEqual([{ attempt: 1, status_code: 200, duration_ms: expect.any(Number), error: null, event_id: String(eventId) }]);
  });

  it("signs with both secrets while a rotation is under 24 hours old; the receiver verifies with either", async () => {
    const target = await endpoint(orgA, receiver.url);
    const rotated = newSecret();
    const key = webhookSecretsKey(loadWorkerConfig(local));
    await pool().query(
      "UPDATE webhook_endpoints SET previous_secret = secret, secret = $2, previous_secret_expires_at = now() + interval '24 hours' WHERE id = $1",
      [target.id, sealSecret(key, rotated, target.id)],
    );
    const { eventId } = await succeededEvent(orgA);
    await handler()(payload(target.id, eventId), ctx());
    const request = receiver.lastRequest();
    expect(String(request.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(receive(request, rotated).id).toBe(String(eventId));
    expect(receive(request, target.secret).id).toBe(String(eventId));

    // Past its 24 hours, the previous secret signs no more.
    await pool().query("UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1", [target.id]);
    receiver.reset();
    await handler()(payload(target.id, eventId), ctx());
    const later = receiver.lastRequest();
    expect(String(later.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    expect(receive(later, rotated).id).toBe(String(eventId));
    expect(() => receive(later, target.secret)).toThrow();
  });

  it.each([
    [503, 1, 5_000, {}],
    [500, 2, 5 * 60_000, {}],
    [429, 3, 2 * 3600_000, { "retry-after": "7200" }],
    [408, 4, 3600_000, {}],
  ])(
    "retries a %i at attempt %i after at least %i ms (the schedule, or the receiver's Retry-After), and records it",
    async (status, attempt, delay, headers) => {
      const target = await endpoint(orgA, receiver.url);
      const { eventId } = await succeededEvent(orgA);
      receiver.failNext(status, { error: "busy" }, headers as Record<string, string>);
      const error = (await handler()(payload(target.id, eventId), ctx(attempt)).catch((e: unknown) => e)) as RetryableJobError;
      expect(error).toBeInstanceOf(RetryableJobError);
      expect(error.retryAfterMs).toBe(Math.max(webhookRetryDelayMs(attempt), delay));
      expect(await attempts(target.id)).toEqual([
        { attempt, status_code: status, duration_ms: expect.any(Number), error: expect.stringContaining(`answered ${status}`), event_id: String(eventId) },
      ]);
    },
  );

  it("retries a network error, recorded without a status code", async () => {
    const target = await endpoint(orgA, receiver.url);
    const { eventId } = await succeededEvent(orgA);
    receiver.dropNext();
    const error = await handler()(payload(target.id, eventId), ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryableJobError);
    expect(await attempts(target.id)).toEqual([
      { attempt: 1, status_code: null, duration_ms: expect.any(Number), error: expect.stringContaining("could not be reached"), event_id: String(eventId) },
    ]);
  });

  it("fails a 400 permanently, recorded; a later success ends the endpoint's run of failures", async () => {
    const target = await endpoint(orgA, receiver.url);
    const { eventId } = await succeededEvent(orgA);
    receiver.failNext(400, { error: "nope" });
    await expect(handler()(payload(target.id, eventId), ctx())).rejects.toThrow(PermanentJobError);
    const failing = await pool().query<{ failing_since: Date | null }>("SELECT failing_since FROM webhook_endpoints WHERE id = $1", [target.id]);
    expect(failing.rows[0]!.failing_since).toBeInstanceOf(Date);
    await handler()(payload(target.id, eventId), ctx());
    const recovered = await pool().query<{ failing_since: Date | null }>("SELECT failing_since FROM webhook_endpoints WHERE id = $1", [target.id]);
    expect(recovered.rows[0]!.failing_since).toBeNull();
    expect((await attempts(target.id)).map((a) => a.status_code)).toEqual([400, 200]);
  });

  it("disables an endpoint whose deliveries have failed for 3 days, saying why; later deliveries are skipped", async () => {
    const target = await endpoint(orgA, receiver.url);
    const { eventId } = await succeededEvent(orgA);
    await pool().query("UPDATE webhook_endpoints SET failing_since = now() - interval '3 days 1 minute' WHERE id = $1", [target.id]);
    receiver.failNext(503);
    const error = await handler()(payload(target.id, eventId), ctx(5)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermanentJobError);
    expect((error as Error).message).toContain("disabled");
    const { rows } = await pool().query<{ disabled_at: Date | null; disabled_reason: string | null }>(
      "SELECT disabled_at, disabled_reason FROM webhook_endpoints WHERE id = $1",
      [target.id],
    );
    expect(rows[0]!.disabled_at).toBeInstanceOf(Date);
    expect(rows[0]!.disabled_reason).toMatch(/^Disabled: every delivery has failed since \S+Z, for more than 72 hours\. Last error: .*answered 503/);

    receiver.reset();
    expect(await handler()(payload(target.id, eventId), ctx())).toEqual({ skipped: "the endpoint is disabled" });
    expect(receiver.requests).toEqual([]);
  });

  it("skips a deleted endpoint, an event that is gone, and an event of another org", async () => {
    const target = await endpoint(orgA, receiver.url);
    const { eventId: theirs } = await succeededEvent(orgB);
    expect(await handler()(payload(target.id, theirs), ctx())).toEqual({ skipped: "the event is no longer retained" });
    expect(await handler()(payload(target.id, 1), ctx())).toEqual({ skipped: "the event is no longer retained" });
    expect(await handler()(payload(newId(), theirs), ctx())).toEqual({ skipped: "the endpoint was deleted" });
    expect(receiver.requests).toEqual([]);
    expect(await attempts(target.id)).toEqual([]);
  });

  it("fails a payload that is not a delivery permanently", async () => {
    await expect(handler()(JSON.stringify({ endpoint_id: "x", event_id: 1 }), ctx())).rejects.toThrow(PermanentJobError);
    await expect(handler()(JSON.stringify({ endpoint_id: newId(), event_id: "1" }), ctx())).rejects.toThrow(PermanentJobError);
  });
});

describe("the SSRF guard at delivery time (guard on)", () => {
  const guardOn: Env = { WEBHOOK_ALLOW_HTTP: "true", WEBHOOK_TIMEOUT_MS: "2000" };

  it("refuses a URL that became private, recording the refusal", async () => {
    const target = await endpoint(orgA, `http://127.0.0.1:${receiver.port}/`, guardOn);
    const { eventId } = await succeededEvent(orgA);
    const error = await handler(guardOn)(payload(target.id, eventId), ctx()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(receiver.requests).toEqual([]);
    expect(await attempts(target.id)).toEqual([
      { attempt: 1, status_code: null, duration_ms: 0, error: expect.stringContaining("URL refused"), event_id: String(eventId) },
    ]);
  });

  it("connects to the address it checked, and refuses a rebound answer at the next attempt (DNS rebinding)", async () => {
    let calls = 0;
    // 4000::1 is public as far as the policy knows but unallocated; the second answer is the receiver's loopback.
    const resolve: Resolver = async () => (++calls === 1 ? ["4000::1"] : ["127.0.0.1"]);
    const target = await endpoint(orgA, `http://rebind.example:${receiver.port}/hook`, guardOn);
    const { eventId } = await succeededEvent(orgA);
    const deliver = handler(guardOn, resolve);

    const first = await deliver(payload(target.id, eventId), ctx(1)).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(RetryableJobError);
    const second = await deliver(payload(target.id, eventId), ctx(2)).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(PermanentJobError);
    expect((second as Error).message).toContain("rebind.example resolves to a forbidden address (127.0.0.1 is a loopback address)");
    expect(calls).toBe(2);
    expect(receiver.requests).toEqual([]);
    expect((await attempts(target.id)).map((a) => [a.attempt, a.status_code])).toEqual([
      [1, null],
      [2, null],
    ]);
  });
});
