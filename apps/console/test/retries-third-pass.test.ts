// The Retries view, third pass (issue 48 #6 and its features), in Chromium against the real API and a worker whose
// retries wait ten minutes: the list holds still under the pointer while a job moves, the Give up dialog starts on its
// safe button (Enter, Enter gives nothing up), each next attempt is said from now, and all the listed jobs of a type are
// retried or given up at once after a confirmation that counts them.
import type { Page } from "playwright-core";
import { checkNarrow, checkPage, dismissNotifications, startRig, type Rig } from "./support/console";

let rig: Rig;
beforeAll(async () => {
  rig = await startRig({ workers: 1, workerEnv: { RETRY_BASE_MS: "600000" } });
  await rig.stack.registerPluginTypes();
}, 180_000);
afterEach(() => rig?.stack.expectOtherOrgUntouched());
afterAll(() => rig?.close());

const owner = () => ({ Authorization: `Bearer ${rig.stack.owner.token}` });
const order = (page: Page) => page.locator("li[data-job-id]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-job-id")));

it("holds the list still under the pointer, starts Give up on Keep it, and retries or gives up all of a type", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push(await rig.enqueue({ type: "scripted", payload: { fail_until: 9 }, max_retries: 9 }));
  for (const id of ids) await rig.stack.waitForJob(id, (job) => job.status === "pending" && job.retries === 1, 60_000);
  const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
  await page.goto(`${rig.base}/retries`);
  await page.getByTestId("retries-count").filter({ hasText: "3 jobs waiting to retry" }).waitFor();
  const before = await order(page);
  expect(before).toHaveLength(3);
  expect(await page.locator(`li[data-job-id="${before[0]}"]`).getByTestId("next-attempt").innerText()).toMatch(/^Next attempt in \d+ min/);

  // The pointer on the first row; the job moves to the end (it ran and failed again, its next wait is longer).
  await page.locator(`li[data-job-id="${before[0]}"]`).hover();
  await rig.stack.api.request.post(`/jobs/${before[0]}/run-now`).set(owner()).expect(200);
  await rig.stack.waitForJob(before[0]!, (job) => job.status === "pending" && job.retries === 2, 60_000);
  // The page hears of it and says it waits; the rows keep their places.
  await page.getByTestId("retries-held").waitFor({ timeout: 15_000 });
  expect(await order(page)).toEqual(before);
  await checkPage(page, "retries-held");
  // Away from the list: the new order lands.
  await page.mouse.move(5, 5);
  await page.waitForFunction((first) => document.querySelector("li[data-job-id]")?.getAttribute("data-job-id") !== first, before[0]);
  expect((await order(page)).at(-1)).toBe(before[0]);

  // Give up by keyboard: the dialog starts on Keep it; Enter, Enter gives nothing up.
  const last = before[2]!;
  await page.getByRole("button", { name: `Give up: scripted ${last.slice(-8)}` }).focus();
  await page.keyboard.press("Enter");
  await page.getByRole("dialog", { name: "Give up this job" }).waitFor();
  await page.keyboard.press("Enter");
  await page.getByRole("dialog", { name: "Give up this job" }).waitFor({ state: "detached" });
  expect((await rig.stack.job(last)).status).toBe("pending");

  // All of a type at once, counted: retry all, then give up all.
  await page.getByRole("combobox", { name: "Job type" }).click();
  await page.getByRole("option", { name: "scripted" }).click();
  await page.getByRole("button", { name: "Give up all (3)…" }).click();
  const bulk = page.getByRole("dialog", { name: "Give up 3 jobs of type scripted?" });
  await bulk.waitFor();
  await checkPage(page, "retries-give-up-all");
  await bulk.getByRole("button", { name: "Give up 3" }).click();
  for (const id of ids) await rig.stack.waitForJob(id, (job) => job.status === "cancelled", 30_000);
  await page.getByText("No job is waiting to retry").waitFor({ timeout: 15_000 });
  await dismissNotifications(page);
  await checkNarrow(page, "retries-empty");
});

it("retries all the listed jobs now", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) ids.push(await rig.enqueue({ type: "scripted", payload: { fail_until: 1 }, max_retries: 3 }));
  for (const id of ids) await rig.stack.waitForJob(id, (job) => job.status === "pending" && job.retries === 1, 60_000);
  const page = await rig.loggedIn(rig.stack.owner.email);
  await page.goto(`${rig.base}/retries`);
  await page.getByRole("button", { name: /^Retry all \(\d+\)…$/ }).click();
  await page
    .getByRole("dialog", { name: /^Retry \d+ jobs? now\?$/ })
    .getByRole("button", { name: /^Retry \d+ now$/ })
    .click();
  for (const id of ids) await rig.stack.waitForJob(id, (job) => job.status === "done", 30_000);
  await page.getByText("No job is waiting to retry").waitFor({ timeout: 15_000 });
});
