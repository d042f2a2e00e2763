// A job's page in a real browser against the whole stack (API, real workers): the dependency graph it is in (issue
// 25) — built by one POST /jobs/batch with refs — drawn with React Flow, upstream and downstream, each node a link
// to its job, statuses following the event stream without a reload; and each attempt's timing from GET
// /jobs/{id}/attempts (issue 23) on one time axis, a retried failure drawn as one, a running attempt followed live.
// Screenshots at 1440 and 375 px, axe, the keyboard.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { checkNarrow, checkPage, rigForFile } from "./support/console";

const rig = rigForFile({ workers: 1 });

const DESKTOP = { width: 1440, height: 900 };
const owner = () => ({ Authorization: `Bearer ${rig.stack.owner.token}` });
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
/**
 * Waits until every node lies inside the canvas (the graph is fitted after the canvas changes size), each at least
 * `minWidth` px wide. While a resized page settles, the canvas can be fitted to a passing size first (every node
 * inside but tiny), so both are waited for together.
 */
const allNodesInside = (page: Page, minWidth = 0) =>
  page.waitForFunction(
    (min) => {
      const canvas = document.querySelector('[data-testid="job-graph"]')!.getBoundingClientRect();
      const nodes = Array.from(document.querySelectorAll('[data-testid="graph-node"]')).map((n) => n.getBoundingClientRect());
      return (
        nodes.length > 0 &&
        nodes.every(
          (n) => n.width >= min && n.left >= canvas.left - 1 && n.right <= canvas.right + 1 && n.top >= canvas.top - 1 && n.bottom <= canvas.bottom + 1,
        )
      );
    },
    minWidth,
    { timeout: 5_000 },
  );
const node = (page: Page, id: string) => page.locator(`[data-testid="graph-node"][data-job-id="${id}"]`);

describe("a job's dependency graph (issue 25)", () => {
  it("draws the graph upstream and downstream, follows its statuses live, and links each job to its page", async () => {
    // render → mail → archive, and archive also waits for a review due in an hour (it runs whatever the review's outcome).
    const res = await rig.stack.post("/jobs/batch", {
      jobs: [
        { ref: "render", type: "scripted", payload: { step: "render" } },
        { ref: "mail", type: "scripted", payload: { step: "mail" }, depends_on: ["render"] },
        { ref: "review", type: "scripted", payload: { step: "review" }, run_at: inAnHour() },
        { ref: "archive", type: "scripted", payload: { step: "archive" }, depends_on: ["mail", "review"], on_dependency_failure: "run" },
      ],
    });
    expect(res.status).toBe(202);
    const [render, mail, review, archive] = (res.body as { id: string }[]).map((item) => item.id) as [string, string, string, string];
    await rig.stack.waitForJob(mail, (job) => job.status === "done");

    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: DESKTOP });
    await page.goto(`${rig.base}/jobs/${mail}`);
    const graph = page.getByTestId("job-graph");
    await graph.waitFor();
    await page.locator('[data-testid="graph-node"]').nth(3).waitFor();
    expect(await page.locator('[data-testid="graph-node"]').count()).toBe(4);
    // Upstream and downstream, each with its short id, type and status (a word, not only a colour).
    for (const [id, status] of [
      [render, "done"],
      [mail, "done"],
      [review, "pending"],
      [archive, "pending"],
    ] as const) {
      const box = node(page, id);
      expect(await box.getAttribute("data-status")).toBe(status);
      const text = (await box.innerText()).toLowerCase();
      expect(text).toContain(id.slice(-8));
      expect(text).toContain("scripted");
      expect(text).toContain(status);
    }
    // The page's own job is marked, in words too, and is not a link to itself.
    const current = node(page, mail);
    expect(await current.getAttribute("data-current")).toBe("true");
    expect(await current.innerText()).toMatch(/this job/i);
    expect(await current.getByRole("link").count()).toBe(0);
    // Its neighbours by id, outside the canvas too.
    const dependencies = page.getByRole("region", { name: "Dependencies" });
    expect(await dependencies.getByRole("link", { name: `Job ${render.slice(-8)}`, exact: true }).count()).toBe(1);
    expect(await dependencies.getByRole("link", { name: `Job ${archive.slice(-8)}`, exact: true }).count()).toBe(1);
    // Edges: render → mail, mail → archive, review → archive, every node inside the canvas (fit view).
    expect(await graph.locator(".react-flow__edge").count()).toBe(3);
    await allNodesInside(page);
    await checkPage(page, "job-graph");
    // At 375 px the graph is fitted again, top to bottom, its nodes still big enough to read and tap.
    await page.setViewportSize({ width: 375, height: 740 });
    await allNodesInside(page, 110);
    const narrow = (await node(page, mail).boundingBox())!;
    expect(narrow.width).toBeGreaterThanOrEqual(110);
    const [top, bottom] = [(await node(page, render).boundingBox())!, (await node(page, archive).boundingBox())!];
    expect(bottom.y).toBeGreaterThan(top.y + top.height);
    await page.setViewportSize(DESKTOP);
    await checkNarrow(page, "job-graph");

    // Live: the review is cancelled elsewhere, the archive runs anyway; both nodes change without a reload.
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 7));
    await rig.stack.api.request.post(`/jobs/${review}/cancel`).set(owner()).expect(200);
    await page.locator(`[data-testid="graph-node"][data-job-id="${review}"][data-status="cancelled"]`).waitFor({ timeout: 15_000 });
    await page.locator(`[data-testid="graph-node"][data-job-id="${archive}"][data-status="done"]`).waitFor({ timeout: 30_000 });
    expect((await node(page, archive).innerText()).toLowerCase()).toContain("done");
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(7);
    await checkPage(page, "job-graph-live");

    // Tab goes from the last neighbour listed above the canvas into the graph's links, then Enter opens the job's
    // page, where that job is the current one.
    await dependencies.getByRole("link", { name: `Job ${archive.slice(-8)}`, exact: true }).focus();
    const focusedJob = () => page.evaluate(() => document.activeElement?.closest('[data-testid="graph-node"]')?.getAttribute("data-job-id") ?? null);
    const reached: string[] = [];
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press("Tab");
      const id = await focusedJob();
      if (id) reached.push(id);
    }
    // Each neighbour's link once, in some order; the page's own job is no stop.
    expect([...reached].sort()).toEqual([render, review, archive].sort());
    await node(page, render).getByRole("link").focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(`${rig.base}/jobs/${render}`);
    await page.locator(`[data-testid="graph-node"][data-job-id="${render}"][data-current="true"]`).waitFor();
    expect(await node(page, mail).getByRole("link").count()).toBe(1);
  });

  it("keeps a job with no dependencies or dependents free of a graph", async () => {
    const id = await rig.enqueue({ type: "scripted", payload: {} });
    await rig.stack.waitForJob(id, (job) => job.status === "done");
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: DESKTOP });
    await page.goto(`${rig.base}/jobs/${id}`);
    await page.locator('[data-testid="attempt-1"][data-outcome="succeeded"]').waitFor();
    expect(await page.getByRole("region", { name: "Dependencies" }).count()).toBe(0);
    expect(await page.getByTestId("job-graph").count()).toBe(0);
    // The graph library is not even loaded for it.
    expect(await page.evaluate(() => performance.getEntriesByType("resource").some((entry) => /job-graph/.test(entry.name)))).toBe(false);
  });
});

describe("a job's attempts on a timeline (issue 23, attempt timing)", () => {
  it("shows when each attempt was due, started and finished, how long it waited and ran, and a retried failure as one", async () => {
    const id = await rig.enqueue({ type: "scripted", payload: { fail_until: 1, sleep_ms: 300 }, max_retries: 1 });
    await rig.stack.waitForJob(id, (job) => job.status === "done");
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: DESKTOP });
    await page.goto(`${rig.base}/jobs/${id}`);
    await page.locator('[data-testid="attempt-1"][data-outcome="retried"]').waitFor();
    await page.locator('[data-testid="attempt-2"][data-outcome="succeeded"]').waitFor();
    for (const n of [1, 2]) {
      expect(await page.getByTestId(`attempt-${n}-queued`).innerText()).toMatch(/^Due .+ · waited \d+(\.\d)? (ms|s)$/);
      expect(await page.getByTestId(`attempt-${n}-timing`).innerText()).toMatch(/^Started .+ · finished .+ · took \d+(\.\d)? (ms|s)$/);
    }
    expect(await page.getByTestId("attempt-1-error").innerText()).toBe("scripted failure on attempt 1");
    expect(await page.getByTestId("attempt-2-error").count()).toBe(0);
    // On one time axis: the second attempt's wait starts at or after the first attempt's run ended.
    const bar = async (name: string) => (await page.getByTestId(name).boundingBox())!;
    const firstRun = await bar("attempt-1-run-bar");
    const secondWait = await bar("attempt-2-wait-bar");
    const secondRun = await bar("attempt-2-run-bar");
    expect(secondWait.x).toBeGreaterThanOrEqual(firstRun.x + firstRun.width - 1);
    expect(secondRun.x).toBeGreaterThanOrEqual(secondWait.x);
    await checkPage(page, "job-attempts");
    await checkNarrow(page, "job-attempts");
  });

  it("follows a running attempt to its outcome without a reload", async () => {
    // The attempt runs until the test lets it finish, so a loaded machine cannot end it before the page is up.
    const release = join(mkdtempSync(join(tmpdir(), "conveyor-attempt-")), "release");
    const id = await rig.enqueue({ type: "scripted", payload: { until_file: release } });
    await rig.stack.waitForJob(id, (job) => job.status === "processing");
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: DESKTOP });
    await page.goto(`${rig.base}/jobs/${id}`);
    await page.locator('[data-testid="attempt-1"][data-outcome="running"]').waitFor();
    expect(await page.getByTestId("attempt-1-timing").innerText()).toMatch(/^Started .+ · running for /);
    writeFileSync(release, "");
    await page.locator('[data-testid="attempt-1"][data-outcome="succeeded"]').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId("attempt-1-timing").innerText()).toMatch(/ · took \d+(\.\d)? (ms|s)$/);
  });
});
