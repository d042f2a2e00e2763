// The Queues page in a real browser against the whole stack (API, a real worker): each type's figures read again
// without a reload, a queue paused and resumed from the page (its jobs held, then run), a queue's cap and rate limit
// set, named rate limits created, edited and deleted — by keyboard too, at 1440 and 375 px — and a member who sees
// the figures with no control to change them. A second organization's queues and limits never show.
import { addMember, createOrg, type TestMember } from "@conveyor/api/testing";
import { checkNarrow, checkPage, dismissNotifications, field, startRig, type Rig } from "./support/console";

let rig: Rig;
let member: TestMember;
beforeAll(async () => {
  rig = await startRig({ workers: 1 });
  const { db } = rig.stack.api.database;
  const { config } = rig.stack.api.deps;
  member = await addMember(db, config, rig.stack.owner.orgId, "member");
  // Another organization's own limit: it must never appear here.
  const theirs = await rig.stack.api.request
    .put("/rate-limits/their-limit")
    .set("Authorization", `Bearer ${(await createOrg(db, config)).token}`)
    .send({ limit: 3, period: "hour" });
  if (theirs.status !== 200) throw new Error(`setup: ${theirs.status} ${JSON.stringify(theirs.body)}`);
}, 180_000);
afterEach(() => rig?.stack.expectOtherOrgUntouched());
afterAll(() => rig?.close());

const owner = () => ({ Authorization: `Bearer ${rig.stack.owner.token}` });
type QueueView = { type: string; paused: boolean; concurrency_limit: number | null; rate_limit: string | null };
const queueOf = async (type: string): Promise<QueueView> =>
  ((await rig.stack.api.request.get("/queues").set(owner())).body as QueueView[]).find((q) => q.type === type)!;

describe("the queues page", () => {
  it("pauses a queue, shows its jobs held without a reload, resumes it and shows the starts and the wait", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/queues`);
    await page.getByRole("heading", { name: "Queues", level: 1 }).waitFor();
    const row = page.locator('tr[data-queue="word_count"]');
    await row.waitFor();
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 7));

    await page.getByRole("button", { name: "Pause word_count" }).click();
    await page.locator('tr[data-queue="word_count"][data-paused="true"]').waitFor();
    expect((await queueOf("word_count")).paused).toBe(true);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await rig.stack.post("/jobs", { type: "word_count", payload: { text: `held ${i}` } })).body.id as string);
    // The page reads the figures again by itself.
    await row
      .locator('[data-figure="held"]')
      .filter({ hasText: /^3\s*by the pause$/ })
      .waitFor({ timeout: 15_000 });
    await dismissNotifications(page);
    await checkPage(page, "queues-paused");

    await page.getByRole("button", { name: "Resume word_count" }).click();
    for (const id of ids) await rig.stack.waitForJob(id, (job) => job.status === "done");
    await row.locator('[data-figure="starts"]').filter({ hasText: /^3$/ }).waitFor({ timeout: 15_000 });
    await row.locator('[data-figure="held"]').filter({ hasText: /^0$/ }).waitFor();
    // Held for a while: the p95 wait is shown, in words of time.
    expect(await row.locator('[data-figure="p95"]').innerText()).toMatch(/^\d+(\.\d)? (ms|s)$|min/);
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(7);
    await dismissNotifications(page);
    await checkPage(page, "queues");
    await checkNarrow(page, "queues");
  });

  it("creates, edits and deletes a rate limit by keyboard, refusing a bad name at its field, and limits a queue with it", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/queues`);
    await page.getByRole("heading", { name: "Rate limits" }).waitFor();
    expect(await page.getByText("their-limit").count()).toBe(0);

    await page.getByRole("button", { name: "New rate limit" }).focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "New rate limit" });
    await dialog.waitFor();
    await page.waitForFunction(() => document.activeElement?.closest('[role="dialog"]') !== null);
    await page.keyboard.type("SMS Provider");
    await page.keyboard.press("Enter");
    await dialog.getByText("must be 1 to 100 of a-z, 0-9, _ . : -").waitFor();
    await field(page, "Name").fill("sms-provider");
    await field(page, "Starts").fill("5");
    await field(page, "Starts").press("Enter");
    await dialog.waitFor({ state: "detached" });
    const limitRow = page.locator('tr[data-rate-limit="sms-provider"]');
    await limitRow.filter({ hasText: "5 a second" }).waitFor();

    await page.getByRole("button", { name: "Edit sms-provider" }).click();
    const edit = page.getByRole("dialog", { name: "Edit sms-provider" });
    await edit.waitFor();
    await field(page, "Starts").fill("30");
    await page.getByRole("combobox", { name: "Per" }).click();
    await page.getByRole("option", { name: "minute" }).click();
    await checkPage(page, "queues-rate-limit-form");
    await edit.getByRole("button", { name: "Save rate limit" }).click();
    await limitRow.filter({ hasText: "30 a minute" }).waitFor();
    const limits = (await rig.stack.api.request.get("/rate-limits").set(owner())).body as { name: string; limit: number; period: string }[];
    expect(limits.find((l) => l.name === "sms-provider")).toMatchObject({ limit: 30, period: "minute" });

    // The queue's own limits: a cap and the rate limit.
    await page.getByRole("button", { name: "Limits of send_sms" }).click();
    const queueForm = page.getByRole("dialog", { name: "Limits of send_sms" });
    await queueForm.waitFor();
    await field(page, "Most running at once").fill("0");
    await queueForm.getByRole("button", { name: "Save limits" }).click();
    await queueForm.getByText(/must be a whole number from 1/).waitFor();
    await field(page, "Most running at once").fill("2");
    await page.getByRole("combobox", { name: "Rate limit" }).click();
    await page.getByRole("option", { name: /^sms-provider/ }).click();
    await queueForm.getByRole("button", { name: "Save limits" }).click();
    await queueForm.waitFor({ state: "detached" });
    await page.locator('tr[data-queue="send_sms"]').filter({ hasText: "at most 2 running · rate limit sms-provider" }).first().waitFor();
    expect(await queueOf("send_sms")).toMatchObject({ concurrency_limit: 2, rate_limit: "sms-provider" });
    await dismissNotifications(page);
    await checkNarrow(page, "queues-limits");

    await page.getByRole("button", { name: "Delete sms-provider" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await limitRow.waitFor({ state: "detached" });
    expect(((await rig.stack.api.request.get("/rate-limits").set(owner())).body as { name: string }[]).map((l) => l.name)).not.toContain("sms-provider");
    await rig.stack.api.request.patch("/queues/send_sms").set(owner()).send({ concurrency_limit: null, rate_limit: null }).expect(200);
  });

  it("shows a member the figures and no control to change them", async () => {
    await rig.stack.api.request.put("/rate-limits/email-provider").set(owner()).send({ limit: 10, period: "second" }).expect(200);
    const page = await rig.loggedIn(member.email);
    await page.goto(`${rig.base}/queues`);
    await page.locator('tr[data-queue="send_email"]').waitFor();
    await page.locator('tr[data-rate-limit="email-provider"]').waitFor();
    await page.getByText("Owners and admins can pause queues and change their limits.").waitFor();
    expect(await page.getByRole("button", { name: /^(Pause|Resume|Limits of) / }).count()).toBe(0);
    expect(await page.getByRole("button", { name: /^(New rate limit|Edit |Delete )/ }).count()).toBe(0);
    await checkPage(page, "queues-member");
    await checkNarrow(page, "queues-member");
  });
});
