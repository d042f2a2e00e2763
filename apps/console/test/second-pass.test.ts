// The console's second pass (issue 38): defects a new user hit, each driven in Chromium against the real API and
// workers, each a test that failed before its fix — the live stream of a tab following the organization it shows
// (two tabs, a live event), live updates honouring every filter (two tabs), queue counts in words with links and
// their buttons on a phone, a replay's refusal in the words of its box, failure groups headed by a real error and
// holding jobs still retrying, and the jobs list on a phone as cards (the viewport measured), a job's tab title, a
// named payload box, finished jobs saying when they ended, and list changes announced.
import { addMember, createOrg } from "@conveyor/api/testing";
import { checkNarrow, checkPage, dismissNotifications, startRig, type Rig } from "./support/console";

let rig: Rig;
beforeAll(async () => {
  // Retries wait ten minutes: a job that failed an attempt stays "waiting to retry" for the whole test.
  rig = await startRig({ workers: 1, workerEnv: { RETRY_BASE_MS: "600000" } });
  await rig.stack.registerPluginTypes();
}, 180_000);
afterEach(() => rig?.stack.expectOtherOrgUntouched());
afterAll(() => rig?.close());

const owner = () => ({ Authorization: `Bearer ${rig.stack.owner.token}` });
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
const email = (subject: string) => ({ type: "send_email", payload: { to: "a@example.com", subject, body: "b" }, run_at: inAnHour() });
const enqueueAs = async (token: string, body: object) => {
  const res = await rig.stack.api.request.post("/jobs").set("Authorization", `Bearer ${token}`).send(body);
  if (res.status !== 202) throw new Error(`POST /jobs: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
};
const enqueue = (body: object) => enqueueAs(rig.stack.owner.token, body);
const row = (page: import("playwright-core").Page, id: string) => page.locator(`[data-job-id="${id}"]`);

describe("the live stream follows the organization shown (#1)", () => {
  it("shows the new organization's new jobs in the tab that switched and in the tab that followed, and never the old one's", async () => {
    const { db } = rig.stack.api.database;
    const { config } = rig.stack.api.deps;
    const second = await createOrg(db, config, "Live Works");
    const mine = await addMember(db, config, second.orgId, "admin", rig.stack.owner.userId);
    const first = await rig.loggedIn(rig.stack.owner.email);
    const other = await first.context().newPage();
    for (const tab of [first, other]) {
      await tab.goto(`${rig.base}/jobs`);
      await tab.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();
    }
    const before = await enqueue(email("before the switch"));
    for (const tab of [first, other]) await row(tab, before).waitFor({ timeout: 15_000 });

    await first.getByTestId("account-menu").click();
    await first.getByRole("menuitem", { name: /^Live Works/ }).click();
    await first.getByTestId("org-name").filter({ hasText: "Live Works" }).waitFor();
    await other.getByTestId("org-name").filter({ hasText: "Live Works" }).waitFor();
    await dismissNotifications(other);
    // No reload (a reload opens a new stream anyway): the switching tab goes back to its jobs by the navigation, the
    // other one shows its jobs page again for the new organization.
    await first.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Jobs" }).click();
    for (const tab of [first, other]) await tab.getByText("No jobs yet").waitFor();

    // A new job of the new organization shows up live (the tab listens to it), with no other event to set off a refresh.
    const fresh = await enqueueAs(mine.token, email("new organization"));
    for (const tab of [first, other]) await row(tab, fresh).waitFor({ timeout: 15_000 });
    // A job of the old organization is not shown: the next job of the new one comes, the old one's never does.
    const old = await enqueue(email("old organization"));
    const next = await enqueueAs(mine.token, email("new organization, next"));
    for (const tab of [first, other]) {
      await row(tab, next).waitFor({ timeout: 15_000 });
      expect(await row(tab, old).count()).toBe(0);
      expect(await row(tab, before).count()).toBe(0);
    }
    await checkPage(other, "live-after-switch");
  });
});

describe("live updates honour every filter (#2)", () => {
  it("drops a job cancelled in another tab from /jobs?due=later, and keeps it, cancelled, in a search that still finds it", async () => {
    const marker = `due-later-${Date.now()}`;
    const id = await enqueue(email(marker));
    const delayed = await rig.loggedIn(rig.stack.owner.email);
    await delayed.goto(`${rig.base}/jobs?due=later`);
    await row(delayed, id).waitFor();
    const searched = await delayed.context().newPage();
    await searched.goto(`${rig.base}/jobs?q=${marker}`);
    await row(searched, id).waitFor();

    // The other tab cancels it on its page.
    const acting = await delayed.context().newPage();
    await acting.goto(`${rig.base}/jobs/${id}`);
    await acting
      .getByRole("button", { name: /^Cancel/ })
      .first()
      .click();
    await acting.getByRole("dialog").getByRole("button", { name: "Cancel job" }).click();
    await rig.stack.waitForJob(id, (job) => job.status === "cancelled");

    await row(delayed, id).waitFor({ state: "detached", timeout: 15_000 });
    expect(await delayed.locator('[data-job-id]:not([data-status="pending"])').count()).toBe(0);
    await searched.locator(`[data-job-id="${id}"][data-status="cancelled"]`).waitFor({ timeout: 15_000 });
    await delayed
      .getByTestId("jobs-announcement")
      .filter({ hasText: /No job matches|jobs? shown/ })
      .waitFor({ state: "attached" });
  });
});

describe("queues (#8)", () => {
  it("says a paused queue's due jobs are held by the pause, links each count to its jobs, and keeps the buttons on a phone", async () => {
    await rig.stack.api.request.patch("/queues/scripted").set(owner()).send({ paused: true }).expect(200);
    try {
      const id = await enqueue({ type: "scripted", payload: {} });
      const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
      await page.goto(`${rig.base}/queues`);
      const queue = page.locator('tr[data-queue="scripted"]');
      await queue.locator('[data-figure="held"]').filter({ hasText: "by the pause" }).waitFor({ timeout: 15_000 });
      expect(await page.getByRole("columnheader", { name: "Held by limits" }).count()).toBe(0);
      await checkPage(page, "queues-paused");

      await queue.locator('[data-figure="due"] a').click();
      await page.waitForURL(/\/jobs\?/);
      const url = new URL(page.url());
      expect(url.searchParams.get("type")).toBe("scripted");
      expect(url.searchParams.get("due")).toBe("now");
      await row(page, id).waitFor();

      await page.setViewportSize({ width: 375, height: 740 });
      await page.goto(`${rig.base}/queues`);
      expect(await page.evaluate(() => window.innerWidth)).toBe(375);
      for (const name of ["Resume scripted", "Limits of scripted"]) {
        const button = page.getByRole("button", { name });
        await button.waitFor();
        const box = (await button.boundingBox())!;
        expect(box.x).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width).toBeLessThanOrEqual(375);
      }
      await checkPage(page, "queues-375");
    } finally {
      await rig.stack.api.request.patch("/queues/scripted").set(owner()).send({ paused: false }).expect(200);
    }
  });
});

describe("replay with changes (#9)", () => {
  it("names the field inside the payload the box holds, in words, without the API's path", async () => {
    const id = await enqueue({ type: "webhook", payload: { url: "https://example.com/hook", payload: { a: 1 } }, run_at: inAnHour() });
    await rig.stack.api.request.post(`/jobs/${id}/cancel`).set(owner()).expect(200);
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs/${id}`);
    await page.getByRole("button", { name: /^Replay with changes/ }).click();
    const box = page.getByRole("dialog").getByLabel("Payload (JSON)");
    await box.fill(JSON.stringify({ url: "https://example.com/hook", payload: "not an object" }));
    await page.getByRole("dialog").getByRole("button", { name: "Replay", exact: true }).click();
    await page.getByTestId("replay-changes").filter({ hasText: "payload.a" }).waitFor();
    const problems = page.getByTestId("replay-problems");
    await problems.waitFor();
    const text = await problems.innerText();
    expect(text).toContain("The field payload must be an object");
    expect(text).not.toContain("payload.payload");
    expect(text).not.toContain("of type");
    await checkPage(page, "replay-refused");
  });
});

describe("failure groups (#4)", () => {
  it("head each group with a real error and list groups whose jobs are all still retrying", async () => {
    const code = `E${Date.now()}`;
    const id = await enqueue({ type: "scripted", payload: { fail_until: 5, marker: code }, max_retries: 5 });
    await rig.stack.waitForJob(id, (job) => job.status === "pending" && job.retries === 1, 60_000);
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs?view=failures`);
    const headline = page.getByTestId("group-headline").filter({ hasText: "scripted failure on attempt 1" });
    await headline.waitFor({ timeout: 15_000 });
    expect(await headline.innerText()).not.toContain("<n>");
    const group = page.locator("tr[data-failure-group]").filter({ has: headline });
    await group.getByText("1 retrying").waitFor();
    await group.getByRole("button", { name: "Cancel retries…" }).waitFor();
    await checkPage(page, "failure-groups-retrying");
  });
});

describe("the jobs list on a phone, a job's tab and its payload (#13)", () => {
  it("shows cards inside the screen's width, says when a finished job ended, titles the tab by type and id, and names the payload", async () => {
    const long = { to: "a@example.com", subject: "s", body: "x ".repeat(4000) };
    const done = await enqueue({ type: "scripted", payload: { note: long.body } });
    await rig.stack.waitForJob(done, (job) => job.status === "done", 60_000);
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 375, height: 740 } });
    await page.goto(`${rig.base}/jobs`);
    expect(await page.evaluate(() => window.innerWidth)).toBe(375);
    const card = page.locator(`li[data-job-id="${done}"]`);
    await card.waitFor();
    const list = (await page.getByTestId("jobs-cards").boundingBox())!;
    const main = (await page.locator("#main").boundingBox())!;
    expect(list.x).toBeGreaterThanOrEqual(main.x);
    expect(list.x + list.width).toBeLessThanOrEqual(main.x + main.width);
    const status = (await card.locator('.mantine-Badge-root[data-status="done"]').boundingBox())!;
    expect(status.x + status.width).toBeLessThanOrEqual(list.x + list.width);
    expect(await card.innerText()).toMatch(/ended /);
    await checkPage(page, "jobs-cards-375");

    await page.setViewportSize({ width: 1440, height: 900 });
    await page
      .locator(`tr[data-job-id="${done}"]`)
      .getByTestId("row-when")
      .filter({ hasText: /^ended / })
      .waitFor();
    await page.goto(`${rig.base}/jobs/${done}`);
    await page.waitForFunction((id) => document.title === `scripted ${id.slice(-8)} · Conveyor`, done);
    const payload = page.getByRole("region", { name: "Payload as JSON" });
    await payload.waitFor();
    await payload.focus();
    const top = await payload.evaluate((el) => el.scrollTop);
    await page.keyboard.press("PageDown");
    await page.waitForFunction((t) => (document.querySelector('[role="region"][aria-label="Payload as JSON"]')?.scrollTop ?? 0) > t, top);
    await checkPage(page, "job-long-payload");
  });
});

describe("Retries, and Run now for a delayed job (new views)", () => {
  it("lists the jobs waiting to retry with their error and next attempt; retries one now and gives another up", async () => {
    const soon = await enqueue({ type: "scripted", payload: { fail_until: 1 }, max_retries: 3 });
    const stuck = await enqueue({ type: "scripted", payload: { fail_until: 9 }, max_retries: 9 });
    for (const id of [soon, stuck]) await rig.stack.waitForJob(id, (job) => job.status === "pending" && job.retries === 1, 60_000);
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/retries`);
    await page.getByRole("heading", { name: "Retries", level: 1 }).waitFor();
    for (const id of [soon, stuck]) await row(page, id).getByTestId("retry-error").filter({ hasText: "scripted failure on attempt 1" }).waitFor();
    expect(await row(page, soon).getByTestId("next-attempt").innerText()).toMatch(/^Next attempt /);
    await checkPage(page, "retries");
    await checkNarrow(page, "retries");

    await page.getByRole("button", { name: `Retry now: scripted ${soon.slice(-8)}` }).click();
    await rig.stack.waitForJob(soon, (job) => job.status === "done", 30_000);
    await row(page, soon).waitFor({ state: "detached", timeout: 15_000 });

    await page.getByRole("button", { name: `Give up: scripted ${stuck.slice(-8)}` }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Give up", exact: true }).click();
    await rig.stack.waitForJob(stuck, (job) => job.status === "cancelled", 30_000);
    await row(page, stuck).waitFor({ state: "detached", timeout: 15_000 });
  });

  it("runs a delayed job now from its page", async () => {
    const id = await enqueue({ type: "scripted", payload: {}, run_at: inAnHour() });
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs/${id}`);
    await page.getByRole("button", { name: "Run now" }).click();
    await rig.stack.waitForJob(id, (job) => job.status === "done", 30_000);
    await page.locator('.mantine-Badge-root[data-status="done"]').first().waitFor({ timeout: 15_000 });
    await checkPage(page, "job-run-now");
  });
});

describe("a few more defects (#6, #10, #12)", () => {
  it("offers no other organization for a job id that is not one (#6)", async () => {
    const { db } = rig.stack.api.database;
    const { config } = rig.stack.api.deps;
    const elsewhere = await createOrg(db, config, "Elsewhere Ltd");
    await addMember(db, config, elsewhere.orgId, "member", rig.stack.owner.userId);
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs/not-a-job-id`);
    await page.getByRole("heading", { name: "Job not found", level: 1 }).waitFor();
    expect(await page.getByRole("button", { name: /^Look in / }).count()).toBe(0);
    // Nor is it for a well-formed id that no organization has (issue 48 #10): third-pass.test.ts.
  });

  it("says why the first 8 characters of an id find nothing (#10)", async () => {
    const id = await enqueue(email(`short-${Date.now()}`));
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs?q=${id.slice(0, 8)}`);
    await page.getByText(/A short id is the last 8 characters of a job's id/).waitFor();
    await page.goto(`${rig.base}/jobs?q=${id.slice(-8)}`);
    await row(page, id).waitFor();
  });

  it("counts all matching jobs selected, and keeps them selected on the next page (#12)", async () => {
    const marker = `all-${Date.now()}`;
    const res = await rig.stack.post("/jobs/batch", { jobs: Array.from({ length: 51 }, () => email(marker)) });
    expect(res.status).toBe(202);
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs?q=${marker}`);
    await page.locator("tr[data-job-id]").first().waitFor();
    await page.getByRole("checkbox", { name: "Select every job on this page" }).check();
    await page.getByRole("button", { name: "Select all matching jobs" }).click();
    const count = page.getByTestId("selection-count").filter({ hasText: "All 51 matching jobs selected" });
    await count.waitFor();
    await page.getByRole("button", { name: "Next page" }).click();
    await page.waitForURL(/cursor=/);
    await page.locator("tr[data-job-id]").first().waitFor();
    await count.waitFor();
    expect(await page.getByRole("checkbox", { name: "Select every job on this page" }).isChecked()).toBe(true);
  });
});
