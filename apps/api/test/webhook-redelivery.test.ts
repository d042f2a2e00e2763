// Webhook delivery filters and bulk redelivery (issue 38): GET /webhook-endpoints/{id}/deliveries filters attempts by
// outcome (succeeded, failed, pending: failed with a retry planned), event type and time; POST
// /webhook-endpoints/{id}/redeliver-failed sends the failed ones matching a filter — each event once, never one the
// endpoint received since, still retries or has queued again — or the picked ones, in one audited action; dry_run
// counts without queueing. Refusals follow docs/reference/http.md#errors; another organization's endpoint is a 404.
import { newId, recordDeliveryAttempts, type DeliveryAttempt } from "@conveyor/db";
import { addMember, createOrg, startTestApi, type TestApi, type TestMember } from "@conveyor/api/testing";
import { responseSchemas } from "../src/declarations/responses";
import { expectError } from "./support/expect-error";

let api: TestApi;
let owner: TestMember;
let member: TestMember;
let other: TestMember;

beforeAll(async () => {
  api = await startTestApi({ API_RATE_LIMIT_PER_SEC: "0" });
  owner = await createOrg(api.database.db, api.deps.config);
  member = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
  other = await createOrg(api.database.db, api.deps.config);
});
afterAll(() => api.close());

const as = (m: TestMember) => ({ Authorization: `Bearer ${m.token}` });
let made = 0;

async function endpointOf(by: TestMember): Promise<string> {
  const res = await api.request
    .post("/webhook-endpoints")
    .set(as(by))
    .send({ url: `https://hooks.example.com/r/${++made}`, events: ["*"] });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

/** A job.created event of the org (a job enqueued through the API). */
async function eventOf(by: TestMember): Promise<number> {
  const job = await api.request
    .post("/jobs")
    .set(as(by))
    .send({ type: "chat_notify", payload: { channel: "#x", text: "y" } });
  expect(job.status).toBe(202);
  const { rows } = await api.database.db.pool.query<{ id: string }>("SELECT id::text FROM events WHERE job_id = $1 ORDER BY id LIMIT 1", [job.body.id]);
  return Number(rows[0]!.id);
}

function attempt(endpointId: string, eventId: number | null, jobId: string, ok: boolean, eventType = "job.created"): DeliveryAttempt {
  return {
    endpointId,
    eventId,
    eventType: eventId === null ? "webhook.test" : eventType,
    jobId,
    subjectJobId: null,
    trigger: eventId === null ? "test" : "event",
    attempt: 1,
    statusCode: ok ? 200 : 503,
    durationMs: 5,
    error: ok ? null : "hooks.example.com answered 503",
    responseBody: "",
    delivered: ok,
  };
}

const deliveriesOf = async (endpointId: string, query: Record<string, string> = {}) => {
  const res = await api.request.get(`/webhook-endpoints/${endpointId}/deliveries`).query(query).set(as(owner));
  expect(res.status).toBe(200);
  for (const item of res.body) expect(responseSchemas.WebhookDelivery.validate(item).error).toBeUndefined();
  return res.body as { id: number; event_id: number | null; event_type: string; outcome: string }[];
};
const redeliver = (endpointId: string, body: object, by = owner) =>
  api.request.post(`/webhook-endpoints/${endpointId}/redeliver-failed`).set(as(by)).send(body);
const queuedEvents = async (endpointId: string) =>
  (
    await api.database.db.pool.query<{ event_id: number; max_retries: number; trigger: string }>(
      `SELECT (payload->>'event_id')::float8 AS event_id, max_retries, payload->>'trigger' AS trigger FROM jobs
        WHERE type = '_webhook_delivery' AND payload->>'endpoint_id' = $1 AND status = 'pending' ORDER BY (payload->>'event_id')::bigint`,
      [endpointId],
    )
  ).rows;
const auditOf = async (endpointId: string) =>
  (
    await api.database.db.pool.query<{ action: string; details: unknown }>(
      "SELECT action, details FROM audit_log WHERE target_id = $1 AND action = 'webhook_endpoint.bulk_redeliver' ORDER BY time, id",
      [endpointId],
    )
  ).rows;

describe("webhook delivery filters and bulk redelivery", () => {
  let endpoint: string;
  let events: Record<"failed" | "recovered" | "retrying" | "typed" | "old", number>;
  let recoveredOk: number;

  beforeAll(async () => {
    endpoint = await endpointOf(owner);
    events = {
      failed: await eventOf(owner),
      recovered: await eventOf(owner),
      retrying: await eventOf(owner),
      typed: await eventOf(owner),
      old: await eventOf(owner),
    };
    // A delivery job still pending: its failed attempt will be tried again (outcome pending).
    await api.request.post(`/webhook-endpoints/${endpoint}/redeliver`).set(as(owner)).send({ event_id: events.retrying }).expect(202);
    const { rows } = await api.database.db.pool.query<{ id: string }>(
      "SELECT id FROM jobs WHERE type = '_webhook_delivery' AND payload->>'endpoint_id' = $1 AND status = 'pending'",
      [endpoint],
    );
    const retryingJob = rows[0]!.id;
    const recoveredJob = newId();
    await recordDeliveryAttempts(
      api.database.db.pool,
      [
        attempt(endpoint, events.failed, newId(), false),
        attempt(endpoint, events.recovered, recoveredJob, false),
        attempt(endpoint, events.recovered, recoveredJob, true),
        attempt(endpoint, events.retrying, retryingJob, false),
        attempt(endpoint, events.typed, newId(), false, "job.failed"),
        attempt(endpoint, events.old, newId(), false),
        attempt(endpoint, null, newId(), false),
      ],
      3 * 24 * 3600_000,
    );
    await api.database.db.pool.query("UPDATE webhook_deliveries SET at = now() - interval '2 days' WHERE endpoint_id = $1 AND event_id = $2", [
      endpoint,
      events.old,
    ]);
    const ok = (await deliveriesOf(endpoint)).find((d) => d.event_id === events.recovered && d.outcome === "succeeded");
    recoveredOk = ok!.id;
  });

  it("filters the deliveries by outcome, event type and time", async () => {
    const byOutcome = async (outcome: string) => (await deliveriesOf(endpoint, { outcome })).map((d) => d.event_id);
    expect(await byOutcome("succeeded")).toEqual([events.recovered]);
    expect(await byOutcome("pending")).toEqual([events.retrying]);
    // Failed means not delivered since (issue 48 #7): the recovered event's failed attempt is not listed.
    expect((await byOutcome("failed")).sort()).toEqual([events.failed, events.typed, events.old, null].sort());
    expect((await deliveriesOf(endpoint, { event_type: "job.failed" })).map((d) => d.event_id)).toEqual([events.typed]);
    const yesterday = new Date(Date.now() - 24 * 3600_000).toISOString();
    expect((await deliveriesOf(endpoint, { before: yesterday })).map((d) => d.event_id)).toEqual([events.old]);
    expect((await deliveriesOf(endpoint, { after: yesterday, outcome: "failed", event_type: "job.created" })).map((d) => d.event_id)).toEqual([events.failed]);
    for (const query of [{ outcome: "done" }, { event_type: "job.done" }, { after: "yesterday" }, { before: "2026-02-31" }, { colour: "red" }]) {
      expectError(await api.request.get(`/webhook-endpoints/${endpoint}/deliveries`).query(query).set(as(owner)), 400, "validation_failed");
    }
  });

  it("counts with dry_run, then sends each failed event once — none received since, retrying or already queued — audited once", async () => {
    const counted = await redeliver(endpoint, { filter: {}, dry_run: true });
    expect(counted.status).toBe(202);
    expect(responseSchemas.BulkWebhookRedelivery.validate(counted.body).error).toBeUndefined();
    expect(counted.body).toEqual({ events: 3, event_ids: [events.failed, events.typed, events.old].sort((a, b) => a - b), has_more: false, dry_run: true });
    expect(await auditOf(endpoint)).toEqual([]);
    const before = await queuedEvents(endpoint);

    const typed = await redeliver(endpoint, { filter: { event_type: "job.failed" }, dry_run: true });
    expect(typed.body.event_ids).toEqual([events.typed]);

    const yesterday = new Date(Date.now() - 24 * 3600_000).toISOString();
    const sent = await redeliver(endpoint, { filter: { after: yesterday } }, await addMember(api.database.db, api.deps.config, owner.orgId, "admin"));
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ events: 2, event_ids: [events.failed, events.typed].sort((a, b) => a - b), has_more: false, dry_run: false });
    const queued = (await queuedEvents(endpoint)).filter((q) => !before.some((b) => b.event_id === q.event_id));
    expect(queued).toEqual([events.failed, events.typed].sort((a, b) => a - b).map((event_id) => ({ event_id, max_retries: 0, trigger: "redelivery" })));
    expect(await auditOf(endpoint)).toEqual([{ action: "webhook_endpoint.bulk_redeliver", details: { events: 2, filter: { after: yesterday } } }]);

    // A second press: those two are queued already; only the old one is left.
    const again = await redeliver(endpoint, { filter: {}, dry_run: true });
    expect(again.body.event_ids).toEqual([events.old]);
  });

  it("sends the picked deliveries' events whatever their outcome, skipping a test delivery", async () => {
    const test = (await deliveriesOf(endpoint, { event_type: "webhook.test" }))[0]!;
    const res = await redeliver(endpoint, { delivery_ids: [recoveredOk, test.id] });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ events: 1, event_ids: [events.recovered], dry_run: false });
    expect((await auditOf(endpoint)).at(-1)).toEqual({ action: "webhook_endpoint.bulk_redeliver", details: { events: 1, deliveries: 2 } });
  });

  it("refuses bad bodies, members, other organizations and a disabled endpoint", async () => {
    for (const body of [
      {},
      { filter: {}, delivery_ids: [1] },
      { filter: { outcome: "failed" } },
      { filter: { after: "soon" } },
      { delivery_ids: [] },
      { delivery_ids: ["x"] },
      { delivery_ids: [1, 1] },
      { filter: {}, dry_run: "yes" },
      { filter: {}, org_id: other.orgId },
    ]) {
      expectError(await redeliver(endpoint, body), 400, "validation_failed");
    }
    expectError(await redeliver(endpoint, { filter: {} }, member), 403, "forbidden");
    expectError(await redeliver(endpoint, { filter: {} }, other), 404, "not_found");
    expectError(await api.request.get(`/webhook-endpoints/${endpoint}/deliveries`).set(as(other)), 404, "not_found");
    expectError(await redeliver("not-an-endpoint", { filter: {} }), 404, "not_found");
    // Their own endpoint shows nothing of ours.
    const theirs = await endpointOf(other);
    expect((await redeliver(theirs, { filter: {}, dry_run: true }, other)).body.events).toBe(0);

    const disabled = await endpointOf(owner);
    await api.request.patch(`/webhook-endpoints/${disabled}`).set(as(owner)).send({ enabled: false }).expect(200);
    expectError(await redeliver(disabled, { filter: {} }), 409, "webhook_endpoint_disabled");
  });
});
