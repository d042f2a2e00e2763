// The console's third pass (issue 48): defects a new user hit, each driven in Chromium against the real API and
// workers, each a test that failed before its fix.
import { addMember, createOrg } from "@conveyor/testkit/api";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { checkPage, dismissNotifications, expectAccessible, pageProblems, rigForFile, screenshot } from "./support/console";

const rig = rigForFile({ workers: 1 });
beforeAll(() => rig.stack.registerPluginTypes());

/** Waits until the API says job `id` (read with `token`) is done. */
async function waitDone(token: string, id: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await rig.stack.api.request.get(`/jobs/${id}`).set("Authorization", `Bearer ${token}`);
    if (res.body.status === "done") return;
    if (Date.now() > deadline) throw new Error(`job ${id} not done: ${JSON.stringify(res.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function switchTo(page: Page, name: string) {
  await page.getByTestId("account-menu").click();
  await page.getByRole("menuitem", { name: new RegExp(`^${name}`) }).click();
  await page.getByTestId("org-name").filter({ hasText: name }).waitFor();
  await dismissNotifications(page);
}

describe("a job's page after an organization switch (#1)", () => {
  it("shows a job that finished as done, not PROCESSING, in a tab that switched organization, even when its events never come", async () => {
    const { db } = rig.stack.api.database;
    const { config } = rig.stack.api.deps;
    const second = await createOrg(db, config, "Fast Works");
    const mine = await addMember(db, config, second.orgId, "admin", rig.stack.owner.userId);
    const enqueueMine = async (payload: object) => {
      const res = await rig.stack.api.request.post("/jobs").set("Authorization", `Bearer ${mine.token}`).send({ type: "scripted", payload });
      expect(res.status).toBe(202);
      return res.body.id as string;
    };
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs`);
    await page.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();
    await switchTo(page, "Fast Works");
    // What the reviewer's tab lived through: its stream delivered nothing of the job after the page read it (a
    // stream refused or dropped). The page must still come to the job's real state by itself.
    await page.route("**/events", (route) => route.abort());
    for (let round = 0; round < 3; round++) {
      const hold = path.join(tmpdir(), `conveyor-console-fast-${process.pid}-${round}`);
      const id = await enqueueMine({ until_file: hold });
      await page.goto(`${rig.base}/jobs/${id}`);
      await page.locator('h1 ~ [data-status="processing"]').waitFor({ timeout: 20_000 });
      writeFileSync(hold, "");
      await waitDone(mine.token, id);
      // The API says done: the page says so within a few seconds, and offers no cancel.
      await page.locator('h1 ~ [data-status="done"]').waitFor({ timeout: 6_000 });
      expect(await page.getByRole("button", { name: "Cancel job" }).count()).toBe(0);
      await page.getByTestId("attempt-1").and(page.locator('[data-outcome="succeeded"]')).waitFor();
    }
    // The blocked stream's failures are the page's only problems.
    expect(pageProblems(page).filter((line) => !line.includes("net::ERR_FAILED"))).toEqual([]);
    await screenshot(page, "job-done-after-switch");
    await expectAccessible(page);
  });
});
