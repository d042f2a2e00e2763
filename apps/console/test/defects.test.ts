// Defects a person hit in the console (issue 23), each driven in a real browser against the real API, each a test
// that failed before its fix: two tabs after an organization switch, a filtered list keeping rows that no longer
// match, bulk cancel offered for finished jobs, a retried attempt drawn as a success with no timing, and the bulk bar
// pushing the rows down / the header checkbox going blank with "all matching" selected, notifications over the main
// buttons, a missing or other organization's job, and every tab titled "Conveyor" with no skip link and the focus
// lost after a navigation.
import { addMember, createOrg } from "@conveyor/api/testing";
import { checkPage, dismissNotifications, field, rigForFile } from "./support/console";

const rig = rigForFile({ workers: 1 });

const owner = () => ({ Authorization: `Bearer ${rig.stack.owner.token}` });
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
const schedulesOf = async (token: string) =>
  ((await rig.stack.api.request.get("/schedules").set("Authorization", `Bearer ${token}`)).body as { name: string }[]).map((s) => s.name);

describe("two tabs, two organizations (#1)", () => {
  it("makes the other tab follow a switch at once, and refuses a change sent before it has", async () => {
    const { db } = rig.stack.api.database;
    const { config } = rig.stack.api.deps;
    const second = await createOrg(db, config, "Second Works");
    const mine = await addMember(db, config, second.orgId, "admin", rig.stack.owner.userId);
    const first = await rig.loggedIn(rig.stack.owner.email);
    const other = await first.context().newPage();
    await first.goto(`${rig.base}/schedules`);
    await other.goto(`${rig.base}/schedules`);
    await other.getByRole("heading", { name: "Schedules", level: 1 }).waitFor();
    const firstName = await other.getByTestId("org-name").innerText();

    await first.getByTestId("account-menu").click();
    await first.getByRole("menuitem", { name: /^Second Works/ }).click();
    await first.getByTestId("org-name").filter({ hasText: "Second Works" }).waitFor();
    // The other tab shows the organization its requests now reach, and says why it changed.
    await other.getByTestId("org-name").filter({ hasText: "Second Works" }).waitFor();
    await other.getByText("Now showing Second Works").waitFor();
    await checkPage(other, "two-tabs-followed");
    await dismissNotifications(other);

    // A tab that has not heard of a switch yet (its notice still on the way) sends no change: simulated, with the
    // first tab closed (it would answer with the session it reads), by telling the storage that another organization
    // is current.
    await first.close();
    await other.evaluate(() => window.localStorage.setItem("conveyor.session-org", "00000000-0000-7000-8000-000000000000"));
    await other.getByRole("button", { name: "New schedule" }).click();
    await field(other, "Name").fill("Written in the wrong tab");
    await other
      .getByRole("dialog")
      .getByRole("button", { name: /^(Create|Save)/ })
      .click();
    await other.getByText(/You switched organization in another tab/).waitFor();
    expect(await schedulesOf(mine.token)).not.toContain("Written in the wrong tab");
    expect(await schedulesOf(rig.stack.owner.token)).not.toContain("Written in the wrong tab");
    expect(firstName).not.toContain("Second Works");
  });
});

describe("the jobs list", () => {
  it("drops a row that no longer matches its status filter after a live update (#2)", async () => {
    const id = await rig.enqueue({ type: "send_email", payload: { to: "a@example.com", subject: "s", body: "b" }, run_at: inAnHour() });
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs?status=pending`);
    await page.locator(`tr[data-job-id="${id}"]`).waitFor();
    await rig.stack.api.request.post(`/jobs/${id}/cancel`).set(owner()).expect(200);
    await page.locator(`tr[data-job-id="${id}"]`).waitFor({ state: "detached", timeout: 15_000 });
    expect(await page.locator('tr[data-status]:not([data-status="pending"])').count()).toBe(0);
  });

  it("offers bulk cancel only for jobs it can cancel (#3)", async () => {
    const marker = `finished-${Date.now()}`;
    const ids = await Promise.all(
      [1, 2].map(() => rig.enqueue({ type: "send_email", payload: { to: "a@example.com", subject: marker, body: "b" }, run_at: inAnHour() })),
    );
    await rig.stack.api.request.post(`/jobs/${ids[0]}/cancel`).set(owner()).expect(200);
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs?q=${marker}&status=cancelled`);
    await page.getByRole("checkbox", { name: `Select job ${ids[0]}` }).check();
    await page.getByRole("button", { name: "Replay…" }).waitFor();
    expect(await page.getByRole("button", { name: "Cancel…" }).count()).toBe(0);
    await checkPage(page, "jobs-bulk-finished");
    // A pending one beside it: both actions apply to some of them.
    await page.goto(`${rig.base}/jobs?q=${marker}`);
    await page.getByRole("checkbox", { name: `Select job ${ids[0]}` }).check();
    await page.getByRole("checkbox", { name: `Select job ${ids[1]}` }).check();
    await page.getByRole("button", { name: "Cancel…" }).waitFor();
    await page.getByRole("button", { name: "Replay…" }).waitFor();
  });

  it("keeps the rows in place when a row is selected, and the header checkbox checked with all matching selected (#7)", async () => {
    const marker = `many-${Date.now()}`;
    const res = await rig.stack.post("/jobs/batch", {
      jobs: Array.from({ length: 51 }, () => ({ type: "send_email", payload: { to: "a@example.com", subject: marker, body: "b" }, run_at: inAnHour() })),
    });
    expect(res.status).toBe(202);
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs?q=${marker}`);
    const firstRow = page.locator("tr[data-job-id]").first();
    await firstRow.waitFor();
    // Measured on the page's own rows: the API's drawing of the page (first-page-server.tsx) is replaced when the
    // script takes over, and a row measured in between is none.
    await page.locator("#first-rows").waitFor({ state: "detached" });
    const before = (await firstRow.boundingBox())!.y;
    await firstRow.getByRole("checkbox").check();
    await page.getByTestId("selection-count").waitFor();
    expect((await firstRow.boundingBox())!.y).toBe(before);

    const header = page.getByRole("checkbox", { name: "Select every job on this page" });
    await header.check();
    await page.getByRole("button", { name: "Select all matching jobs" }).click();
    await page
      .getByTestId("selection-count")
      .filter({ hasText: /^All \d+ matching jobs selected/ })
      .waitFor();
    expect(await header.isChecked()).toBe(true);
    await checkPage(page, "jobs-all-matching");
  });
});

describe("a job's attempts (#4)", () => {
  it("draws a failed attempt that was retried as a failure, with each attempt's start, finish and duration", async () => {
    const id = await rig.enqueue({ type: "scripted", payload: { fail_until: 1 }, max_retries: 1 });
    await rig.stack.waitForJob(id, (job) => job.status === "done");
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs/${id}`);
    const first = page.locator('[data-testid="attempt-1"][data-outcome="retried"]');
    await first.waitFor();
    expect(await first.innerText()).toContain("Attempt 1: failed, retried");
    await page.locator('[data-testid="attempt-2"][data-outcome="succeeded"]').waitFor();
    for (const n of [1, 2]) expect(await page.getByTestId(`attempt-${n}-timing`).innerText()).toMatch(/^Started .+ · finished .+ · took \d+(\.\d)? (ms|s)$/);
    // A finished job says when it finished, not when it was last due.
    expect(await page.getByText("Runs at", { exact: true }).count()).toBe(0);
    await page.getByText("Finished", { exact: true }).waitFor();
    await checkPage(page, "job-retried");
  });

  it("says when a due job is due instead of a dash (#4)", async () => {
    await rig.stack.api.request.patch("/queues/scripted").set(owner()).send({ paused: true }).expect(200);
    try {
      const id = await rig.enqueue({ type: "scripted", payload: {} });
      const page = await rig.loggedIn(rig.stack.owner.email);
      await page.goto(`${rig.base}/jobs/${id}`);
      const due = page.getByText("Due", { exact: true }).locator("..");
      await due.locator("time").waitFor();
      expect(await due.innerText()).not.toContain("—");
    } finally {
      await rig.stack.api.request.patch("/queues/scripted").set(owner()).send({ paused: false }).expect(200);
    }
  });
});

describe("notifications (#8)", () => {
  it("never cover the page's main button or the account menu, however many there are", async () => {
    const created = await rig.stack.post("/schedules", {
      name: "Toggled",
      cron: "0 8 * * 1",
      timezone: "UTC",
      job: { type: "send_email", payload: { to: "a@example.com", subject: "s", body: "b" } },
    });
    expect(created.status).toBe(201);
    for (const viewport of [
      { width: 1440, height: 900 },
      { width: 375, height: 740 },
    ]) {
      const page = await rig.loggedIn(rig.stack.owner.email, { viewport });
      await page.goto(`${rig.base}/schedules`);
      const toggle = page.getByRole("switch", { name: /^(Pause|Resume) Toggled$/ });
      for (let i = 0; i < 4; i++) {
        await toggle.focus();
        await page.keyboard.press("Space");
        await page.waitForTimeout(300);
      }
      await page.locator(".mantine-Notification-root").nth(2).waitFor();
      expect(await page.locator(".mantine-Notification-root").count()).toBeLessThanOrEqual(3);
      const boxes = await page.locator(".mantine-Notification-root").evaluateAll((els) => els.map((el) => el.getBoundingClientRect().toJSON() as DOMRect));
      for (const target of [page.getByRole("button", { name: "New schedule" }), page.getByTestId("account-menu")]) {
        const box = (await target.boundingBox())!;
        for (const n of boxes) {
          const overlaps = n.x < box.x + box.width && box.x < n.x + n.width && n.y < box.y + box.height && box.y < n.y + n.height;
          expect(overlaps).toBe(false);
        }
      }
      if (viewport.width === 1440) await checkPage(page, "notifications");
    }
  });
});

describe("a job that is not there (#9)", () => {
  it("says so without raw JSON or a useless retry, and offers the person's other organizations", async () => {
    const { db } = rig.stack.api.database;
    const { config } = rig.stack.api.deps;
    const third = await createOrg(db, config, "Third Haulage");
    await addMember(db, config, third.orgId, "member", rig.stack.owner.userId);
    const theirs = await rig.stack.api.request
      .post("/jobs")
      .set("Authorization", `Bearer ${third.token}`)
      .send({ type: "send_email", payload: { to: "a@example.com", subject: "s", body: "b" }, run_at: inAnHour() });
    expect(theirs.status).toBe(202);

    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs/not-a-job-id`);
    await page.getByRole("heading", { name: "Job not found", level: 1 }).waitFor();
    expect(await page.locator("body").innerText()).not.toContain('{"error"');
    expect(await page.getByRole("button", { name: "Try again" }).count()).toBe(0);
    await checkPage(page, "job-not-found");

    await page.goto(`${rig.base}/jobs/${theirs.body.id}`);
    await page.getByRole("heading", { name: "Job not found", level: 1 }).waitFor();
    await page.getByRole("button", { name: "Look in Third Haulage" }).click();
    await page.getByRole("heading", { name: "send_email", level: 1 }).waitFor();
    await page.getByTestId("org-name").filter({ hasText: "Third Haulage" }).waitFor();
  });
});

describe("accessibility (#14)", () => {
  it("titles each tab after its page, moves the focus to the new page, and has a skip link", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/queues`);
    await page.waitForFunction(() => document.title === "Queues · Conveyor");
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Schedules" }).click();
    await page.waitForFunction(() => document.title === "Schedules · Conveyor");
    await page.waitForFunction(() => document.activeElement?.tagName === "H1" && document.activeElement.textContent === "Schedules");

    // A page's first Tab stop.
    await page.reload();
    await page.getByRole("heading", { name: "Schedules", level: 1 }).waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await checkPage(page, "skip-link");
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("main");

    const anonymous = await (await rig.context()).newPage();
    await anonymous.goto(`${rig.base}/login`);
    await anonymous.waitForFunction(() => document.title.endsWith(" · Conveyor"));
  });
});

describe("a job cancelled before it ran (#12)", () => {
  it("shows no attempt, only when and by whom it was cancelled", async () => {
    const id = await rig.enqueue({ type: "send_email", payload: { to: "a@example.com", subject: "s", body: "b" }, run_at: inAnHour() });
    await rig.stack.api.request.post(`/jobs/${id}/cancel`).set(owner()).expect(200);
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs/${id}`);
    await page.getByText("It was cancelled before an attempt started.").waitFor();
    await page
      .getByTestId("job-note")
      .filter({ hasText: /Cancelled by .+ before it started\./ })
      .waitFor();
    expect(await page.getByTestId("attempt-1").count()).toBe(0);
    await checkPage(page, "job-cancelled-before-start");
  });
});
