// The console's second pass, part two (issue 38), in Chromium against the whole stack (API, a real worker, a local
// webhook receiver): saved views of the jobs list (saved, applied, another person never sees them, deleted), an
// endpoint's deliveries filtered by outcome and event type and its failed ones sent again in bulk after a
// confirmation naming the count (the receiver gets each event once), and the Queues page's per-queue charts of the
// last hour. Each at 1440 and 375 px, with screenshots, axe and no sideways scrolling.
import { newId, recordDeliveryAttempts, type DeliveryAttempt } from "@conveyor/db";
import { waitFor } from "@conveyor/testkit";
import { addMember } from "@conveyor/api/testing";
import { startWebhookReceiver, type FakeServer } from "@conveyor/testkit/fakes";
import { checkNarrow, checkPage, dismissNotifications, field, startRig, type Rig } from "./support/console";

const local = { WEBHOOK_ALLOW_HTTP: "true", ALLOW_PRIVATE_NETWORK: "true" };
const DESKTOP = { width: 1440, height: 900 };

let rig: Rig;
let receiver: FakeServer;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  rig = await startRig({ workers: 1, apiEnv: local, workerEnv: local });
  await rig.stack.registerPluginTypes();
}, 180_000);
afterEach(() => rig?.stack.expectOtherOrgUntouched());
afterAll(async () => {
  await rig?.close();
  await receiver?.close();
});

const owner = () => ({ Authorization: `Bearer ${rig.stack.owner.token}` });
const enqueue = async (body: object) => {
  const res = await rig.stack.api.request.post("/jobs").set(owner()).send(body);
  if (res.status !== 202) throw new Error(`POST /jobs: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
};

describe("saved views of the jobs list", () => {
  it("saves the filters under a name, applies them from the bare list, hides them from a colleague, and deletes them", async () => {
    const failing = await enqueue({ type: "scripted", payload: { fail_until: 5 } });
    const fine = await enqueue({ type: "scripted", payload: {} });
    await rig.stack.waitForJob(failing, (j) => j.status === "failed", 30_000);
    await rig.stack.waitForJob(fine, (j) => j.status === "done", 30_000);

    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: DESKTOP });
    await page.goto(`${rig.base}/jobs?status=failed&type=scripted`);
    const views = page.getByRole("region", { name: "Saved views" });
    await views.getByText("None yet").waitFor();
    await views.getByRole("button", { name: "Save current filters…" }).click();
    const dialog = page.getByRole("dialog", { name: "Save these filters as a view" });
    await dialog.getByText("status failed, type scripted").waitFor();
    await field(page, "Name").fill("Failed scripted");
    await dialog.getByRole("button", { name: "Save view" }).click();
    const saved = views.getByRole("button", { name: "Failed scripted", exact: true });
    await saved.waitFor();
    // The list shows these filters: the view is the one applied.
    expect(await saved.getAttribute("aria-pressed")).toBe("true");
    await dismissNotifications(page);

    // The same name again is refused at the field, in the API's words.
    await views.getByRole("button", { name: "Save current filters…" }).click();
    await field(page, "Name").fill("Failed scripted");
    await dialog.getByRole("button", { name: "Save view" }).click();
    await dialog.getByText(/You already have a view named “Failed scripted”/).waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();

    // From the bare list, one click gives the filtered list back.
    await page.goto(`${rig.base}/jobs`);
    await page.locator(`[data-job-id="${fine}"]`).waitFor();
    expect(await saved.getAttribute("aria-pressed")).toBe("false");
    await saved.click();
    await page.waitForURL(/status=failed/);
    expect(new URL(page.url()).searchParams.get("type")).toBe("scripted");
    await page.locator(`[data-job-id="${failing}"]`).waitFor();
    await waitFor(async () => (await page.locator(`[data-job-id="${fine}"]`).count()) === 0, "the done job to leave the filtered list", 10_000);
    expect(await saved.getAttribute("aria-pressed")).toBe("true");
    await checkPage(page, "saved-views");
    await checkNarrow(page, "saved-views");

    // A colleague in the same organization has views of their own, not these.
    const { db } = rig.stack.api.database;
    const colleague = await addMember(db, rig.stack.api.deps.config, rig.stack.owner.orgId, "member");
    const theirs = await rig.loggedIn(colleague.email, { viewport: DESKTOP });
    await theirs.goto(`${rig.base}/jobs`);
    await theirs.getByRole("region", { name: "Saved views" }).getByText("None yet").waitFor();
    expect(await theirs.getByRole("button", { name: "Failed scripted", exact: true }).count()).toBe(0);

    await views.getByRole("button", { name: "Delete view Failed scripted" }).click();
    await page.getByRole("dialog", { name: "Delete this view?" }).getByRole("button", { name: "Delete view" }).click();
    await views.getByText("None yet").waitFor();
  });
});

describe("webhook deliveries: filters and bulk redelivery", () => {
  it("filters an endpoint's deliveries, then sends its failed events again after a confirmation naming how many", async () => {
    const url = `${receiver.url}/bulk-hooks`;
    // It subscribes to cancellations only: the jobs below make job.created events the relay does not send it.
    const made = await rig.stack.api.request
      .post("/webhook-endpoints")
      .set(owner())
      .send({ url, events: ["job.cancelled"], description: "Billing" });
    expect(made.status).toBe(201);
    const endpointId = made.body.id as string;
    const jobs = [];
    for (let i = 0; i < 4; i++) jobs.push(await enqueue({ type: "scripted", payload: {} }));
    const { pool } = rig.stack.api.database.db;
    const events = (
      await pool.query<{ id: string; job_id: string }>(
        "SELECT id::text, job_id FROM events WHERE job_id = ANY($1::uuid[]) AND type = 'job.created' ORDER BY id",
        [jobs],
      )
    ).rows.map((r) => ({ id: Number(r.id), jobId: r.job_id }));
    const attempt = (event: { id: number; jobId: string }, ok: boolean): DeliveryAttempt => ({
      endpointId,
      eventId: event.id,
      eventType: "job.created",
      jobId: newId(),
      subjectJobId: event.jobId,
      trigger: "event",
      attempt: 1,
      statusCode: ok ? 200 : 503,
      durationMs: 12,
      error: ok ? null : `127.0.0.1 answered 503`,
      responseBody: ok ? '{"received":true}' : "Service Unavailable",
      delivered: ok,
    });
    // Three failed for good, one delivered.
    await recordDeliveryAttempts(
      pool,
      [attempt(events[0]!, false), attempt(events[1]!, false), attempt(events[2]!, false), attempt(events[3]!, true)],
      3 * 24 * 3600_000,
    );

    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: DESKTOP });
    await page.goto(`${rig.base}/webhooks`);
    await page
      .getByRole("row", { name: /Billing/ })
      .getByRole("button", { name: "Deliveries" })
      .click();
    const drawer = page.getByRole("dialog", { name: "Recent deliveries" });
    await drawer.locator("[data-delivery]").nth(3).waitFor();

    await drawer.getByRole("combobox", { name: "Outcome" }).click();
    await page.getByRole("option", { name: "Failed", exact: true }).click();
    await waitFor(async () => (await drawer.locator("[data-delivery]").count()) === 3, "the three failed deliveries alone", 10_000);
    expect(await drawer.locator('[data-outcome="succeeded"]').count()).toBe(0);
    await checkPage(page, "webhook-deliveries-filtered");

    await drawer.getByRole("button", { name: "Redeliver failed…" }).click();
    const confirm = page.getByRole("dialog", { name: "Send these events again?" });
    await confirm.getByTestId("redeliver-count").filter({ hasText: "3 events will be sent again" }).waitFor();
    await checkPage(page, "webhook-bulk-redeliver-confirm");
    await confirm.getByRole("button", { name: "Redeliver 3 events" }).click();
    await page.getByText("3 events queued again").waitFor();

    // The receiver gets each failed event once, with its own webhook-id; the delivered one is not sent again.
    const sent = () => receiver.requests.filter((r) => r.path === "/bulk-hooks").map((r) => Number(r.headers["webhook-id"]));
    await waitFor(() => sent().length === 3, "three redeliveries at the receiver", 30_000);
    expect(sent().sort((a, b) => a - b)).toEqual(events.slice(0, 3).map((e) => e.id));

    // They show among the deliveries as received (outcome filter cleared).
    await drawer.getByRole("combobox", { name: "Outcome" }).click();
    await page.getByRole("option", { name: "Succeeded" }).click();
    await waitFor(async () => (await drawer.locator('[data-outcome="succeeded"]').count()) === 4, "four delivered rows", 30_000);
    await dismissNotifications(page);
    await checkPage(page, "webhook-deliveries-after-bulk");
    await checkNarrow(page, "webhook-deliveries-after-bulk");

    // The audit log says it in a sentence.
    const audit = await rig.stack.api.request.get("/audit-log").query({ action: "webhook_endpoint.bulk_redeliver" }).set(owner());
    expect(audit.body).toHaveLength(1);
    expect(audit.body[0]).toMatchObject({ target: { id: endpointId, name: "Billing" }, details: { events: 3, filter: {} } });
  });
});

describe("queue charts", () => {
  it("draws each queue's starts and p95 wait of the last hour, readable on a phone", async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await enqueue({ type: "scripted", payload: {} }));
    for (const id of ids) await rig.stack.waitForJob(id, (j) => j.status === "done", 30_000);

    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: DESKTOP });
    await page.goto(`${rig.base}/queues`);
    const chart = page.locator('[data-queue-chart="scripted"]');
    await chart.locator("svg.recharts-surface").first().waitFor();
    // The sentence under it: at least the three starts above (earlier tests' jobs of this type count too).
    const summary = await chart.getByTestId("queue-activity-summary").innerText();
    expect(Number(/^(\d+) starts? in the last hour/.exec(summary)?.[1])).toBeGreaterThanOrEqual(3);
    expect(summary).toMatch(/p95 wait up to/);
    // A type without starts says so.
    await page.locator('[data-queue-chart="send_sms"]').getByText("No starts in the last hour.").waitFor();
    await checkPage(page, "queue-charts");
    await checkNarrow(page, "queue-charts");
    await page.setViewportSize({ width: 375, height: 740 });
    const box = await chart.boundingBox();
    expect(box!.width).toBeLessThanOrEqual(375);
    expect(box!.width).toBeGreaterThan(200);
  });
});
