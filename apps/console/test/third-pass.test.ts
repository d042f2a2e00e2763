// The console's third pass (issue 48): defects a new user hit, each driven in Chromium against the real API and
// workers, each a test that failed before its fix.
import { addMember, createApiKey, createOrg } from "@conveyor/api/testing";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { SCRIPTED_PLUGIN, STEPS_PLUGIN } from "@conveyor/api/testing/stack";
import { checkPage, dismissNotifications, expectAccessible, pageProblems, rigForFile, screenshot } from "./support/console";

/** About when the file's stack started (its API's clock started then). */
const fileStarted = Date.now();
const rig = rigForFile({ workers: 1, workerEnv: { WORKER_PLUGINS: `${SCRIPTED_PLUGIN},${STEPS_PLUGIN}` } });
beforeAll(async () => {
  await rig.stack.registerPluginTypes();
  await rig.stack.api.database.db.pool.query("INSERT INTO job_types (name) VALUES ('stepped') ON CONFLICT DO NOTHING");
});

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

describe("a job that waits on a waitpoint (#2)", () => {
  it("shows the wait as a wait of the same attempt, not a shutdown or queue time, and keeps what the job reported before it", async () => {
    const { stack } = rig;
    const owner = { Authorization: `Bearer ${stack.owner.token}` };
    const point = (await stack.post("/waitpoints", { timeout_seconds: 3600, description: "Approve invoice 12" })).body as { id: string };
    const job = (await stack.post("/jobs", { type: "stepped", payload: { steps: 1, report: "written before the wait\n", wait: point.id } })).body.id as string;
    await stack.waitForJob(job, (j) => j.status === "pending" && (j as { waiting_for?: string }).waiting_for === "waitpoint", 60_000);
    // The approval takes a while (a person): long enough that counting it as queue wait shows.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const completedAt = Date.now();
    await stack.api.request
      .post(`/waitpoints/${point.id}/complete`)
      .set(owner)
      .send({ data: { approved: true } })
      .expect(200);
    await stack.waitForJob(job, (j) => j.status === "done", 60_000);

    const page = await rig.loggedIn(stack.owner.email);
    await page.goto(`${rig.base}/jobs/${job}`);
    await page.getByTestId("attempt-1").first().waitFor();
    const attempts = page.getByRole("region", { name: "Attempts" });
    const text = await attempts.innerText();
    expect(text).not.toMatch(/shutting down/);
    // One attempt, paused for its wait and resumed: the wait is named, and the resumed part waited for a worker only.
    expect(await page.locator('[data-testid="attempt-1"][data-outcome="suspended"]').innerText()).toMatch(/waited for waitpoint/i);
    const resumed = page.locator('[data-testid="attempt-1"][data-outcome="succeeded"]');
    expect(await resumed.innerText()).toMatch(/Resumed/);
    const waited = /waited ([\d.]+) (ms|s)\b/.exec(await resumed.getByTestId("attempt-1-queued").innerText());
    expect(waited).not.toBeNull();
    expect(waited![2] === "ms" || Number(waited![1]) < 2).toBe(true);
    // What the job reported before it waited is still there.
    await page.getByTestId("job-output").filter({ hasText: "written before the wait" }).waitFor();
    const stored = await stack.api.request.get(`/jobs/${job}/output`).set(owner);
    expect(stored.text).toContain("written before the wait");
    await checkPage(page, "job-waited-on-waitpoint");

    // The wait is not queue wait on Queues either: the resumed start is due from the waitpoint's end (its run_at), so
    // the due-to-start wait Queues reads of it is the wait for a worker only.
    const starts = (
      await stack.api.database.db.pool.query<{ time: Date; run_at: string | null }>(
        "SELECT time, data->>'run_at' AS run_at FROM events WHERE job_id = $1 AND type = 'job.started' ORDER BY id",
        [job],
      )
    ).rows;
    expect(starts).toHaveLength(2);
    expect(new Date(starts[1]!.run_at!).getTime()).toBeGreaterThanOrEqual(completedAt - 50);
    expect(starts[1]!.time.getTime() - new Date(starts[1]!.run_at!).getTime()).toBeLessThan(2_000);
  });
});

describe("the tab title and the page after an organization switch (#3)", () => {
  it("stays on the page it was on, and titles every later page after its own heading, by keyboard", async () => {
    const { db } = rig.stack.api.database;
    const { config } = rig.stack.api.deps;
    const second = await createOrg(db, config, "Title Works");
    const mine = await addMember(db, config, second.orgId, "admin", rig.stack.owner.userId);
    const res = await rig.stack.api.request.post("/jobs").set("Authorization", `Bearer ${mine.token}`).send({ type: "scripted", payload: {} });
    const id = res.body.id as string;
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/queues`);
    await page.getByRole("heading", { name: "Queues", level: 1 }).waitFor();
    await page.waitForFunction(() => document.title === "Queues · Conveyor");

    // The account menu by keyboard: focus it, open it, pick the organization.
    await page.getByTestId("account-menu").focus();
    await page.keyboard.press("Enter");
    const item = page.getByRole("menuitem", { name: /^Title Works/ });
    await item.waitFor();
    for (let i = 0; i < 5 && !(await item.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await page.getByTestId("org-name").filter({ hasText: "Title Works" }).waitFor();
    // Still on Queues, for the new organization, and titled so.
    expect(new URL(page.url()).pathname).toBe("/queues");
    await page.getByRole("heading", { name: "Queues", level: 1 }).waitFor();
    await page.waitForFunction(() => document.title === "Queues · Conveyor", undefined, { timeout: 5_000 });
    await dismissNotifications(page);

    // Every later page is titled after itself, not the one before.
    const nav = page.getByRole("navigation", { name: "Sections" });
    for (const [link, title] of [
      ["Jobs", "Jobs · Conveyor"],
      ["Overview", "Overview · Conveyor"],
      ["Workers", "Workers · Conveyor"],
    ] as const) {
      await nav.getByRole("link", { name: link, exact: true }).focus();
      await page.keyboard.press("Enter");
      await page.waitForFunction((expected) => document.title === expected, title, { timeout: 5_000 });
    }
    await page.goto(`${rig.base}/jobs`);
    await page.locator(`[data-job-id="${id}"] a`).first().click();
    await page.getByRole("heading", { name: "scripted", level: 1 }).waitFor();
    await page.waitForFunction((short) => document.title.startsWith("scripted ") && document.title.includes(short), id.slice(-8), { timeout: 5_000 });
    expect(await page.title()).not.toContain("not found");

    // A job's page switched away from: the list of the new organization (the job is not one of its).
    await switchTo(page, "Org");
    expect(new URL(page.url()).pathname).toBe("/jobs");
    await page.waitForFunction(() => document.title === "Jobs · Conveyor", undefined, { timeout: 5_000 });
    await checkPage(page, "switch-stays-on-page");
  });
});

describe("replay asks first (#5)", () => {
  it("asks before a replay, says how often the job was replayed, and sends nothing on Enter, Enter", async () => {
    const id = await rig.enqueue({ type: "scripted", payload: {} });
    await rig.stack.waitForJob(id, (job) => job.status === "done");
    const replays = async () => ((await rig.stack.job(id)) as unknown as { replayed_as: string[] }).replayed_as;
    await rig.stack.api.request.post(`/jobs/${id}/replay`).set("Authorization", `Bearer ${rig.stack.owner.token}`).expect(202);
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs/${id}`);
    await page.getByText("Replayed as").waitFor();
    const button = page.getByRole("button", { name: "Replay…", exact: true });
    await button.focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "Replay this job?" });
    await dialog.getByTestId("replay-warning").filter({ hasText: "It was already replayed once." }).waitFor();
    // The focus is on the safe button: Enter keeps the job as it is.
    await page.waitForFunction(() => document.activeElement?.textContent === "Keep it");
    await checkPage(page, "replay-confirm");
    await page.keyboard.press("Enter");
    await dialog.waitFor({ state: "detached" });
    expect(await replays()).toHaveLength(1);
    // Asked again and confirmed (Tab to it): one more replay, and the page of the new job.
    await button.focus();
    await page.keyboard.press("Enter");
    await dialog.waitFor();
    await page.keyboard.press("Tab");
    await page.waitForFunction(() => document.activeElement?.textContent === "Replay");
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.pathname.startsWith("/jobs/") && !url.pathname.endsWith(id));
    expect(await replays()).toHaveLength(2);
  });
});

describe("per-queue charts (#8)", () => {
  it("draws each queue's chart with whole, separate axis labels and units, and a name, at 1440 and 375 px", async () => {
    const jobs = Array.from({ length: 300 }, () => ({ type: "scripted", payload: {} }));
    const res = await rig.stack.api.request.post("/jobs/batch").set("Authorization", `Bearer ${rig.stack.owner.token}`).send({ jobs });
    expect(res.status).toBe(202);
    const ids = (res.body as { id: string }[]).map((job) => job.id);
    await rig.stack.waitForJob(ids.at(-1)!, (job) => job.status === "done", 120_000);

    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/queues`);
    const chart = page.locator('[data-queue-chart="scripted"]');
    const figure = chart.getByRole("img");
    await figure.locator("svg.recharts-surface").first().waitFor();
    expect(await figure.getAttribute("aria-label")).toMatch(/^scripted: attempts started per minute .* p95 wait in seconds/);
    for (const width of [1440, 375]) {
      await page.setViewportSize({ width, height: 900 });
      await page.waitForTimeout(500);
      const layout = await figure.evaluate((el) => {
        const box = el.getBoundingClientRect();
        const texts = Array.from(el.querySelectorAll("text")).map((t) => ({ text: t.textContent ?? "", ...t.getBoundingClientRect().toJSON() }));
        const ticks = Array.from(el.querySelectorAll(".recharts-xAxis .recharts-cartesian-axis-tick-value")).map((t) => t.getBoundingClientRect().toJSON());
        return { box: box.toJSON(), texts, ticks };
      });
      // Every label whole, inside the chart (none clipped at its edge), the busiest minute's hundreds among them.
      await screenshot(page, `queue-chart-${width}`);
      const out = layout.texts.filter(
        (t) => t.left < layout.box.left - 0.5 || t.right > layout.box.right + 0.5 || t.top < layout.box.top - 0.5 || t.bottom > layout.box.bottom + 0.5,
      );
      expect(
        out.map((t) => `${t.text} ${Math.round(t.left)}–${Math.round(t.right)} of ${Math.round(layout.box.left)}–${Math.round(layout.box.right)}`),
      ).toEqual([]);
      expect(layout.texts.some((t) => /^\d{3}$/.test(t.text))).toBe(true);
      expect(layout.texts.map((t) => t.text)).toContain("now");
      expect(await chart.getByTestId("queue-chart-key").innerText()).toMatch(/starts\/min \(left\).*p95 wait, s \(right\)/);
      // The time axis' ticks do not run together.
      for (let i = 1; i < layout.ticks.length; i++) expect(layout.ticks[i]!.left).toBeGreaterThan(layout.ticks[i - 1]!.right + 4);
      expect(layout.box.height).toBeGreaterThanOrEqual(120);
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    await checkPage(page, "queue-chart-1440");
  });
});

describe("the audit log's leftovers and the order of steps (#9)", () => {
  it("says waitpoints and a paused queue in words, links a bulk action by ids to its jobs, and lists steps in the order they were passed", async () => {
    const { stack } = rig;
    const owner = { Authorization: `Bearer ${stack.owner.token}` };
    const api = stack.api.request;
    const point = (await api.post("/waitpoints").set(owner).send({ description: "Approve the refund" })).body as { id: string };
    await api
      .post(`/waitpoints/${point.id}/complete`)
      .set(owner)
      .send({ data: { ok: true } })
      .expect(200);
    await api.patch("/queues/send_sms").set(owner).send({ paused: true }).expect(200);
    await api.patch("/queues/send_sms").set(owner).send({ paused: false }).expect(200);
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push(await rig.enqueue({ type: "scripted", payload: {}, run_at: later }));
    await api.post("/jobs/bulk").set(owner).send({ action: "cancel", ids }).expect(200);
    // A handler that passes step-1, then sleeps "nap", then step-2.
    const stepped = (await stack.post("/jobs", { type: "stepped", payload: { steps: 2, sleep_ms: 300 } })).body.id as string;
    await stack.waitForJob(stepped, (job) => job.status === "done", 60_000);

    const who = stack.owner.email;
    const page = await rig.loggedIn(who, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/audit-log`);
    const sentences = page.getByTestId("audit-sentence");
    await sentences.first().waitFor();
    const all = await sentences.allInnerTexts();
    expect(all).toContain(`${who} completed waitpoint “Approve the refund”, releasing the jobs waiting on it`);
    expect(all).toContain(`${who} paused queue “send_sms”`);
    expect(all).toContain(`${who} resumed queue “send_sms”`);
    expect(all).toContain(`${who} cancelled 2 jobs in bulk, named one by one (2 jobs)`);
    expect(all.join("\n")).not.toMatch(/waitpoint\.complete|on queue/);
    const bulk = page.locator('[data-action="jobs.bulk"]').first();
    expect(await bulk.getByTestId("audit-link").allInnerTexts()).toEqual(ids.map((id) => `job …${id.slice(-8)}`));
    await checkPage(page, "audit-log-third-pass");
    await bulk.getByTestId("audit-link").first().click();
    await page.waitForURL(`${rig.base}/jobs/${ids[0]}`);

    await page.goto(`${rig.base}/jobs/${stepped}`);
    const steps = page.getByRole("list", { name: "Steps" });
    await steps.getByTestId("step-step-2").waitFor();
    expect(await steps.locator("[data-testid^='step-']").evaluateAll((items) => items.map((item) => item.getAttribute("data-testid")))).toEqual([
      "step-step-1",
      "step-nap",
      "step-step-2",
    ]);
  });
});

describe("the 375 px leftovers (#10)", () => {
  it("says due times from now, reaches the first row in four key presses, names a new row, and gives log messages the width", async () => {
    const { stack } = rig;
    const owner = { Authorization: `Bearer ${stack.owner.token}` };
    const marker = `leftovers-${Date.now()}`;
    // One due later, one due but held (its queue paused): the second waits since it was made.
    await stack.api.request.patch("/queues/send_sms").set(owner).send({ paused: true }).expect(200);
    try {
      const later = await rig.enqueue({
        type: "send_email",
        payload: { to: "a@example.com", subject: marker, body: "b" },
        run_at: new Date(Date.now() + 600_000).toISOString(),
      });
      const held = await rig.enqueue({ type: "send_sms", payload: { to: "+254700000001", message: marker } });
      const page = await rig.loggedIn(stack.owner.email, { viewport: { width: 375, height: 740 } });
      await page.goto(`${rig.base}/jobs?q=${marker}`);
      const card = (id: string) => page.locator(`[data-testid="jobs-cards"] [data-job-id="${id}"]`);
      await card(held).waitFor();
      expect(await card(later).innerText()).toMatch(/runs in (9|10) min/);
      await page.waitForFunction(
        (id) => /due \d+ s ago/.test(document.querySelector(`[data-testid="jobs-cards"] [data-job-id="${id}"]`)?.textContent ?? ""),
        held,
      );

      // From a fresh load: skip to content, skip to the list: the first row.
      await page.reload();
      await card(held).waitFor();
      for (const key of ["Tab", "Enter", "Tab", "Enter"]) await page.keyboard.press(key);
      expect(await page.evaluate(() => document.activeElement?.closest("[data-job-id]")?.getAttribute("data-job-id"))).toBe(held);

      // A new row is named, not only counted.
      const fresh: string = await rig.enqueue({
        type: "send_email",
        payload: { to: "a@example.com", subject: marker, body: "b" },
        run_at: new Date(Date.now() + 600_000).toISOString(),
      });
      await card(fresh).waitFor({ timeout: 15_000 });
      await page
        .getByTestId("jobs-announcement")
        .filter({ hasText: `1 new job: send_email ${fresh.slice(-8)}` })
        .waitFor({ state: "attached", timeout: 15_000 });
      await checkPage(page, "jobs-375-leftovers");
    } finally {
      await stack.api.request.patch("/queues/send_sms").set(owner).send({ paused: false }).expect(200);
    }

    // A job's log messages get the line's width at 375 px.
    const done = await rig.enqueue({ type: "scripted", payload: {} });
    await stack.waitForJob(done, (job) => job.status === "done");
    const page = await rig.loggedIn(stack.owner.email, { viewport: { width: 375, height: 740 } });
    await page.goto(`${rig.base}/jobs/${done}`);
    const message = page.getByTestId("log-message").first();
    await message.waitFor();
    expect((await message.boundingBox())!.width).toBeGreaterThan(250);
    await checkPage(page, "job-log-375");
  });
});

describe("the rest of the leftovers (#10)", () => {
  it("offers to look in another organization only for a job that is there, not for an id no organization has", async () => {
    const { db } = rig.stack.api.database;
    const { config } = rig.stack.api.deps;
    const globex = await createOrg(db, config, "Globex Look");
    const member = await addMember(db, config, globex.orgId, "member", rig.stack.owner.userId);
    const theirs = await rig.stack.api.request
      .post("/jobs")
      .set("Authorization", `Bearer ${member.token}`)
      .send({ type: "send_email", payload: { to: "a@example.com", subject: "s", body: "b" }, run_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect(theirs.status).toBe(202);
    const page = await rig.loggedIn(rig.stack.owner.email);

    // A well-formed id that exists nowhere: said not found, and no organization offered (the page learns where it is).
    const nowhere = "01a2200f-0000-7000-8000-0000000000aa";
    const asked = page.waitForResponse((response) => response.url().endsWith(`/auth/session/job-orgs/${nowhere}`), { timeout: 15_000 });
    await page.goto(`${rig.base}/jobs/${nowhere}`);
    await page.getByRole("heading", { name: "Job not found", level: 1 }).waitFor();
    expect((await asked).status()).toBe(200);
    await page.getByTestId("missing-job-text").waitFor();
    expect(await page.getByRole("button", { name: /^Look in / }).count()).toBe(0);
    await checkPage(page, "job-not-found-anywhere");

    // The other organization's job: offered there, and only there.
    await page.goto(`${rig.base}/jobs/${theirs.body.id}`);
    await page.getByRole("button", { name: "Look in Globex Look" }).waitFor();
    expect(await page.getByRole("button", { name: /^Look in / }).count()).toBe(1);
  });

  it("shows the first job card in a phone's first screen, above the filters' fold", async () => {
    const marker = `first-screen-${Date.now()}`;
    const id = await rig.enqueue({
      type: "send_email",
      payload: { to: "a@example.com", subject: marker, body: "b" },
      run_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const height = 667;
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 375, height } });
    await page.goto(`${rig.base}/jobs`);
    const first = page.locator('[data-testid="jobs-cards"] [data-job-id]').first();
    await page.locator(`[data-testid="jobs-cards"] [data-job-id="${id}"]`).waitFor();
    const box = (await first.boundingBox())!;
    await screenshot(page, "jobs-375-first-screen");
    // The whole first card on the first screen (it started about 575 px down, below the filters).
    expect(box.y + box.height).toBeLessThanOrEqual(height);
    await checkPage(page, "jobs-375-first-card");
  });
});

describe("the overview's bars after the minute the stack started (issue 46 #10)", () => {
  it("opens, from the figures table, a list that holds the failed job its bar counts", async () => {
    // The flake's condition made certain: this minute is not the one the stack started in.
    const minute = (ms: number) => Math.floor(ms / 60_000);
    if (minute(Date.now()) === minute(fileStarted)) await new Promise((resolve) => setTimeout(resolve, (minute(fileStarted) + 1) * 60_000 - Date.now() + 200));
    const quiet = await createOrg(rig.stack.api.database.db, rig.stack.api.deps.config, "Later Co");
    const { key } = await createApiKey(rig.stack.api.database.db, quiet);
    const failed = (
      await rig.stack.api.request
        .post("/jobs")
        .set("X-API-Key", key)
        .send({ type: "scripted", payload: { permanent: true } })
    ).body.id as string;
    const { waitFor } = await import("@conveyor/testkit");
    await waitFor(
      async () => ((await rig.stack.api.request.get(`/jobs/${failed}`).set("X-API-Key", key)).body as { status: string }).status === "failed",
      "the job failed",
      30_000,
      200,
    );
    const page = await rig.loggedIn(quiet.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/overview`);
    const byStatus = page.getByRole("region", { name: "Jobs per minute by status" });
    await byStatus.getByRole("button", { name: "Show the figures as a table" }).click();
    const link = byStatus.getByRole("table").getByRole("link", { name: /^1 failed from / });
    await link.click();
    await page.waitForURL(/\/jobs\?/);
    await page.locator(`tr[data-job-id="${failed}"]`).waitFor({ timeout: 15_000 });
  });
});

describe("pausing live updates (feature)", () => {
  it("keeps the list as it is while paused, and reads it again when resumed", async () => {
    const marker = `paused-${Date.now()}`;
    const email = () => ({
      type: "send_email",
      payload: { to: "a@example.com", subject: marker, body: "b" },
      run_at: new Date(Date.now() + 600_000).toISOString(),
    });
    const first = await rig.enqueue(email());
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/jobs?q=${marker}`);
    await page.locator(`tr[data-job-id="${first}"]`).waitFor();
    await page.getByRole("switch", { name: "Live updates" }).click();
    await page.getByText("Paused: the list stays as it is").waitFor();
    const second = await rig.enqueue(email());
    // Live, the new row comes within a second or two (the other tests wait for it); paused, it must not come at all.
    await page.waitForTimeout(4_000);
    expect(await page.locator(`tr[data-job-id="${second}"]`).count()).toBe(0);
    await checkPage(page, "jobs-live-paused");
    await page.getByRole("switch", { name: "Live updates" }).click();
    await page.locator(`tr[data-job-id="${second}"]`).waitFor({ timeout: 10_000 });
  });
});

describe("test run (feature)", () => {
  it("starts a job of a type from a payload editor, refusing a payload the type's schema refuses with its fields named", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/jobs`);
    await page.getByRole("button", { name: "Test run…" }).click();
    const dialog = page.getByRole("dialog", { name: "Start a test run" });
    const editor = dialog.getByLabel("Payload (JSON)");
    await dialog.getByLabel("Job type").fill("send_sms");
    await page.getByRole("option", { name: "send_sms", exact: true }).click();
    expect(JSON.parse(await editor.inputValue())).toHaveProperty("to");
    await editor.fill('{"to": "+254712345678", "message": ');
    await dialog.getByText(/^Not valid JSON/).waitFor();
    expect(await dialog.getByRole("button", { name: "Start send_sms" }).isDisabled()).toBe(true);
    const marker = `test-run-${Date.now()}`;
    await editor.fill(JSON.stringify({ message: marker }));
    await dialog.getByRole("button", { name: "Start send_sms" }).click();
    await dialog.getByTestId("test-run-refusals").filter({ hasText: "“to”" }).waitFor();
    await checkPage(page, "test-run-refused");
    const listed = async () =>
      ((await rig.stack.api.request.get(`/jobs?q=${marker}`).set("Authorization", `Bearer ${rig.stack.owner.token}`)).body as unknown[]).length;
    expect(await listed()).toBe(0);
    await editor.fill(JSON.stringify({ to: "+254712345678", message: marker }));
    await dialog.getByRole("button", { name: "Start send_sms" }).click();
    await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
    await page.getByRole("heading", { name: "send_sms", level: 1 }).waitFor();
    expect(await listed()).toBe(1);
  });
});
