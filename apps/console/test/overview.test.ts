// The overview in a real browser against the whole stack: jobs run by a real worker (done, failed, cancelled, one
// waiting for later) show up as jobs per minute by status and by type, the failure rate and the queue's depth, for
// the last hour and the last day — the same figures GET /jobs/stats gives. A fresh organization sees the empty
// state; the second organization's job (a `webhook` created a minute ago) is never counted.
import { createApiKey, createOrg } from "@conveyor/api/testing";
import { checkNarrow, checkPage, rigForFile } from "./support/console";

const rig = rigForFile({ workers: 1 });

type Stats = {
  bucket_seconds: number;
  buckets: { created: number; done: number; failed: number; cancelled: number; by_type: Record<string, { created: number }> }[];
  failure_rate: number | null;
  queue: { pending: number; processing: number; waiting_due: number; delayed: number };
};

async function stats(window: "hour" | "day"): Promise<Stats> {
  const res = await rig.stack.api.request.get("/jobs/stats").query({ window }).set("X-API-Key", rig.stack.apiKey);
  expect(res.status).toBe(200);
  return res.body as Stats;
}

describe("the overview", () => {
  it("shows the empty state in a fresh organization", async () => {
    const fresh = await createOrg(rig.stack.api.database.db, rig.stack.api.deps.config, "Brand New Co");
    const page = await rig.loggedIn(fresh.email);
    await page.goto(`${rig.base}/overview`);
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await page.getByRole("region", { name: "Jobs per minute by status" }).getByText("No jobs in this window").waitFor();
    await page.getByRole("region", { name: "Jobs per minute by type" }).getByText("No jobs in this window").waitFor();
    expect(await page.getByTestId("figure-failure-rate").innerText()).toBe("—");
    expect(await page.getByTestId("figure-pending").innerText()).toBe("0");
    await checkPage(page, "overview-empty");
  });

  it("charts real jobs per minute by status and by type, the failure rate and the queue, for the hour and the day", async () => {
    const done = await Promise.all([1, 2, 3, 4].map((n) => rig.enqueue({ type: "word_count", payload: { text: `count these ${n} words` } })));
    const failed = await Promise.all([1, 2].map(() => rig.enqueue({ type: "scripted", payload: { permanent: true } })));
    const later = await rig.enqueue({ type: "scripted", payload: {}, run_at: new Date(Date.now() + 3_600_000).toISOString() });
    const cancelled = await rig.enqueue({ type: "scripted", payload: {}, run_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await rig.stack.post(`/jobs/${cancelled}/cancel`, {})).status).toBe(200);
    for (const id of done) await rig.stack.waitForJob(id, (job) => job.status === "done");
    for (const id of failed) await rig.stack.waitForJob(id, (job) => job.status === "failed");
    expect((await rig.stack.job(later)).status).toBe("pending");

    const hour = await stats("hour");
    expect(hour.failure_rate).toBeCloseTo(2 / 6);
    expect(hour.queue).toMatchObject({ pending: 1, delayed: 1, processing: 0, waiting_due: 0 });
    expect(hour.buckets.reduce((n, b) => n + b.created, 0)).toBe(8);

    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/overview`);
    const byStatus = page.getByRole("region", { name: "Jobs per minute by status" });
    const byType = page.getByRole("region", { name: "Jobs per minute by type" });
    await byStatus.locator(".recharts-bar-rectangle").filter({ visible: true }).first().waitFor();
    await byType.locator(".recharts-bar-rectangle").filter({ visible: true }).first().waitFor();
    expect(await page.getByTestId("figure-failure-rate").innerText()).toBe("33.3 %");
    expect(await page.getByTestId("figure-pending").innerText()).toBe("1");
    expect(await page.getByTestId("figure-delayed").innerText()).toBe("1");
    expect(await page.getByTestId("figure-due-now").innerText()).toBe("0");
    expect(await page.getByTestId("figure-processing").innerText()).toBe("0");
    // Every status has its series; the types are ours only (the second organization's `webhook` is not counted).
    for (const series of ["created", "done", "failed", "cancelled"]) await byStatus.getByText(series, { exact: true }).first().waitFor();
    for (const type of ["word_count", "scripted"]) await byType.getByText(type, { exact: true }).first().waitFor();
    expect(await byType.getByText("webhook", { exact: true }).count()).toBe(0);
    await checkPage(page, "overview");
    await checkNarrow(page, "overview");

    // The day: 15-minute bars, the same jobs.
    await page.getByText("Last day").click();
    const dayByStatus = page.getByRole("region", { name: "Jobs per 15 minutes by status" });
    await dayByStatus.locator(".recharts-bar-rectangle").filter({ visible: true }).first().waitFor();
    const day = await stats("day");
    expect(day.bucket_seconds).toBe(900);
    expect(day.buckets.reduce((n, b) => n + b.created, 0)).toBe(8);
    expect(await page.getByTestId("figure-failure-rate").innerText()).toBe("33.3 %");
    await page.getByRole("region", { name: "Jobs per 15 minutes by type" }).getByText("word_count", { exact: true }).first().waitFor();
    await checkPage(page, "overview-day");
  });

  it("counts whole jobs on its axes, adds Pending up, and opens the matching jobs list from every figure and bar (issue 23 #10)", async () => {
    // A quiet organization: one job done, one failed, one due in an hour — at this volume the axes used to read 0.25.
    const quiet = await createOrg(rig.stack.api.database.db, rig.stack.api.deps.config, "Quiet Co");
    const { key } = await createApiKey(rig.stack.api.database.db, quiet);
    const post = async (body: object) => (await rig.stack.api.request.post("/jobs").set("X-API-Key", key).send(body)).body.id as string;
    const done = await post({ type: "word_count", payload: { text: "one quiet job" } });
    const failed = await post({ type: "scripted", payload: { permanent: true } });
    const delayed = await post({ type: "scripted", payload: {}, run_at: new Date(Date.now() + 3_600_000).toISOString() });
    const job = async (id: string) => (await rig.stack.api.request.get(`/jobs/${id}`).set("X-API-Key", key)).body as { status: string };
    const { waitFor } = await import("@conveyor/testkit");
    await waitFor(async () => (await job(done)).status === "done" && (await job(failed)).status === "failed", "both jobs finished", 30_000, 200);

    const page = await rig.loggedIn(quiet.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/overview`);
    const byStatus = page.getByRole("region", { name: "Jobs per minute by status" });
    const byType = page.getByRole("region", { name: "Jobs per minute by type" });
    await byStatus.locator(".recharts-bar-rectangle").filter({ visible: true }).first().waitFor();
    for (const chart of [byStatus, byType]) {
      // The vertical axis's labels (recharts draws them in a layer of their own, anchored at their end).
      const ticks = await chart.locator('.recharts-cartesian-axis-tick-value[text-anchor="end"]').allTextContents();
      expect(ticks.length).toBeGreaterThan(1);
      for (const tick of ticks) expect(tick.trim()).toMatch(/^\d+$/);
    }
    // One snapshot: the pending figure is the sum of its parts.
    const figure = async (name: string) => Number((await page.getByTestId(`figure-${name}`).innerText()).replace(/\D/g, ""));
    expect(await figure("pending")).toBe(1);
    expect((await figure("due-now")) + (await figure("delayed"))).toBe(await figure("pending"));
    await checkPage(page, "overview-quiet");
    await checkNarrow(page, "overview-quiet");

    const search = () => Object.fromEntries(new URL(page.url()).searchParams);
    // Each figure opens the jobs list filtered to what it counts.
    for (const [label, status] of [
      ["Pending", "pending"],
      ["Processing", "processing"],
      ["Failure rate", "failed"],
    ] as const) {
      await page.locator(`a[data-figure="${label}"]`).click();
      await page.waitForURL(/\/jobs\?/);
      expect(search()).toMatchObject({ status });
      await page.goBack();
      await byStatus.locator(".recharts-bar-rectangle").filter({ visible: true }).first().waitFor();
    }
    // Due now and Delayed open the pending jobs due now and later: the delayed job in the one, not in the other.
    for (const [label, due, listed] of [
      ["Due now", "now", false],
      ["Delayed", "later", true],
    ] as const) {
      await page.locator(`a[data-figure="${label}"]`).click();
      await page.waitForURL(/\/jobs\?/);
      expect(search()).toEqual({ due });
      await page.getByTestId("due-filter").waitFor();
      if (listed) await page.locator(`tr[data-job-id="${delayed}"]`).waitFor();
      else await page.getByText("No job matches these filters").waitFor();
      expect(await page.locator(`tr[data-job-id="${done}"], tr[data-job-id="${failed}"]`).count()).toBe(0);
      if (listed) await checkPage(page, "jobs-due-later");
      await page.goBack();
      await byStatus.locator(".recharts-bar-rectangle").filter({ visible: true }).first().waitFor();
    }
    // By keyboard: the chart's figures as a table, each count a link to its jobs (the bars take mouse clicks only).
    const showTable = byStatus.getByRole("button", { name: "Show the figures as a table" });
    await showTable.focus();
    await page.keyboard.press("Enter");
    const failedLink = byStatus.getByRole("table").getByRole("link", { name: /^1 failed from / });
    await failedLink.waitFor();
    await checkPage(page, "overview-figures-table");
    await failedLink.focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/jobs\?/);
    expect(search().status).toBe("failed");
    // The figures count jobs that finished in a minute, and open the jobs that finished in it (issue 38 #3).
    expect(Date.parse(search().finished_before!) - Date.parse(search().finished_after!)).toBe(60_000);
    await page.locator(`tr[data-job-id="${failed}"]`).waitFor();
    await page.goBack();
    await byStatus.locator(".recharts-bar-rectangle").filter({ visible: true }).first().waitFor();
    // A bar of the status chart: that outcome, finished in that minute; the failed job is in the list it opens.
    await byStatus.locator(".recharts-bar-rectangle path[fill*='red']").first().click();
    await page.waitForURL(/\/jobs\?/);
    const bar = search();
    expect(bar.status).toBe("failed");
    expect(Date.parse(bar.finished_before!) - Date.parse(bar.finished_after!)).toBe(60_000);
    await page.locator(`[data-job-id="${failed}"], a[href="/jobs/${failed}"]`).first().waitFor();
    await page.goBack();
    // A bar of the type chart: that type, created in that minute.
    await byType.locator(".recharts-bar-rectangle").filter({ visible: true }).first().waitFor();
    await byType.locator(".recharts-bar-rectangle").filter({ visible: true }).first().click();
    await page.waitForURL(/\/jobs\?/);
    expect(["word_count", "scripted"]).toContain(search().type);
    expect(search().created_after).toBeTruthy();
  });
});
