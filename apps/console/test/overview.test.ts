// The overview in a real browser against the whole stack: jobs run by a real worker (done, failed, cancelled, one
// waiting for later) show up as jobs per minute by status and by type, the failure rate and the queue's depth, for
// the last hour and the last day — the same figures GET /jobs/stats gives. A fresh organization sees the empty
// state; the second organization's job (a `webhook` created a minute ago) is never counted.
import { createOrg } from "@conveyor/testkit/api";
import { checkNarrow, checkPage, startRig, type Rig } from "./support/console";

let rig: Rig;
beforeAll(async () => {
  rig = await startRig({ workers: 1 });
}, 180_000);
afterEach(() => rig?.stack.expectOtherOrgUntouched());
afterAll(() => rig?.close());

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

const enqueue = async (body: object) => {
  const res = await rig.stack.post("/jobs", body);
  if (res.status !== 202) throw new Error(`POST /jobs: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
};

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
    const done = await Promise.all([1, 2, 3, 4].map((n) => enqueue({ type: "word_count", payload: { text: `count these ${n} words` } })));
    const failed = await Promise.all([1, 2].map(() => enqueue({ type: "scripted", payload: { permanent: true } })));
    const later = await enqueue({ type: "scripted", payload: {}, run_at: new Date(Date.now() + 3_600_000).toISOString() });
    const cancelled = await enqueue({ type: "scripted", payload: {}, run_at: new Date(Date.now() + 3_600_000).toISOString() });
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
});
