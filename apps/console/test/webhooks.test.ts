// Webhook endpoints in a real browser against the whole stack (API, a real worker relaying events): an endpoint
// added for a local receiver, its signing secret shown once (the receiver verifies deliveries with the secret the
// page showed), its deliveries listed once a job finished, the secret rotated, the endpoint deleted. A second
// organization's endpoint never shows, and its receiver hears nothing of ours.
import { randomBytes } from "node:crypto";
import { webhookSecretsKey } from "@conveyor/config";
import { insertWebhookEndpoint, newId, sealSecret } from "@conveyor/db";
import { waitFor } from "@conveyor/testkit";
import { startWebhookReceiver, verifyDelivery, type FakeServer } from "@conveyor/testkit/fakes";
import { checkNarrow, checkPage, dismissNotifications, field, startRig, type Rig } from "./support/console";

// The receivers listen on loopback over http: both the API (which checks the URL) and the worker (which posts) allow it.
const local = { WEBHOOK_ALLOW_HTTP: "true", ALLOW_PRIVATE_NETWORK: "true" };

let rig: Rig;
let receiver: FakeServer;
let theirReceiver: FakeServer;
const theirUrl = () => `${theirReceiver.url}/their-hooks`;
beforeAll(async () => {
  [receiver, theirReceiver] = await Promise.all([startWebhookReceiver(), startWebhookReceiver()]);
  rig = await startRig({ workers: 1, apiEnv: local, workerEnv: local });
  const id = newId();
  await insertWebhookEndpoint(rig.stack.api.database.db.pool, {
    id,
    orgId: rig.stack.otherOrg.orgId,
    url: theirUrl(),
    description: "Their receiver",
    events: ["*"],
    sealedSecret: sealSecret(webhookSecretsKey(rig.stack.api.deps.config), `whsec_${randomBytes(32).toString("base64")}`, id),
    createdBy: newId(),
  });
}, 180_000);
afterEach(() => rig?.stack.expectOtherOrgUntouched());
afterAll(async () => {
  await rig?.close();
  await Promise.all([receiver?.close(), theirReceiver?.close()]);
});

describe("webhook endpoints", () => {
  it("adds an endpoint with its secret shown once, lists its deliveries after a job finished, rotates the secret and deletes it", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: rig.base });
    await page.goto(`${rig.base}/webhooks`);
    await page.getByText("No webhook endpoints yet").waitFor();
    expect(await page.getByText(theirUrl()).count()).toBe(0);
    await checkPage(page, "webhooks-empty");

    await page.getByRole("button", { name: "Add endpoint" }).click();
    const dialog = page.getByRole("dialog", { name: "Add a webhook endpoint" });
    await field(page, "URL").fill("ftp://example.com/hooks");
    await dialog.getByRole("button", { name: "Add endpoint" }).click();
    await dialog.getByText("must be an http(s) URL").waitFor();
    const url = `${receiver.url}/hooks/conveyor`;
    await field(page, "URL").fill(url);
    await field(page, "Description").fill("Billing service");
    await dialog.getByRole("button", { name: "Add endpoint" }).click();

    const shown = page.getByRole("dialog", { name: "Endpoint added" });
    const secret = await shown.getByTestId("secret-value").innerText();
    expect(secret).toMatch(/^whsec_/);
    await shown.getByRole("button", { name: "Copy signing secret" }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await checkPage(page, "webhooks-secret");
    await shown.getByRole("button", { name: "Done" }).click();
    const row = page.locator(`tr[data-endpoint="${url}"]`);
    await row.getByText("Billing service").waitFor();
    expect(await page.content()).not.toContain(secret.slice(6));

    // A job runs through the stack; the worker relays its events to the receiver, signed with the secret shown.
    const job = await rig.stack.post("/jobs", { type: "word_count", payload: { text: "deliver this please" } });
    expect(job.status).toBe(202);
    await rig.stack.waitForJob(job.body.id, (j) => j.status === "done");
    const ours = () => receiver.requests.filter((r) => r.body.includes(job.body.id));
    await waitFor(() => ours().length >= 3, "created, started and succeeded delivered", 30_000);
    for (const request of ours()) expect(() => verifyDelivery(secret, request)).not.toThrow();

    await row.getByRole("button", { name: "Deliveries" }).click();
    const drawer = page.getByRole("dialog", { name: "Recent deliveries" });
    const deliveries = drawer.getByRole("table", { name: "Deliveries" }).locator("tbody tr");
    await waitFor(async () => (await deliveries.count()) >= 3, "three deliveries listed", 15_000, 250);
    const listed = await deliveries.allInnerTexts();
    for (const type of ["job.created", "job.started", "job.succeeded"]) expect(listed.some((text) => text.includes(type) && text.includes("200"))).toBe(true);
    await dismissNotifications(page);
    await checkPage(page, "webhooks-deliveries");
    await checkNarrow(page, "webhooks-deliveries");
    await drawer.getByRole("button", { name: "Close panel" }).click();
    await drawer.waitFor({ state: "detached" });
    await checkPage(page, "webhooks");
    await checkNarrow(page, "webhooks");

    // Rotation shows the new secret once.
    await row.getByRole("button", { name: "Rotate secret" }).click();
    await page.getByRole("dialog", { name: "Rotate the signing secret?" }).getByRole("button", { name: "Rotate" }).click();
    const rotated = page.getByRole("dialog", { name: "The new signing secret" });
    const newSecret = await rotated.getByTestId("secret-value").innerText();
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(secret);
    await rotated.getByRole("button", { name: "Close dialog" }).click();
    await rotated.waitFor({ state: "detached" });

    await row.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("dialog", { name: "Delete this endpoint?" }).getByRole("button", { name: "Delete" }).click();
    await page.getByText("No webhook endpoints yet").waitFor();

    // Nothing of ours reached the second organization's receiver.
    expect(theirReceiver.requests.filter((r) => r.body.includes(job.body.id))).toEqual([]);
  });
});

describe("webhook tooling (issue 23 #11)", () => {
  it("edits an endpoint, refuses a URL the org has, sends a test event and an event again, and shows each answer and the job it is about", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    const url = `${receiver.url}/hooks/tooling`;
    const taken = `${receiver.url}/hooks/taken`;
    for (const [u, description] of [
      [url, "Orders"],
      [taken, "Taken"],
    ]) {
      expect(
        (
          await rig.stack.api.request
            .post("/webhook-endpoints")
            .set({ Authorization: `Bearer ${rig.stack.owner.token}` })
            .send({ url: u, events: ["job.succeeded"], description })
        ).status,
      ).toBe(201);
    }
    await page.goto(`${rig.base}/webhooks`);
    const row = page.locator(`tr[data-endpoint="${url}"]`);
    await row.getByText("Orders").waitFor();

    // The same URL again: refused at the URL field, in words.
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const adding = page.getByRole("dialog", { name: "Add a webhook endpoint" });
    await field(page, "URL").fill(url);
    await adding.getByRole("button", { name: "Add endpoint" }).click();
    await adding.getByText("already has an endpoint with this URL").waitFor();
    await adding.getByRole("button", { name: "Close dialog" }).click();
    await adding.waitFor({ state: "detached" });

    // Edit: a taken URL is refused at its field; a new description and events are saved.
    await row.getByRole("button", { name: "Edit" }).click();
    const editing = page.getByRole("dialog", { name: "Edit webhook endpoint" });
    await field(page, "URL").fill(taken);
    await editing.getByRole("button", { name: "Save changes" }).click();
    await editing.getByText("already has an endpoint with this URL").waitFor();
    await checkPage(page, "webhooks-edit");
    await checkNarrow(page, "webhooks-edit");
    await field(page, "URL").fill(url);
    await field(page, "Description").fill("Orders service");
    await editing.getByRole("button", { name: "Save changes" }).click();
    await editing.waitFor({ state: "detached" });
    await row.getByText("Orders service").waitFor();

    // A job's event, then the deliveries: the job linked, the answer readable, the event sent again, a test event.
    const job = await rig.stack.post("/jobs", { type: "word_count", payload: { text: "tooling in the console" } });
    await rig.stack.waitForJob(job.body.id, (j) => j.status === "done");
    await row.getByRole("button", { name: "Deliveries" }).click();
    const drawer = page.getByRole("dialog", { name: "Recent deliveries" });
    const rows = drawer.getByRole("table", { name: "Deliveries" }).locator("tbody tr");
    await waitFor(async () => (await rows.count()) >= 1, "the job's delivery listed", 30_000, 250);
    const jobLink = drawer.getByRole("link", { name: `Job …${job.body.id.slice(-8)}` }).first();
    expect(await jobLink.getAttribute("href")).toBe(`/jobs/${job.body.id}`);

    await rows
      .first()
      .getByRole("button", { name: /^Send again/ })
      .click();
    await drawer.getByRole("button", { name: "Send test event" }).click();
    await waitFor(async () => (await rows.count()) >= 3, "the redelivery and the test event listed", 30_000, 250);
    const texts = await rows.allInnerTexts();
    expect(texts.some((t) => t.includes("webhook.test") && t.includes("test event") && t.includes("200"))).toBe(true);
    expect(texts.some((t) => t.includes("job.succeeded") && t.includes("sent again") && t.includes("200"))).toBe(true);
    await rows.first().getByText("Response body").click();
    expect(await rows.first().getByTestId("response-body").innerText()).toBe('{"received":true}');
    await dismissNotifications(page);
    await checkPage(page, "webhooks-tooling-deliveries");
    await checkNarrow(page, "webhooks-tooling-deliveries");

    // The job link opens the job's page.
    await jobLink.click();
    await page.waitForURL(`${rig.base}/jobs/${job.body.id}`);
    await page.getByText(job.body.id).first().waitFor();
  });
});
