// Alert rules through the API alone (docs/reference/time.md#alerts; no worker): owners and admins make, read, change, silence and delete
// them; members and API keys may not; a chat URL must pass the SSRF rule (a private address is refused unless the
// deployment allows it) and is shown back by its origin only; a condition naming an endpoint or a schedule must name
// the organization's own; every change is in the audit log; another organization's rule is a 404.
import { addMember, createApiKey, createOrg, createSecondOrg, startTestApi, type SecondOrg, type TestApi, type TestMember } from "@conveyor/api/testing";
import { responseSchemas } from "../src/declarations/responses";

let api: TestApi;
let alice: TestMember;
let bob: TestMember;
let second: SecondOrg;

beforeAll(async () => {
  api = await startTestApi({ API_RATE_LIMIT_PER_SEC: "0" });
  alice = await createOrg(api.database.db, api.deps.config);
  bob = await createOrg(api.database.db, api.deps.config);
  second = await createSecondOrg(api.database.db);
  await second.watch(api.get);
}, 60_000);
afterEach(() => second.expectUntouched({ Authorization: `Bearer ${alice.token}` }));
afterAll(() => api.close());

const as = (m: TestMember) => ({ Authorization: `Bearer ${m.token}` });
const slack = "https://hooks.slack.com/services/T0001/B0001/secretpathtoken";
const rule = (extra: object = {}) => ({
  name: "Webhooks failing",
  condition: { kind: "failure_rate", type: "webhook", threshold_percent: 20 },
  channels: [{ kind: "chat", url: slack }, { kind: "email", to: "oncall@example.com" }, { kind: "webhook" }],
  ...extra,
});
const post = (body: object, member = alice) => api.request.post("/alert-rules").set(as(member)).send(body);

it("makes a rule with its defaults, shows a chat URL by its origin only, and records it in the audit log", async () => {
  const res = await post(rule());
  expect(res.status).toBe(201);
  expect(responseSchemas.AlertRule.validate(res.body).error).toBeUndefined();
  expect(res.body).toMatchObject({
    name: "Webhooks failing",
    condition: { kind: "failure_rate", type: "webhook", threshold_percent: 20, min_jobs: 10 },
    channels: [{ kind: "chat", url: "https://hooks.slack.com/…" }, { kind: "email", to: "oncall@example.com" }, { kind: "webhook" }],
    window_seconds: 300,
    state: "ok",
    silenced_until: null,
  });
  expect(JSON.stringify((await api.request.get("/alert-rules").set(as(alice))).body)).not.toContain("secretpathtoken");
  const audit = await api.request.get("/audit-log?action=alert_rule.").set(as(alice));
  const entries = (audit.body.items ?? audit.body) as { action: string; target: { id: string } }[];
  expect(entries).toEqual(
    expect.arrayContaining([expect.objectContaining({ action: "alert_rule.create", target: expect.objectContaining({ id: res.body.id }) })]),
  );
  expect(JSON.stringify(audit.body)).not.toContain("secretpathtoken");
});

it("refuses a private chat address, a bad condition or channel, and another organization's endpoint or schedule, naming the field", async () => {
  const cases: [object, string][] = [
    [rule({ channels: [{ kind: "chat", url: "http://127.0.0.1:9/hook" }] }), "channels.0.url"],
    [rule({ condition: { kind: "failure_rate" } }), "condition.threshold_percent"],
    [rule({ condition: { kind: "sometimes" } }), "condition.kind"],
    [rule({ channels: [{ kind: "email", to: "not an address" }] }), "channels.0.to"],
    [rule({ window_seconds: 5 }), "window_seconds"],
    [rule({ condition: { kind: "webhook_failing", endpoint_id: "019af0c1-2a3b-7c4d-8e5f-60718293a4b5", consecutive: 3 } }), "condition.endpoint_id"],
    [rule({ condition: { kind: "schedule_missed", schedule_id: "019af0c1-2a3b-7c4d-8e5f-60718293a4b5" } }), "condition.schedule_id"],
  ];
  for (const [body, path] of cases) {
    const res = await post(body);
    expect([path, res.status]).toEqual([path, 400]);
    expect(res.body.error.code).toBe("validation_failed");
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
  }
  // Bob's schedule is not Alice's to watch.
  const bobs = await api.request
    .post("/schedules")
    .set(as(bob))
    .send({ name: "b", cron: "0 * * * *", job: { type: "webhook", payload: { url: "https://h.example.com", payload: {} } } });
  const res = await post(rule({ condition: { kind: "schedule_missed", schedule_id: bobs.body.id } }));
  expect(res.status).toBe(400);
  expect((await api.request.get("/alert-rules").set(as(alice))).body.map((r: { condition: { kind: string } }) => r.condition.kind)).not.toContain(
    "schedule_missed",
  );
});

it("changes and silences a rule (audited), deletes it, and keeps it from members, API keys and other organizations", async () => {
  const made = (await post(rule())).body as { id: string };
  const silenced = await api.request.patch(`/alert-rules/${made.id}`).set(as(alice)).send({ silence_seconds: 3600, window_seconds: 60 });
  expect(silenced.status).toBe(200);
  expect(silenced.body.window_seconds).toBe(60);
  expect(new Date(silenced.body.silenced_until).getTime() - api.clock.now().getTime()).toBe(3_600_000);
  const lifted = await api.request.patch(`/alert-rules/${made.id}`).set(as(alice)).send({ silence_seconds: 0 });
  expect(lifted.body.silenced_until).toBeNull();
  const actions = ((await api.request.get("/audit-log?action=alert_rule.").set(as(alice))).body as { action: string; target: { id: string } }[])
    .filter((e) => e.target.id === made.id)
    .map((e) => e.action);
  expect(actions.filter((a) => a === "alert_rule.silence")).toHaveLength(2);
  expect(actions).toContain("alert_rule.update");

  const member = await addMember(api.database.db, api.deps.config, alice.orgId, "member");
  expect((await api.request.get("/alert-rules").set(as(member))).status).toBe(403);
  expect((await post(rule(), member)).status).toBe(403);
  const { key } = await createApiKey(api.database.db, alice);
  expect((await api.request.get("/alert-rules").set("X-API-Key", key)).status).toBe(403);
  // Members read the alerts.
  expect((await api.request.get("/alerts").set(as(member))).status).toBe(200);
  for (const call of [
    api.request.get(`/alert-rules/${made.id}`),
    api.request.patch(`/alert-rules/${made.id}`).send({ name: "x" }),
    api.request.delete(`/alert-rules/${made.id}`),
  ]) {
    expect((await call.set(as(bob))).status).toBe(404);
  }
  expect((await api.request.delete(`/alert-rules/${made.id}`).set(as(alice))).status).toBe(204);
  expect((await api.request.get(`/alert-rules/${made.id}`).set(as(alice))).status).toBe(404);
});
