// Alerts end to end (docs/reference/time.md#alerts, docs/reference/robustness.md#r60): the real API, a real worker whose leader evaluates the rules every
// 200 ms, and local fakes speaking the providers' formats — a Slack incoming webhook, SendGrid, and a webhook
// endpoint of the organization that checks Standard Webhooks signatures. A rule on a webhook type whose target starts
// failing fires once it has held for its window and resolves once the type recovers; a queue stalled by its pause and
// a type no worker serves fire and resolve too. A chat channel that hangs delays none of the others; no notification
// carries a payload; the second organization sees none of it.
import {
  startFakeServer,
  startSendGridFake,
  startSlackFake,
  startWebhookReceiver,
  verifyDelivery,
  type FakeServer,
  type SendGridFake,
  type SlackFake,
} from "@conveyor/testkit/fakes";
import { waitFor } from "@conveyor/testkit";
import { addMember } from "@conveyor/api/testing";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

jest.setTimeout(240_000);

let stack: Stack;
let slack: SlackFake;
let sendgrid: SendGridFake;
let receiver: FakeServer;
let target: FakeServer;
let hanging: FakeServer;
let targetFails = true;
let endpointSecret: string;
/** Stops a test's background traffic, also when the test failed halfway. */
let stopTraffic: (() => Promise<void>) | null = null;

const local = { ALLOW_PRIVATE_NETWORK: "true", WEBHOOK_ALLOW_HTTP: "true" };
const MARKER = "payload-marker-7f3a";

beforeAll(async () => {
  slack = await startSlackFake();
  sendgrid = await startSendGridFake();
  receiver = await startWebhookReceiver();
  target = await startFakeServer({ answer: () => (targetFails ? { status: 500, body: "down" } : { status: 200, body: "ok" }) });
  // A chat receiver that takes the request and never answers.
  hanging = await startFakeServer({ answer: () => new Promise(() => {}) });
  stack = await startStack({
    apiEnv: local,
    workerEnv: {
      ...local,
      WORKER_TYPES: "webhook,scripted",
      ALERT_EVALUATION_MS: "200",
      WEBHOOK_TIMEOUT_MS: "60000",
      EMAIL_PROVIDER: "sendgrid",
      EMAIL_PROVIDER_API_KEY: sendgrid.apiKey,
      EMAIL_PROVIDER_BASE_URL: sendgrid.url,
      EMAIL_FROM: "alerts@conveyor.example.com",
    },
  });
  await stack.registerPluginTypes();
  await stack.startWorker();
  const endpoint = await stack.api.request
    .post("/webhook-endpoints")
    .set("Authorization", `Bearer ${stack.owner.token}`)
    .send({ url: `${receiver.url}/hooks`, events: ["job.created"] });
  expect(endpoint.status).toBe(201);
  endpointSecret = endpoint.body.secret;
}, 120_000);
afterEach(async () => {
  await stopTraffic?.();
  stopTraffic = null;
  await stack.expectOtherOrgUntouched();
});
afterAll(async () => {
  await stack?.close();
  for (const fake of [slack, sendgrid, receiver, target, hanging]) await fake?.close();
});

const asOwner = () => ({ Authorization: `Bearer ${stack.owner.token}` });
const makeRule = async (body: object) => {
  const res = await stack.api.request.post("/alert-rules").set(asOwner()).send(body);
  if (res.status !== 201) throw new Error(`POST /alert-rules: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string };
};
const slackTexts = (ruleName: string) => slack.posted.map((m) => m.text ?? "").filter((t) => t.includes(ruleName));
const alertsOf = async (ruleId: string) =>
  (await stack.api.request.get(`/alerts?rule_id=${ruleId}`).set(asOwner())).body as { status: string; summary: string; resolved_at: string | null }[];
const alertEvents = (type: string) =>
  receiver.requests.filter((r) => {
    try {
      return (JSON.parse(r.body) as { type?: string }).type === type;
    } catch {
      return false;
    }
  });

it("fires on a webhook type that starts failing, tells Slack, e-mail and the signed webhook once (a hanging channel delays none), and resolves once it recovers", async () => {
  const rule = await makeRule({
    name: "Webhook type failing",
    condition: { kind: "failure_rate", type: "webhook", threshold_percent: 50, min_jobs: 3 },
    window_seconds: 10,
    channels: [
      { kind: "chat", url: `${hanging.url}/hook` },
      { kind: "chat", url: slack.webhookUrl },
      { kind: "email", to: "oncall@example.com" },
      { kind: "webhook" },
    ],
  });
  const post = () => stack.post("/jobs", { type: "webhook", max_retries: 0, payload: { url: `${target.url}/in`, payload: { marker: MARKER } } });
  // The type keeps failing (a job every half second), as a broken receiver does, until the rule fires.
  let sending = true;
  const traffic = (async () => {
    while (sending) {
      await post();
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  })();
  stopTraffic = async () => {
    sending = false;
    await traffic;
  };
  const failing = await Promise.all(Array.from({ length: 4 }, post));
  for (const job of failing) await stack.waitForJob(job.body.id, (j) => j.status === "failed", 60_000);
  const failedAt = Date.now();

  const [fired] = await waitFor(
    async () => (slackTexts("Webhook type failing").length ? slackTexts("Webhook type failing") : null),
    "the Slack message",
    60_000,
    200,
  );
  // Not before the condition held for its window (10 s), and not delayed by the hanging channel.
  expect(Date.now() - failedAt).toBeGreaterThanOrEqual(9_000);
  expect(hanging.requests.length).toBeGreaterThanOrEqual(1);
  expect(fired).toMatch(/^Alert fired: Webhook type failing: failure rate of webhook jobs at or above 50 %/);
  expect(fired).toMatch(/(\d+) of \1 webhook jobs finished in the window failed \(100 %\)/);
  const mail = await waitFor(async () => sendgrid.sent.find((m) => JSON.stringify(m.body).includes("Webhook type failing")), "the e-mail", 30_000, 200);
  expect(mail.body.personalizations[0].to[0].email).toBe("oncall@example.com");
  const [event] = await waitFor(
    async () => (alertEvents("conveyor.alert.fired").length ? alertEvents("conveyor.alert.fired") : null),
    "the signed event",
    30_000,
    200,
  );
  expect(verifyDelivery(endpointSecret, event!)).toMatchObject({
    type: "conveyor.alert.fired",
    subject: rule.id,
    data: { rule_id: rule.id, status: "firing" },
  });
  expect((await alertsOf(rule.id)).map((a) => a.status)).toEqual(["firing"]);
  for (const text of [fired!, JSON.stringify(mail.body), event!.body]) {
    expect(text).not.toContain(MARKER);
    expect(text).not.toContain(target.url);
  }

  // The type recovers: its failures leave the window, successes take their place, and after a clear window it resolves.
  targetFails = false;
  const resolved = await waitFor(
    async () => slackTexts("Webhook type failing").find((t) => t.startsWith("Alert resolved")),
    "the resolution on Slack",
    90_000,
    200,
  );
  // It says what is seen now, not the observation that fired it.
  expect(resolved).toMatch(/^Alert resolved: Webhook type failing — now \d+ of \d+ webhook jobs finished in the window failed \([\d.]+ %\) \(fired /);
  expect(resolved).not.toContain(fired!.slice("Alert fired: ".length));
  await waitFor(async () => alertEvents("conveyor.alert.resolved").length > 0, "the signed resolution", 30_000, 200);
  await stopTraffic();
  const alerts = await alertsOf(rule.id);
  expect(alerts).toHaveLength(1);
  expect(alerts[0]).toMatchObject({ status: "resolved", resolved_at: expect.any(String) });
  // Told once each way.
  expect(slackTexts("Webhook type failing")).toHaveLength(2);
  expect(alertEvents("conveyor.alert.fired")).toHaveLength(1);
  // The second organization sees no alert.
  const theirs = await addMember(stack.api.database.db, stack.api.deps.config, stack.otherOrg.orgId, "owner");
  expect((await stack.api.request.get("/alerts").set("Authorization", `Bearer ${theirs.token}`)).body).toEqual([]);
});

it("fires when a paused queue stalls its jobs past the threshold, and resolves once it is resumed and drained", async () => {
  const rule = await makeRule({
    name: "Scripted queue stalled",
    condition: { kind: "queue_wait", type: "scripted", threshold_seconds: 2 },
    window_seconds: 10,
    channels: [{ kind: "chat", url: slack.webhookUrl }],
  });
  expect((await stack.api.request.patch("/queues/scripted").set(asOwner()).send({ paused: true })).status).toBe(200);
  const job = await stack.post("/jobs", { type: "scripted", payload: {} });
  await waitFor(async () => slackTexts("Scripted queue stalled").some((t) => t.startsWith("Alert fired")), "the stall alert", 60_000, 200);
  expect(slackTexts("Scripted queue stalled")[0]).toMatch(/1 scripted jobs due; the oldest has waited \d+ s/);
  expect((await stack.api.request.patch("/queues/scripted").set(asOwner()).send({ paused: false })).status).toBe(200);
  await stack.waitForJob(job.body.id, (j) => j.status === "done", 30_000);
  await waitFor(async () => slackTexts("Scripted queue stalled").some((t) => t.startsWith("Alert resolved")), "the stall resolved", 60_000, 200);
  expect((await alertsOf(rule.id)).map((a) => a.status)).toEqual(["resolved"]);
});

it("fires when a type's jobs are due and no worker serves it, and resolves once one starts", async () => {
  const rule = await makeRule({
    name: "No word_count worker",
    condition: { kind: "no_worker", type: "word_count" },
    window_seconds: 10,
    channels: [{ kind: "chat", url: slack.webhookUrl }],
  });
  const job = await stack.post("/jobs", { type: "word_count", payload: { text: "a b c" } });
  expect(job.status).toBe(202);
  await waitFor(async () => slackTexts("No word_count worker").some((t) => t.startsWith("Alert fired")), "the no-worker alert", 60_000, 200);
  expect(slackTexts("No word_count worker")[0]).toMatch(/1 word_count jobs due; 0 live workers serve the type/);
  const worker = await stack.startWorker({ WORKER_TYPES: "word_count" });
  await stack.waitForJob(job.body.id, (j) => j.status === "done", 30_000);
  await waitFor(async () => slackTexts("No word_count worker").some((t) => t.startsWith("Alert resolved")), "the no-worker alert resolved", 60_000, 200);
  expect((await alertsOf(rule.id)).map((a) => a.status)).toEqual(["resolved"]);
  await worker.stop("SIGTERM");
});

it("fires when the only worker of a type is paused (SIGSTOP) and its queue stalls, and resolves once it runs again", async () => {
  const worker = await stack.startWorker({ WORKER_TYPES: "word_count", WORKER_HEARTBEAT_MS: "300" });
  try {
    const rule = await makeRule({
      name: "word_count stalled",
      condition: { kind: "queue_wait", type: "word_count", threshold_seconds: 2 },
      window_seconds: 10,
      channels: [{ kind: "chat", url: slack.webhookUrl }],
    });
    worker.child.kill("SIGSTOP");
    // Silent for three heartbeats, it no longer counts as serving the type: its jobs stay due.
    await waitFor(
      async () =>
        (await stack.api.database.db.pool.query("SELECT 1 FROM workers WHERE pid = $1 AND heartbeat_at < now() - interval '1 second'", [worker.pid]))
          .rowCount === 1,
      "the paused worker silent",
      10_000,
      100,
    );
    const job = await stack.post("/jobs", { type: "word_count", payload: { text: "one two" } });
    await waitFor(async () => slackTexts("word_count stalled").some((t) => t.startsWith("Alert fired")), "the stall alert", 60_000, 200);
    expect(slackTexts("word_count stalled")[0]).toMatch(/1 word_count jobs due; the oldest has waited \d+ s/);
    worker.child.kill("SIGCONT");
    await stack.waitForJob(job.body.id, (j) => j.status === "done", 60_000);
    await waitFor(async () => slackTexts("word_count stalled").some((t) => t.startsWith("Alert resolved")), "the stall resolved", 60_000, 200);
    expect((await alertsOf(rule.id)).map((a) => a.status)).toEqual(["resolved"]);
  } finally {
    worker.child.kill("SIGCONT");
    await worker.stop("SIGTERM");
  }
});
