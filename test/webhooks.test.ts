// Webhook endpoints end to end (docs/reference/events.md#events, docs/reference/robustness.md#r37): an owner adds an endpoint over the API; worker processes
// relay the org's job events to it as CloudEvents that a local receiver verifies with the `standardwebhooks` package
// and parses with the `cloudevents` SDK; failures are retried on the schedule and recorded; a rotation signs with
// both secrets. The second organization's endpoint never receives the first one's events, and no secret reaches a
// log or a delivery record.
import { randomBytes } from "node:crypto";
import { HTTP, type CloudEvent } from "cloudevents";
import { Webhook } from "standardwebhooks";
import { webhookSecretsKey } from "@conveyor/config";
import { insertWebhookEndpoint, newId, sealSecret } from "@conveyor/db";
import { waitFor } from "@conveyor/testkit";
import { startFakeServer, type FakeServer, type RecordedRequest } from "@conveyor/testkit/fakes";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

const local = { WEBHOOK_ALLOW_HTTP: "true", ALLOW_PRIVATE_NETWORK: "true" };

let stack: Stack;
let auth: Record<string, string>;
const secrets: string[] = [];

/** A customer's receiver: 401 unless the signature verifies with one of `secrets`; else what the test scripted, or 204. */
type Receiver = FakeServer & { secrets: string[]; verified: CloudEvent<Record<string, unknown>>[] };
async function startReceiver(): Promise<Receiver> {
  const state = { secrets: [] as string[], verified: [] as CloudEvent<Record<string, unknown>>[] };
  const server = await startFakeServer({
    refuse: (request) => {
      const verifies = state.secrets.some((secret) => {
        try {
          new Webhook(secret).verify(request.body, headersOf(request));
          return true;
        } catch {
          return false;
        }
      });
      return verifies ? undefined : { status: 401, body: { error: "bad signature" } };
    },
    answer: (request) => {
      state.verified.push(HTTP.toEvent({ headers: request.headers, body: request.body }) as CloudEvent<Record<string, unknown>>);
      return { status: 204 };
    },
  });
  return Object.assign(server, state);
}

const headersOf = (request: RecordedRequest) => ({
  "webhook-id": String(request.headers["webhook-id"]),
  "webhook-timestamp": String(request.headers["webhook-timestamp"]),
  "webhook-signature": String(request.headers["webhook-signature"]),
});

let theirReceiver: Receiver;
const receivers: Receiver[] = [];

/** A receiver of this test's own, closed after it. */
async function newReceiver(): Promise<Receiver> {
  const receiver = await startReceiver();
  receivers.push(receiver);
  return receiver;
}

beforeAll(async () => {
  stack = await startStack({ apiEnv: local, workerEnv: local });
  auth = { Authorization: `Bearer ${stack.owner.token}` };
  theirReceiver = await startReceiver();
  // The second org's endpoint takes everything it is sent: it must be sent nothing of ours.
  const id = newId();
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  secrets.push(secret);
  theirReceiver.secrets.push(secret);
  await insertWebhookEndpoint(stack.api.database.db.pool, {
    id,
    orgId: stack.otherOrg.orgId,
    url: theirReceiver.url,
    description: null,
    events: ["*"],
    sealedSecret: sealSecret(webhookSecretsKey(stack.api.deps.config), secret, id),
    createdBy: newId(),
  });
  await stack.startWorker();
}, 60_000);
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  await stack.expectOtherOrgUntouched();
});
afterAll(async () => {
  // docs/reference/robustness.md#r31/docs/reference/robustness.md#r37: no secret in the API's or the workers' output, nor in a delivery record.
  const { rows } = await stack.api.database.db.pool.query<{ row: string }>("SELECT row_to_json(d)::text AS row FROM webhook_deliveries d");
  const output = [stack.api.logs(), ...stack.workers.map((w) => w.output())].join("\n");
  for (const secret of secrets) {
    expect(output).not.toContain(secret.slice(6));
    for (const { row } of rows) expect(row).not.toContain(secret.slice(6));
  }
  await theirReceiver.close();
  await stack.close();
});

async function addEndpoint(events: string[], url: string): Promise<{ id: string; secret: string }> {
  const res = await stack.api.request.post("/webhook-endpoints").set(auth).send({ url, events });
  expect(res.status).toBe(201);
  secrets.push(res.body.secret);
  return { id: res.body.id, secret: res.body.secret };
}

async function deliveriesOf(
  endpointId: string,
): Promise<{ event_id: number; event_type: string; attempt: number; status_code: number | null; duration_ms: number; error: string | null }[]> {
  const res = await stack.api.request.get(`/webhook-endpoints/${endpointId}/deliveries`).set(auth);
  expect(res.status).toBe(200);
  return res.body;
}

const ofJob = (receiver: Receiver, id: string) => receiver.verified.filter((e) => e.subject === id);

describe("webhook deliveries", () => {
  it("POSTs each subscribed event of the org as a verified CloudEvent, with the event id as webhook-id", async () => {
    const receiver = await newReceiver();
    const endpoint = await addEndpoint(["job.created", "job.succeeded"], receiver.url);
    receiver.secrets.push(endpoint.secret);
    const { body } = await stack.post("/jobs", { type: "word_count", payload: { text: "deliver me" } });
    await waitFor(() => ofJob(receiver, body.id).length >= 2, "both events delivered", 30_000);

    // Deliveries are independent jobs: they may arrive in any order (receivers order them by id or time).
    const events = ofJob(receiver, body.id).sort((a, b) => Number(a.id) - Number(b.id));
    expect(events.map((e) => e.type)).toEqual(["conveyor.job.created", "conveyor.job.succeeded"]);
    const stored = await stack.api.database.db.pool.query<{ id: string }>(
      "SELECT id::text FROM events WHERE job_id = $1 AND type IN ('job.created', 'job.succeeded') ORDER BY events.id",
      [body.id],
    );
    expect(events.map((e) => e.id)).toEqual(stored.rows.map((r) => r.id));
    for (const event of events) {
      expect(event).toMatchObject({ specversion: "1.0", source: `/orgs/${stack.owner.orgId}`, subject: body.id, datacontenttype: "application/json" });
      expect(event.data).not.toHaveProperty("payload");
    }
    expect(events[1]!.data).toEqual(expect.objectContaining({ id: body.id, status: "done", result: expect.objectContaining({ words: 2 }) }));
    const requests = receiver.requests.filter((r) => events.some((e) => e.id === r.headers["webhook-id"]));
    expect(requests.map((r) => r.headers["content-type"])).toEqual([
      "application/cloudevents+json; charset=utf-8",
      "application/cloudevents+json; charset=utf-8",
    ]);

    await waitFor(async () => (await deliveriesOf(endpoint.id)).length >= 2, "the attempts recorded");
    const recorded = (await deliveriesOf(endpoint.id)).sort((a, b) => a.event_id - b.event_id);
    expect(recorded.map((d) => [d.event_id, d.event_type, d.attempt, d.status_code, d.error])).toEqual([
      [Number(events[0]!.id), "job.created", 1, 204, null],
      [Number(events[1]!.id), "job.succeeded", 1, 204, null],
    ]);
  });

  it("retries a 503 after 5 s and a dropped connection, recording every attempt with its status code and duration", async () => {
    const receiver = await newReceiver();
    const endpoint = await addEndpoint(["job.succeeded"], receiver.url);
    receiver.secrets.push(endpoint.secret);
    receiver.failNext(503, { error: "down for a moment" });
    const { body } = await stack.post("/jobs", { type: "word_count", payload: { text: "retry me" } });
    await waitFor(async () => (await deliveriesOf(endpoint.id)).length >= 1, "the first attempt", 30_000);
    const firstAt = Date.now();
    receiver.dropNext();
    await waitFor(async () => (await deliveriesOf(endpoint.id)).length >= 2, "the second attempt", 30_000);
    expect(Date.now() - firstAt).toBeGreaterThan(4_000);

    // The third waits 5 minutes by the schedule; the test moves its due time instead of waiting. The delivery row is
    // written by the attempt, the job's retry by its outcome a moment later: wait for the retry to be planned.
    const pool = stack.api.database.db.pool;
    const rows = await waitFor(
      async () => {
        const { rows: found } = await pool.query<{ id: string; run_at: Date | null }>(
          "SELECT id, run_at FROM jobs WHERE type = '_webhook_delivery' AND payload->>'endpoint_id' = $1 AND status = 'pending' AND retries = 2",
          [endpoint.id],
        );
        return found.length ? found : null;
      },
      "the third attempt planned",
      30_000,
    );
    expect(rows[0]!.run_at!.getTime() - Date.now()).toBeGreaterThan(4 * 60_000);
    await pool.query("UPDATE jobs SET run_at = now() WHERE id = $1", [rows[0]!.id]);
    await pool.query("UPDATE job_queue SET due_at = now() WHERE job_id = $1", [rows[0]!.id]);
    await waitFor(() => ofJob(receiver, body.id).length >= 1, "the delivery after the failures", 30_000);
    // The receiver has it before the attempt that sent it has written its delivery row: wait for the row.
    await waitFor(async () => (await deliveriesOf(endpoint.id)).length >= 3, "the third attempt recorded", 30_000);

    const recorded = (await deliveriesOf(endpoint.id)).reverse();
    expect(recorded.map((d) => [d.attempt, d.status_code])).toEqual([
      [1, 503],
      [2, null],
      [3, 204],
    ]);
    expect(recorded[0]!.error).toContain("answered 503");
    expect(recorded[1]!.error).toContain("could not be reached");
    for (const d of recorded) expect(d.duration_ms).toBeGreaterThanOrEqual(0);
    const endpoints = (await stack.api.request.get("/webhook-endpoints").set(auth)).body as { id: string; failing_since: string | null }[];
    expect(endpoints.find((e) => e.id === endpoint.id)!.failing_since).toBeNull();
  }, 60_000);

  it("signs with the old and the new secret after a rotation; receivers holding either verify", async () => {
    const receiver = await newReceiver();
    const endpoint = await addEndpoint(["job.succeeded"], receiver.url);
    const rotated = await stack.api.request.post(`/webhook-endpoints/${endpoint.id}/rotate-secret`).set(auth);
    expect(rotated.status).toBe(200);
    secrets.push(rotated.body.secret);
    // Only the old secret: a receiver that has not switched yet still accepts the delivery.
    receiver.secrets.push(endpoint.secret);
    const { body } = await stack.post("/jobs", { type: "word_count", payload: { text: "rotate" } });
    await waitFor(() => ofJob(receiver, body.id).length >= 1, "the delivery", 30_000);
    const request = receiver.requests.find((r) => r.headers["webhook-id"] === ofJob(receiver, body.id)[0]!.id)!;
    expect(() => new Webhook(rotated.body.secret).verify(request.body, headersOf(request))).not.toThrow();
    expect(() => new Webhook(endpoint.secret).verify(request.body, headersOf(request))).not.toThrow();
    expect(String(request.headers["webhook-signature"]).split(" ")).toHaveLength(2);
  });

  it("disables an endpoint that has failed for 3 days; its owners see why, and it is sent nothing more", async () => {
    const receiver = await newReceiver();
    const endpoint = await addEndpoint(["job.succeeded"], receiver.url);
    receiver.secrets.push(endpoint.secret);
    const pool = stack.api.database.db.pool;
    await pool.query("UPDATE webhook_endpoints SET failing_since = now() - interval '3 days 1 minute' WHERE id = $1", [endpoint.id]);
    receiver.failNext(500, { error: "still broken" });
    await stack.post("/jobs", { type: "word_count", payload: { text: "one more failure" } });

    const listed = await waitFor(
      async () => {
        const list = (await stack.api.request.get("/webhook-endpoints").set(auth)).body as {
          id: string;
          disabled_at: string | null;
          disabled_reason: string | null;
        }[];
        const found = list.find((e) => e.id === endpoint.id)!;
        return found.disabled_at ? found : null;
      },
      "the endpoint to be disabled",
      30_000,
    );
    expect(listed.disabled_reason).toMatch(/^Disabled: every delivery has failed since .+ for more than 72 hours\. Last error: .*answered 500/);

    const { body } = await stack.post("/jobs", { type: "word_count", payload: { text: "not delivered" } });
    await stack.waitForJob(body.id, (j) => j.status === "done");
    const passed = `SELECT 1 FROM events e JOIN event_cursors c ON c.name = 'webhook-relay' AND e.id <= c.last_event_id WHERE e.job_id = $1 AND e.type = 'job.succeeded'`;
    await waitFor(async () => ((await pool.query(passed, [body.id])).rowCount ?? 0) > 0, "the relay to pass the new job's event");
    const { rows } = await pool.query("SELECT 1 FROM jobs WHERE type = '_webhook_delivery' AND payload->>'endpoint_id' = $1", [endpoint.id]);
    expect(rows).toHaveLength(1);
    expect(receiver.requests).toHaveLength(1);
  });

  it("sends an event again and a test event on request, records the first KiB of each answer (never logged), and follows an edited URL (issue 23 #11)", async () => {
    const receiver = await newReceiver();
    const endpoint = await addEndpoint(["job.succeeded"], receiver.url);
    receiver.secrets.push(endpoint.secret);
    const marker = `answer-${newId()}`;
    // 3 KiB of answer, with a two-byte character across the 1 KiB cut.
    receiver.replyNext({
      status: 200,
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: `${marker}${"x".repeat(1023 - marker.length)}é${"y".repeat(2048)}`,
    });
    const { body } = await stack.post("/jobs", { type: "word_count", payload: { text: "send me twice" } });
    await waitFor(async () => (await deliveriesOf(endpoint.id)).length >= 1, "the first delivery", 30_000);
    const [first] = (await stack.api.request.get(`/webhook-endpoints/${endpoint.id}/deliveries`).set(auth)).body;
    expect(first).toMatchObject({ event_type: "job.succeeded", job_id: body.id, trigger: "event", status_code: 200, response_truncated: true });
    expect(first.response_body).toBe(`${marker}${"x".repeat(1023 - marker.length)}`);

    // Again, by hand: the same event, the same webhook-id, verified with the endpoint's secret.
    const again = await stack.api.request.post(`/webhook-endpoints/${endpoint.id}/redeliver`).set(auth).send({ event_id: first.event_id });
    expect(again.status).toBe(202);
    await waitFor(() => receiver.requests.filter((r) => r.headers["webhook-id"] === String(first.event_id)).length >= 2, "the redelivery", 30_000);
    expect(ofJob(receiver, body.id).map((e) => e.id)).toEqual([String(first.event_id)]);

    // A test event: its own type and id, about no job, signed like the others.
    receiver.replyNext({ status: 418, body: { error: "not a teapot" } });
    const test = await stack.api.request.post(`/webhook-endpoints/${endpoint.id}/test`).set(auth);
    expect(test.status).toBe(202);
    const testRequest = await waitFor(() => receiver.requests.find((r) => String(r.headers["webhook-id"]).startsWith("test_")), "the test event", 30_000);
    const testEvent = JSON.parse(testRequest.body) as Record<string, unknown>;
    expect(testEvent).toMatchObject({
      specversion: "1.0",
      type: "conveyor.webhook.test",
      source: `/orgs/${stack.owner.orgId}`,
      data: { endpoint_id: endpoint.id },
    });
    expect(testEvent).not.toHaveProperty("subject");
    expect(() => new Webhook(endpoint.secret).verify(testRequest.body, headersOf(testRequest))).not.toThrow();

    const recorded = await waitFor(
      async () => {
        const list = (await stack.api.request.get(`/webhook-endpoints/${endpoint.id}/deliveries`).set(auth)).body as Record<string, unknown>[];
        return list.length >= 3 ? list : null;
      },
      "both attempts recorded",
      30_000,
    );
    expect(recorded.map((d) => [d.trigger, d.event_id, d.job_id, d.status_code, d.attempt])).toEqual([
      ["test", null, null, 418, 1],
      ["redelivery", first.event_id, body.id, 204, 1],
      ["event", first.event_id, body.id, 200, 1],
    ]);
    expect(recorded[0]!.response_body).toBe('{"error":"not a teapot"}');
    // A person's deliveries are tried once: the 418 is not retried. The delivery's row is written by the attempt,
    // the job's outcome after it (its own transaction): read the job once it has one.
    const tests = await waitFor(
      async () => {
        const { rows } = await stack.api.database.db.pool.query<{ status: string; max_retries: number }>(
          "SELECT status, max_retries FROM jobs WHERE type = '_webhook_delivery' AND payload->>'trigger' = 'test' AND payload->>'endpoint_id' = $1",
          [endpoint.id],
        );
        return rows.length && !["pending", "processing"].includes(rows[0]!.status) ? rows : null;
      },
      "the test delivery's job settled",
      30_000,
    );
    expect(tests).toEqual([{ status: "failed", max_retries: 0 }]);

    // An edited URL: the next event goes to the new receiver, signed with the same secret.
    const moved = await newReceiver();
    moved.secrets.push(endpoint.secret);
    expect((await stack.api.request.patch(`/webhook-endpoints/${endpoint.id}`).set(auth).send({ url: moved.url })).status).toBe(200);
    const next = await stack.post("/jobs", { type: "word_count", payload: { text: "to the new address" } });
    await waitFor(() => ofJob(moved, next.body.id).length >= 1, "the delivery to the new URL", 30_000);
    expect(ofJob(receiver, next.body.id)).toEqual([]);

    // The answers are kept for the endpoint's owners, not written to any log.
    const output = [stack.api.logs(), ...stack.workers.map((w) => w.output())].join("\n");
    expect(output).not.toContain(marker);
  }, 90_000);

  it("never delivers the first org's events to the second org's endpoint", async () => {
    // Every job of the first org above was relayed (their deliveries exist); the second org wrote no events.
    const { rows } = await stack.api.database.db.pool.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM jobs WHERE type = '_webhook_delivery' AND org_id = $1",
      [stack.otherOrg.orgId],
    );
    expect(rows[0]!.n).toBe("0");
    expect(theirReceiver.requests).toEqual([]);
  });
});
