// The console's third pass (issue 48), the webhook deliveries drawer in Chromium against the whole stack: one Escape
// in a dialog opened from the drawer closes that dialog only, the drawer and its filters stay (#5); the "Failed"
// filter lists only events not delivered since, the same ones "Redeliver failed…" sends, and a redelivery with
// nothing to send offers one way out (#7).
import { newId, recordDeliveryAttempts, type DeliveryAttempt } from "@conveyor/db";
import { waitFor } from "@conveyor/testkit";
import { startWebhookReceiver, type FakeServer } from "@conveyor/testkit/fakes";
import { checkNarrow, checkPage, startRig, textLines, type Rig } from "./support/console";

const local = { WEBHOOK_ALLOW_HTTP: "true", ALLOW_PRIVATE_NETWORK: "true" };

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

it("filters Failed to what was never delivered, and Escape in its dialogs closes only them", async () => {
  const made = await rig.stack.api.request
    .post("/webhook-endpoints")
    .set(owner())
    .send({ url: `${receiver.url}/third-hooks`, events: ["job.cancelled"], description: "Ledger" });
  expect(made.status).toBe(201);
  const endpointId = made.body.id as string;
  const jobs: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await rig.stack.api.request.post("/jobs").set(owner()).send({ type: "scripted", payload: {} });
    jobs.push(res.body.id as string);
  }
  const { pool } = rig.stack.api.database.db;
  const events = (
    await pool.query<{ id: string; job_id: string }>(
      "SELECT id::text, job_id FROM events WHERE job_id = ANY($1::uuid[]) AND type = 'job.created' ORDER BY id",
      [jobs],
    )
  ).rows.map((r) => ({ id: Number(r.id), jobId: r.job_id }));
  const attempt = (event: { id: number; jobId: string }, delivery: string, n: number, ok: boolean): DeliveryAttempt => ({
    endpointId,
    eventId: event.id,
    eventType: "job.created",
    jobId: delivery,
    subjectJobId: event.jobId,
    trigger: "event",
    attempt: n,
    statusCode: ok ? 200 : 503,
    durationMs: 12,
    error: ok ? null : "127.0.0.1 answered 503",
    responseBody: ok ? '{"received":true}' : "Service Unavailable",
    delivered: ok,
  });
  // The first event failed once and was delivered on its next try; the second failed for good; the third went through.
  const first = newId();
  await recordDeliveryAttempts(pool, [attempt(events[0]!, first, 1, false)], 3 * 24 * 3600_000);
  await recordDeliveryAttempts(
    pool,
    [attempt(events[0]!, first, 2, true), attempt(events[1]!, newId(), 1, false), attempt(events[2]!, newId(), 1, true)],
    3 * 24 * 3600_000,
  );

  const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
  await page.goto(`${rig.base}/webhooks`);
  await page
    .getByRole("row", { name: /Ledger/ })
    .getByRole("button", { name: "Deliveries" })
    .click();
  const drawer = page.getByRole("dialog", { name: "Recent deliveries" });
  await drawer.locator("[data-delivery]").nth(3).waitFor();
  await drawer.getByRole("combobox", { name: "Outcome" }).click();
  await page.getByRole("option", { name: "Failed", exact: true }).click();
  // Only the event never delivered: the one delivered on its next try is not a failure.
  await waitFor(async () => (await drawer.locator("[data-delivery]").count()) === 1, "one failed delivery alone", 10_000);
  const listed = await drawer.locator("[data-delivery]").getAttribute("data-delivery");
  expect(listed).not.toBeNull();

  await drawer.getByRole("button", { name: "Redeliver failed…" }).click();
  const confirm = page.getByRole("dialog", { name: "Send these events again?" });
  await confirm.getByTestId("redeliver-count").filter({ hasText: "1 event will be sent again" }).waitFor();
  // One Escape: the question goes, the drawer and its filter stay.
  await page.keyboard.press("Escape");
  await confirm.waitFor({ state: "detached" });
  await page.waitForTimeout(300);
  expect(await drawer.isVisible()).toBe(true);
  expect(await drawer.getByRole("combobox", { name: "Outcome" }).inputValue()).toBe("Failed");
  expect(await drawer.locator("[data-delivery]").count()).toBe(1);

  // Nothing to send: one button to leave, the focus on it.
  await drawer.getByRole("combobox", { name: "Event type" }).click();
  await page.getByRole("option", { name: "job.cancelled", exact: true }).click();
  await waitFor(async () => (await drawer.locator("[data-delivery]").count()) === 0, "no failed cancellation deliveries", 10_000);
  await drawer.getByRole("button", { name: "Redeliver failed…" }).click();
  const nothing = page.getByRole("dialog", { name: "Nothing to send again" });
  await nothing.waitFor();
  expect(await nothing.getByRole("button").filter({ hasNotText: /^$/ }).allInnerTexts()).toEqual(["Close"]);
  await checkPage(page, "webhook-nothing-to-send");
  await page.keyboard.press("Escape");
  await nothing.waitFor({ state: "detached" });
  await page.waitForTimeout(300);
  expect(await drawer.isVisible()).toBe(true);
  // A second Escape, with no dialog over it, closes the drawer.
  await page.keyboard.press("Escape");
  await drawer.waitFor({ state: "detached" });
  await checkNarrow(page, "webhooks-after-escape");

  // At 375 px the drawer's event types break after their dot, never inside a word (#10).
  await page.setViewportSize({ width: 375, height: 740 });
  await page
    .getByRole("row", { name: /Ledger/ })
    .getByRole("button", { name: "Deliveries" })
    .click();
  const narrow = page.getByRole("dialog", { name: "Recent deliveries" });
  const types = narrow.getByTestId("delivery-event-type");
  await types.first().waitFor();
  for (const type of await types.all()) {
    for (const line of await textLines(type)) expect(["job.created", "job.", "created", ""]).toContain(line);
  }
  await checkNarrow(page, "webhook-drawer-375");
});
