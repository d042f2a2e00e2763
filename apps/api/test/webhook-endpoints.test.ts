// Webhook endpoints (docs/reference/events.md#events, docs/reference/robustness.md#r37): owners and admins manage them with a user token; the URL passes the
// same policy as webhook jobs; the secret is shown at creation and rotation only, stored sealed (never as given),
// and never logged; another org's endpoint is a 404, exactly like an unknown one.
import { webhookSecretsKey } from "@conveyor/config";
import { newId, openSecret, recordDeliveryAttempts } from "@conveyor/db";
import { addMember, createApiKey, createOrg, startTestApi, type TestApi, type TestMember } from "@conveyor/api/testing";
import { responseSchemas } from "../src/declarations/responses";
import { expectError } from "./support/expect-error";

let api: TestApi;
let owner: TestMember;
let admin: TestMember;
let member: TestMember;
let other: TestMember;
const secrets: string[] = [];

beforeAll(async () => {
  api = await startTestApi({ API_RATE_LIMIT_PER_SEC: "0" });
  owner = await createOrg(api.database.db, api.deps.config);
  admin = await addMember(api.database.db, api.deps.config, owner.orgId, "admin");
  member = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
  other = await createOrg(api.database.db, api.deps.config);
});
afterAll(async () => {
  // docs/reference/robustness.md#r31: no secret in anything the API logged.
  for (const secret of secrets) expect(api.logs()).not.toContain(secret.slice(6));
  await api.close();
});

const as = (m: TestMember) => ({ Authorization: `Bearer ${m.token}` });
const URL_OK = "https://hooks.example.com/conveyor?token=abc";
let made = 0;
/** A URL no endpoint of the org has yet (an org has one endpoint per URL). */
const freshUrl = () => `https://hooks.example.com/conveyor/${++made}?token=abc`;

async function create(by: TestMember, body: object = { url: freshUrl(), events: ["job.succeeded"] }) {
  const res = await api.request.post("/webhook-endpoints").set(as(by)).send(body);
  if (res.status === 201) secrets.push(res.body.secret);
  return res;
}

describe("POST /webhook-endpoints", () => {
  it("creates an endpoint for an owner or an admin and shows its secret once, in the documented shape", async () => {
    for (const by of [owner, admin]) {
      const url = freshUrl();
      const res = await create(by, { url, events: ["job.succeeded", "job.failed"], description: "Billing" });
      expect(res.status).toBe(201);
      expect(res.headers["cache-control"]).toBe("no-store");
      expect(responseSchemas.CreatedWebhookEndpoint.validate(res.body).error).toBeUndefined();
      expect(res.body).toMatchObject({
        url,
        events: ["job.succeeded", "job.failed"],
        description: "Billing",
        failing_since: null,
        disabled_at: null,
        disabled_reason: null,
        previous_secret_expires_at: null,
      });
      expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    }
  });

  it("stores the secret sealed under WEBHOOK_SECRETS_KEY, never as given, and never shows it again", async () => {
    const { body } = await create(owner);
    const { rows } = await api.database.db.pool.query<{ secret: Buffer }>("SELECT secret FROM webhook_endpoints WHERE id = $1", [body.id]);
    const stored = rows[0]!.secret;
    expect(stored.toString("latin1")).not.toContain(body.secret);
    expect(stored.toString("latin1")).not.toContain(body.secret.slice(6));
    expect(openSecret(webhookSecretsKey(api.deps.config), stored, body.id)).toBe(body.secret);
    // Bound to its row: the same bytes do not open for another endpoint.
    expect(() => openSecret(webhookSecretsKey(api.deps.config), stored, newId())).toThrow();

    const list = await api.request.get("/webhook-endpoints").set(as(owner));
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain(body.secret.slice(6));
    for (const item of list.body) expect(responseSchemas.WebhookEndpoint.validate(item).error).toBeUndefined();
    const deliveries = await api.request.get(`/webhook-endpoints/${body.id}/deliveries`).set(as(owner));
    expect(JSON.stringify(deliveries.body)).not.toContain(body.secret.slice(6));
  });

  it("refuses members (403) and API keys (403), and needs a credential (401)", async () => {
    expectError(await create(member), 403, "forbidden");
    const key = await createApiKey(api.database.db, owner);
    for (const [method, path] of [
      ["post", "/webhook-endpoints"],
      ["get", "/webhook-endpoints"],
      ["delete", `/webhook-endpoints/${newId()}`],
      ["post", `/webhook-endpoints/${newId()}/rotate-secret`],
      ["get", `/webhook-endpoints/${newId()}/deliveries`],
      ["patch", `/webhook-endpoints/${newId()}`],
      ["post", `/webhook-endpoints/${newId()}/redeliver`],
      ["post", `/webhook-endpoints/${newId()}/test`],
    ] as const) {
      expectError(
        await api.request[method](path)
          .set("X-API-Key", key.key)
          .send({ url: URL_OK, events: ["*"] }),
        403,
        "forbidden",
      );
      expectError(
        await api.request[method](path)
          .set(as(member))
          .send({ url: URL_OK, events: ["*"] }),
        403,
        "forbidden",
      );
      expectError(await api.request[method](path).send({ url: URL_OK, events: ["*"] }), 401, "unauthorized");
    }
  });

  it.each([
    ["http (without WEBHOOK_ALLOW_HTTP)", "http://hooks.example.com/x", "url"],
    ["a loopback address", "https://127.0.0.1/x", "url"],
    ["localhost", "https://localhost/x", "url"],
    ["a private address", "https://10.1.2.3/x", "url"],
    ["the metadata address", "https://169.254.169.254/latest", "url"],
    ["an integer IPv4 form", "https://2130706433/x", "url"],
    ["an internal host name", "https://metadata.google.internal/x", "url"],
    ["credentials in the URL", "https://user:pass@hooks.example.com/x", "url"],
    ["a malformed URL", "not a url", "url"],
    ["file:", "file:///etc/passwd", "url"],
  ])("refuses %s with 400 validation_failed", async (_what, url, path) => {
    const res = await create(owner, { url, events: ["*"] });
    expectError(res, 400, "validation_failed");
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual([path]);
  });

  it.each([
    ["an unknown event type", { url: URL_OK, events: ["job.completed"] }, "events.0"],
    ["no event type", { url: URL_OK, events: [] }, "events"],
    ["a repeated event type", { url: URL_OK, events: ["job.failed", "job.failed"] }, "events.1"],
    ["no url", { events: ["*"] }, "url"],
    ["an unknown field", { url: URL_OK, events: ["*"], secret: "whsec_mine" }, "secret"],
    ["a long description", { url: URL_OK, events: ["*"], description: "x".repeat(501) }, "description"],
  ])("refuses %s with 400 validation_failed", async (_what, body, path) => {
    const res = await create(owner, body);
    expectError(res, 400, "validation_failed");
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
  });

  it("accepts http and private addresses only when the deployment allows them", async () => {
    const local = await startTestApi({ WEBHOOK_ALLOW_HTTP: "true", ALLOW_PRIVATE_NETWORK: "true" });
    try {
      const localOwner = await createOrg(local.database.db, local.deps.config);
      const res = await local.request
        .post("/webhook-endpoints")
        .set(as(localOwner))
        .send({ url: "http://127.0.0.1:8080/hook", events: ["*"] });
      expect(res.status).toBe(201);
      secrets.push(res.body.secret);
      expect(local.logs()).not.toContain(res.body.secret.slice(6));
    } finally {
      await local.close();
    }
  });
});

describe("the other endpoints", () => {
  it("lists the org's endpoints only, oldest first", async () => {
    const mine = (await create(owner, { url: "https://a.example.com/", events: ["*"] })).body;
    const theirs = (await create(other, { url: "https://b.example.com/", events: ["*"] })).body;
    const list = (await api.request.get("/webhook-endpoints").set(as(admin))).body as { id: string }[];
    expect(list.map((e) => e.id)).toContain(mine.id);
    expect(list.map((e) => e.id)).not.toContain(theirs.id);
    expect(list.map((e) => e.id)).toEqual([...list.map((e) => e.id)].sort());
  });

  it("is 404 for another org's endpoint, an unknown id and a malformed one — on every endpoint", async () => {
    const theirs = (await create(other)).body;
    for (const id of [theirs.id, newId(), "nope"]) {
      expectError(
        await api.request
          .patch(`/webhook-endpoints/${id}`)
          .set(as(owner))
          .send({ events: ["*"] }),
        404,
        "not_found",
      );
      expectError(await api.request.post(`/webhook-endpoints/${id}/redeliver`).set(as(owner)).send({ event_id: 1 }), 404, "not_found");
      expectError(await api.request.post(`/webhook-endpoints/${id}/test`).set(as(owner)), 404, "not_found");
      expectError(await api.request.delete(`/webhook-endpoints/${id}`).set(as(owner)), 404, "not_found");
      expectError(await api.request.post(`/webhook-endpoints/${id}/rotate-secret`).set(as(owner)), 404, "not_found");
      expectError(await api.request.get(`/webhook-endpoints/${id}/deliveries`).set(as(owner)), 404, "not_found");
    }
    // Untouched: the other org still has it, as it was, with its secret.
    const list = (await api.request.get("/webhook-endpoints").set(as(other))).body as { id: string; events: string[] }[];
    expect(list.find((e) => e.id === theirs.id)?.events).toEqual(["job.succeeded"]);
  });

  it("deletes an endpoint (204), after which it is gone", async () => {
    const { body } = await create(owner);
    expect((await api.request.delete(`/webhook-endpoints/${body.id}`).set(as(admin))).status).toBe(204);
    expectError(await api.request.delete(`/webhook-endpoints/${body.id}`).set(as(admin)), 404, "not_found");
    const list = (await api.request.get("/webhook-endpoints").set(as(owner))).body as { id: string }[];
    expect(list.map((e) => e.id)).not.toContain(body.id);
  });

  it("rotates the secret: a new one shown once, the previous one kept for 24 h", async () => {
    const { body } = await create(owner);
    const res = await api.request.post(`/webhook-endpoints/${body.id}/rotate-secret`).set(as(owner));
    expect(res.status).toBe(200);
    expect(res.headers["cache-control"]).toBe("no-store");
    secrets.push(res.body.secret);
    expect(responseSchemas.CreatedWebhookEndpoint.validate(res.body).error).toBeUndefined();
    expect(res.body.secret).not.toBe(body.secret);
    const expires = Date.parse(res.body.previous_secret_expires_at);
    expect(expires - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(24 * 3600_000);

    const { rows } = await api.database.db.pool.query<{ secret: Buffer; previous_secret: Buffer }>(
      "SELECT secret, previous_secret FROM webhook_endpoints WHERE id = $1",
      [body.id],
    );
    const key = webhookSecretsKey(api.deps.config);
    expect(openSecret(key, rows[0]!.secret, body.id)).toBe(res.body.secret);
    expect(openSecret(key, rows[0]!.previous_secret, body.id)).toBe(body.secret);
  });

  it("lists recent delivery attempts newest first, with status code, duration and time", async () => {
    const { body } = await create(owner);
    const jobId = newId();
    await recordDeliveryAttempts(
      api.database.db.pool,
      [
        {
          endpointId: body.id,
          eventId: 1048577,
          eventType: "job.succeeded",
          jobId,
          attempt: 1,
          statusCode: 503,
          durationMs: 12,
          error: "x answered 503",
          delivered: false,
        },
        { endpointId: body.id, eventId: 1048577, eventType: "job.succeeded", jobId, attempt: 2, statusCode: 200, durationMs: 8, error: null, delivered: true },
      ],
      3 * 24 * 3600_000,
    );
    const res = await api.request.get(`/webhook-endpoints/${body.id}/deliveries?limit=10`).set(as(owner));
    expect(res.status).toBe(200);
    for (const item of res.body) expect(responseSchemas.WebhookDelivery.validate(item).error).toBeUndefined();
    expect(res.body.map((d: { attempt: number; status_code: number }) => [d.attempt, d.status_code])).toEqual([
      [2, 200],
      [1, 503],
    ]);
    expect(JSON.stringify(res.body)).not.toContain(jobId);
    expectError(await api.request.get(`/webhook-endpoints/${body.id}/deliveries?limit=0`).set(as(owner)), 400, "validation_failed");
    // The other org cannot read them.
    expectError(await api.request.get(`/webhook-endpoints/${body.id}/deliveries`).set(as(other)), 404, "not_found");
  });
});

describe("webhook tooling (issue 23 #11)", () => {
  const auditOf = async (targetId: string) =>
    (
      await api.database.db.pool.query<{ action: string; changes: unknown; details: unknown; org_id: string }>(
        "SELECT action, changes, details, org_id FROM audit_log WHERE target_id = $1 ORDER BY time, id",
        [targetId],
      )
    ).rows;
  const deliveryJobs = async (endpointId: string) =>
    (
      await api.database.db.pool.query<{ payload: Record<string, unknown>; max_retries: number; org_id: string }>(
        "SELECT payload, max_retries, org_id FROM jobs WHERE type = '_webhook_delivery' AND payload->>'endpoint_id' = $1 ORDER BY id",
        [endpointId],
      )
    ).rows;

  it("refuses a second endpoint with the same URL in the org (409 webhook_url_taken, at the url), written another way too", async () => {
    const url = freshUrl();
    expect((await create(owner, { url, events: ["*"] })).status).toBe(201);
    for (const again of [url, url.replace("https://hooks.example.com", "HTTPS://Hooks.Example.COM:443")]) {
      const res = await create(admin, { url: again, events: ["job.failed"] });
      expectError(res, 409, "webhook_url_taken");
      expect(res.body.error.details).toEqual([{ path: "url", message: "is already an endpoint of your organization" }]);
    }
    // Another organization may use the same receiver.
    expect((await create(other, { url, events: ["*"] })).status).toBe(201);
  });

  it("edits an endpoint's URL, events and description (200), audited without the URL, and refuses a taken or unsafe URL", async () => {
    const { body } = await create(owner, { url: freshUrl(), events: ["job.succeeded"], description: "Billing" });
    const taken = freshUrl();
    expect((await create(owner, { url: taken, events: ["*"] })).status).toBe(201);
    const moved = `https://receiver.example.org/hooks/${newId()}?token=secret-path`;
    const res = await api.request
      .patch(`/webhook-endpoints/${body.id}`)
      .set(as(admin))
      .send({ url: moved, events: ["job.failed", "job.cancelled"], description: "" });
    expect(res.status).toBe(200);
    expect(responseSchemas.WebhookEndpoint.validate(res.body).error).toBeUndefined();
    expect(res.body).toMatchObject({ id: body.id, url: moved, events: ["job.failed", "job.cancelled"], description: null });
    const listed = ((await api.request.get("/webhook-endpoints").set(as(owner))).body as { id: string; url: string }[]).find((e) => e.id === body.id);
    expect(listed?.url).toBe(moved);

    const [, updated] = await auditOf(body.id);
    expect(updated).toMatchObject({
      action: "webhook_endpoint.update",
      org_id: owner.orgId,
      changes: {
        host: { before: "hooks.example.com", after: "receiver.example.org" },
        events: { before: ["job.succeeded"], after: ["job.failed", "job.cancelled"] },
        description: { before: "Billing", after: null },
      },
      details: { url_changed: true },
    });
    expect(JSON.stringify(updated)).not.toContain("secret-path");

    expectError(await api.request.patch(`/webhook-endpoints/${body.id}`).set(as(owner)).send({ url: taken }), 409, "webhook_url_taken");
    // Its own URL is not "taken".
    expect(
      (
        await api.request
          .patch(`/webhook-endpoints/${body.id}`)
          .set(as(owner))
          .send({ url: moved, events: ["*"] })
      ).status,
    ).toBe(200);
    for (const [patch, path] of [
      [{ url: "https://10.0.0.1/x" }, "url"],
      [{ url: "http://hooks.example.com/x" }, "url"],
      [{ url: "https://169.254.169.254/latest" }, "url"],
      [{ events: [] }, "events"],
      [{ events: ["job.done"] }, "events.0"],
      [{ secret: "whsec_mine" }, "secret"],
      [{ enabled: "yes" }, "enabled"],
      [{}, ""],
    ] as const) {
      const refused = await api.request.patch(`/webhook-endpoints/${body.id}`).set(as(owner)).send(patch);
      expectError(refused, 400, "validation_failed");
      if (path) expect(refused.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    expect(((await api.request.get("/webhook-endpoints").set(as(owner))).body as { id: string; url: string }[]).find((e) => e.id === body.id)?.url).toBe(moved);
  });

  it("turns an endpoint off and on again: on ends a disabling for failures and its run of failures", async () => {
    const { body } = await create(owner);
    const off = await api.request.patch(`/webhook-endpoints/${body.id}`).set(as(owner)).send({ enabled: false });
    expect(off.status).toBe(200);
    expect(off.body.disabled_at).not.toBeNull();
    expect(off.body.disabled_reason).toBe("Turned off by an owner or an admin.");
    await api.database.db.pool.query(
      "UPDATE webhook_endpoints SET failing_since = now() - interval '4 days', disabled_reason = 'Disabled: every delivery failed' WHERE id = $1",
      [body.id],
    );
    const on = await api.request.patch(`/webhook-endpoints/${body.id}`).set(as(owner)).send({ enabled: true });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ disabled_at: null, disabled_reason: null, failing_since: null });
    const actions = (await auditOf(body.id)).map((e) => [e.action, (e.changes as Record<string, unknown> | null)?.enabled]);
    expect(actions.slice(1)).toEqual([
      ["webhook_endpoint.update", { before: true, after: false }],
      ["webhook_endpoint.update", { before: false, after: true }],
    ]);
  });

  it("queues a redelivery of one of the org's events (202, one attempt) and a test event, audited; refuses a disabled endpoint and others' events", async () => {
    const { body } = await create(owner, { url: freshUrl(), events: ["job.failed"] });
    const job = await api.request
      .post("/jobs")
      .set(as(owner))
      .send({ type: "chat_notify", payload: { channel: "#x", text: "y" } });
    const theirJob = await api.request
      .post("/jobs")
      .set(as(other))
      .send({ type: "chat_notify", payload: { channel: "#x", text: "y" } });
    const eventOf = async (jobId: string) =>
      Number((await api.database.db.pool.query<{ id: string }>("SELECT id::text FROM events WHERE job_id = $1 ORDER BY id LIMIT 1", [jobId])).rows[0]!.id);
    const [ours, theirs] = [await eventOf(job.body.id), await eventOf(theirJob.body.id)];

    // job.created, although the endpoint receives job.failed only: a person asked for it.
    const res = await api.request.post(`/webhook-endpoints/${body.id}/redeliver`).set(as(admin)).send({ event_id: ours });
    expect(res.status).toBe(202);
    expect(responseSchemas.QueuedWebhookDelivery.validate(res.body).error).toBeUndefined();
    expect(res.body).toEqual({ endpoint_id: body.id, event_id: ours, event_type: "job.created", trigger: "redelivery" });
    const test = await api.request.post(`/webhook-endpoints/${body.id}/test`).set(as(owner));
    expect(test.status).toBe(202);
    expect(test.body).toEqual({ endpoint_id: body.id, event_id: null, event_type: "webhook.test", trigger: "test" });

    const jobs = await deliveryJobs(body.id);
    expect(jobs).toHaveLength(2);
    expect(jobs[0]).toMatchObject({ org_id: owner.orgId, max_retries: 0, payload: { endpoint_id: body.id, event_id: ours, trigger: "redelivery" } });
    expect(jobs[1]).toMatchObject({ org_id: owner.orgId, max_retries: 0, payload: { endpoint_id: body.id, trigger: "test" } });
    expect(String((jobs[1]!.payload.test as { id: string }).id)).toMatch(/^test_/);
    expect((await auditOf(body.id)).map((e) => [e.action, e.details])).toEqual([
      ["webhook_endpoint.create", null],
      ["webhook_endpoint.redeliver", { event_id: ours, event_type: "job.created" }],
      ["webhook_endpoint.test", null],
    ]);

    // Another org's event, an unknown one, and bad bodies.
    expectError(await api.request.post(`/webhook-endpoints/${body.id}/redeliver`).set(as(owner)).send({ event_id: theirs }), 410, "event_expired");
    expectError(await api.request.post(`/webhook-endpoints/${body.id}/redeliver`).set(as(owner)).send({ event_id: 1 }), 410, "event_expired");
    for (const bad of [{}, { event_id: "x" }, { event_id: 0 }, { event_id: 1.5 }, { event_id: 1, more: true }]) {
      expectError(await api.request.post(`/webhook-endpoints/${body.id}/redeliver`).set(as(owner)).send(bad), 400, "validation_failed");
    }
    // Disabled: nothing is queued until it is enabled again.
    await api.request.patch(`/webhook-endpoints/${body.id}`).set(as(owner)).send({ enabled: false });
    expectError(await api.request.post(`/webhook-endpoints/${body.id}/redeliver`).set(as(owner)).send({ event_id: ours }), 409, "webhook_endpoint_disabled");
    expectError(await api.request.post(`/webhook-endpoints/${body.id}/test`).set(as(owner)), 409, "webhook_endpoint_disabled");
    expect(await deliveryJobs(body.id)).toHaveLength(2);
    // The other org's endpoint cannot be reached through ours, nor ours through theirs.
    expectError(await api.request.post(`/webhook-endpoints/${body.id}/test`).set(as(other)), 404, "not_found");
  });

  it("lists each attempt with its id, trigger, the job it is about and the start of the receiver's answer", async () => {
    const { body } = await create(owner);
    const subject = newId();
    const jobId = newId();
    await recordDeliveryAttempts(
      api.database.db.pool,
      [
        {
          endpointId: body.id,
          eventId: 1048579,
          eventType: "job.failed",
          jobId,
          subjectJobId: subject,
          trigger: "redelivery",
          attempt: 1,
          statusCode: 500,
          durationMs: 9,
          error: "x answered 500",
          responseBody: "é".repeat(512),
          responseTruncated: true,
          delivered: false,
        },
        {
          endpointId: body.id,
          eventId: null,
          eventType: "webhook.test",
          jobId,
          trigger: "test",
          attempt: 1,
          statusCode: 204,
          durationMs: 3,
          error: null,
          responseBody: "",
          delivered: true,
        },
      ],
      3 * 24 * 3600_000,
    );
    const res = await api.request.get(`/webhook-endpoints/${body.id}/deliveries`).set(as(owner));
    expect(res.status).toBe(200);
    for (const item of res.body) expect(responseSchemas.WebhookDelivery.validate(item).error).toBeUndefined();
    const [test, redelivery] = res.body;
    expect(test).toMatchObject({
      event_id: null,
      event_type: "webhook.test",
      job_id: null,
      trigger: "test",
      status_code: 204,
      response_body: "",
      response_truncated: false,
    });
    expect(redelivery).toMatchObject({ event_id: 1048579, job_id: subject, trigger: "redelivery", response_body: "é".repeat(512), response_truncated: true });
    expect(redelivery.id).toBeLessThan(test.id);
    expect(JSON.stringify(res.body)).not.toContain(jobId);
  });
});
