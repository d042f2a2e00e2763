// The Workers page (issue 38) in Chromium against real worker processes: reached from the navigation, it shows each
// worker's host and pid, types, concurrency, busy slots and this organization's running jobs (another organization's
// job only as a busy slot), links a job to its page by keyboard, and shows a SIGKILLed worker gone without a reload —
// at 1440 and at 375 px, with axe. A member sees the same page.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { addMember, createApiKey, createOrg } from "@conveyor/api/testing";
import { checkNarrow, checkPage, expectNoSidewaysScroll, startRig, type Rig } from "./support/console";

let rig: Rig;
let gate: string;
beforeAll(async () => {
  // The full view of a single-company deployment; workers-capacity.test.ts has a shared deployment's.
  rig = await startRig({
    workers: 1,
    apiEnv: { WORKERS_VISIBLE_TO_ORGS: "true" },
    workerEnv: { WORKER_TYPES: "scripted,word_count", WORKER_HEARTBEAT_MS: "300", WORKER_CONCURRENCY: "4" },
  });
  await rig.stack.registerPluginTypes();
  gate = path.join(mkdtempSync(path.join(os.tmpdir(), "conveyor-workers-page-")), "release");
}, 180_000);
afterEach(() => rig?.stack.expectOtherOrgUntouched());
afterAll(async () => {
  writeFileSync(gate, "");
  await rig?.close();
});

describe("the workers page", () => {
  it("shows each worker's slots and this organization's running jobs, opens a job by keyboard, and a killed worker gone", async () => {
    const { db } = rig.stack.api.database;
    const { config } = rig.stack.api.deps;
    const [first] = rig.stack.workers;
    const third = await createOrg(db, config, "Other Tenant");
    const { key: thirdKey } = await createApiKey(db, third);
    const ours = (await rig.stack.post("/jobs", { type: "scripted", payload: { until_file: gate } })).body.id as string;
    const theirs = await rig.stack.api.request
      .post("/jobs")
      .set("X-API-Key", thirdKey)
      .send({ type: "scripted", payload: { until_file: gate } });
    expect(theirs.status).toBe(202);
    await rig.stack.waitForJob(ours, (job) => job.status === "processing");

    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/overview`);
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Workers" }).click();
    await page.getByRole("heading", { name: "Workers", level: 1 }).waitFor();
    const card = page.locator(`li[data-worker-id][aria-label$="pid ${first!.pid}"]`);
    // Both jobs reach the heartbeat; the page reads it again by itself.
    await card
      .getByTestId("slots")
      .filter({ hasText: /^2 of 8 slots busy/ })
      .waitFor({ timeout: 15_000 });
    expect(await card.getByTestId("slots").innerText()).toMatch(/4 per type · 1 yours · 1 other work/);
    expect(await card.getByTestId("worker-name").innerText()).toBe(`${os.hostname()} · pid ${first!.pid}`);
    expect(
      await card
        .getByRole("listitem")
        .filter({ hasText: /^scripted$/ })
        .count(),
    ).toBe(1);
    expect(
      await card
        .getByRole("listitem")
        .filter({ hasText: /^word_count$/ })
        .count(),
    ).toBe(1);
    await card.locator(`[data-job-id="${ours}"]`).waitFor();
    expect(await page.locator(`[data-job-id="${theirs.body.id as string}"]`).count()).toBe(0);
    expect(await page.getByText(theirs.body.id as string).count()).toBe(0);

    // A second worker, killed: shown gone without a reload, after the live one.
    const doomed = await rig.stack.startWorker({ WORKER_TYPES: "word_count" });
    const doomedCard = page.locator(`li[data-worker-id][aria-label$="pid ${doomed.pid}"]`);
    await doomedCard.waitFor({ timeout: 15_000 });
    await doomed.stop("SIGKILL");
    await page.locator(`li[data-state="gone"][aria-label$="pid ${doomed.pid}"]`).waitFor({ timeout: 15_000 });
    await doomedCard.getByText("Gone", { exact: true }).waitFor();
    await doomedCard.getByTestId("gone-note").waitFor();
    await page.getByTestId("workers-summary").filter({ hasText: "1 worker running · 2 of 8 slots busy · 1 gone" }).waitFor();
    const states = await page.locator("li[data-worker-id]").evaluateAll((cards) => cards.map((c) => c.getAttribute("data-state")));
    expect(states.lastIndexOf("running")).toBeLessThan(states.indexOf("gone"));

    // The pointer off the navigation link it clicked (a hovered link is not what the picture or axe should judge).
    await page.mouse.move(1000, 10);
    await checkPage(page, "workers");
    await checkNarrow(page, "workers");

    // By keyboard: Tab reaches the job's link, Enter opens its page.
    const link = card.locator(`[data-job-id="${ours}"] a`);
    let reached = false;
    for (let i = 0; i < 60 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = await link.evaluate((el) => el === document.activeElement);
    }
    expect(reached).toBe(true);
    await page.keyboard.press("Enter");
    await page.waitForURL(`${rig.base}/jobs/${ours}`);
    await page.getByRole("heading", { level: 1 }).waitFor();
  });

  it("shows a member the same workers, and a phone the page without sideways scrolling", async () => {
    const { db } = rig.stack.api.database;
    const member = await addMember(db, rig.stack.api.deps.config, rig.stack.owner.orgId, "member");
    const page = await rig.loggedIn(member.email, { viewport: { width: 375, height: 740 } });
    await page.goto(`${rig.base}/workers`);
    await page.getByRole("heading", { name: "Workers", level: 1 }).waitFor();
    await page.locator('li[data-worker-id][data-state="running"]').first().waitFor({ timeout: 15_000 });
    await expectNoSidewaysScroll(page);
    await checkPage(page, "workers-member-375");
  });
});
