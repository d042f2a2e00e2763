// The jobs list's failures grouped by error (issue 23), in a real browser against the real API and a real worker:
// jobs fail in the worker, the grouped view shows one row per kind of error with its count, replays a group and
// opens its jobs, whose failed rows show their error; and the jobs table at 375 px keeps the status in view (#13).
import { checkNarrow, checkPage, dismissNotifications, rigForFile } from "./support/console";

const rig = rigForFile({ workers: 1 });

const db = () => rig.stack.api.database.db.pool;

describe("failures by error", () => {
  let permanent: string[];
  let retried: string[];
  beforeAll(async () => {
    permanent = await Promise.all([1, 2, 3].map((n) => rig.enqueue({ type: "scripted", payload: { permanent: true, n } })));
    // Each fails on its first attempt with its own attempt number in the message: one group all the same.
    retried = await Promise.all([1, 2].map((n) => rig.enqueue({ type: "scripted", payload: { fail_until: 9, n } })));
    for (const id of [...permanent, ...retried]) await rig.stack.waitForJob(id, (job) => job.status === "failed", 60_000);
  }, 120_000);

  it("groups the failed jobs by error with their counts, replays a group, and opens a group's jobs with their errors", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/jobs`);
    await page.getByText("Failures by error").click();
    await page.waitForURL(/view=failures/);
    const table = page.getByTestId("failure-groups");
    const permanentRow = table.locator("tr", { hasText: "scripted permanent failure" });
    const retriedRow = table.locator("tr", { hasText: /scripted failure on attempt \d+/ });
    await permanentRow.waitFor();
    await retriedRow.waitFor();
    expect(await table.locator("tbody tr").count()).toBe(2);
    expect(await permanentRow.locator("td").nth(1).innerText()).toBe("3");
    expect(await retriedRow.locator("td").nth(1).innerText()).toBe("2");
    // Nothing of these waits to retry: no cancel is offered (it would cancel none).
    expect(await page.getByRole("button", { name: "Cancel retries…" }).count()).toBe(0);
    await checkPage(page, "jobs-failures");
    await checkNarrow(page, "jobs-failures");

    await permanentRow.getByRole("button", { name: /^Replay the 3 failed jobs/ }).click();
    await page.getByTestId("group-action-count").filter({ hasText: "3 failed jobs of type scripted" }).waitFor();
    await checkPage(page, "jobs-failures-replay");
    await page.getByRole("dialog").getByRole("button", { name: "Replay them" }).click();
    await page.getByText("Replayed 3 jobs").waitFor();
    const { rows } = await db().query<{ replay_of: string }>("SELECT replay_of FROM jobs WHERE replay_of = ANY($1::uuid[])", [[...permanent, ...retried]]);
    expect(rows.map((r) => r.replay_of).sort()).toEqual([...permanent].sort());
    await dismissNotifications(page);

    await retriedRow.getByRole("button", { name: "Show jobs" }).click();
    await page.waitForURL(/failure_group=[0-9a-f]{16}/);
    expect(page.url()).not.toContain("view=failures");
    // The group is named by one of its jobs' type and error, not by its hex id.
    await page
      .getByTestId("failure-group-filter")
      .filter({ hasText: /Jobs failing like this scripted job: \W?scripted failure on attempt \d/ })
      .waitFor();
    for (const id of retried) await page.locator(`tr[data-job-id="${id}"]`).waitFor();
    expect(await page.locator("tr[data-job-id]").count()).toBe(2);
    expect(await page.locator(`tr[data-job-id="${retried[0]}"]`).getByTestId("row-error").innerText()).toMatch(/^scripted failure on attempt 1/);
    await checkPage(page, "jobs-failure-group");
    await checkNarrow(page, "jobs-failure-group");
  });
});

describe("grouped failures and the list's own filters", () => {
  it("says which filters set apply to the list only, instead of ignoring them silently", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/jobs?view=failures&q=nothing-holds-this&status=failed`);
    const note = page.getByTestId("failure-groups-list-only");
    await note.filter({ hasText: "the search and the status filter apply to the list of all jobs only" }).waitFor();
    // The groups are still those of every failed job (the search would have matched none).
    await page.getByTestId("failure-groups").locator("tr", { hasText: "scripted permanent failure" }).waitFor();
    await page.getByText("All jobs", { exact: true }).click();
    await page.getByText("No job matches these filters").waitFor();
    expect(await note.count()).toBe(0);
  });
});

describe("the jobs list at 375 px (#13)", () => {
  it("fits the screen with each job's status and error in view: a card per job instead of a 760 px table cut off at the status", async () => {
    const id = await rig.enqueue({ type: "scripted", payload: { permanent: true, width: "narrow" } });
    await rig.stack.waitForJob(id, (job) => job.status === "failed", 60_000);
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 375, height: 740 } });
    await page.goto(`${rig.base}/jobs`);
    const card = page.locator(`li[data-job-id="${id}"]`);
    await card.waitFor();
    const list = (await page.getByTestId("jobs-cards").boundingBox())!;
    const status = (await card.locator('.mantine-Badge-root[data-status="failed"]').boundingBox())!;
    const error = (await card.getByTestId("row-error").boundingBox())!;
    expect(list.x + list.width).toBeLessThanOrEqual(375);
    expect(status.x + status.width).toBeLessThanOrEqual(list.x + list.width);
    expect(error.x + error.width).toBeLessThanOrEqual(list.x + list.width);
    await checkPage(page, "jobs-375");
  });
});

describe("replay with an edited payload", () => {
  it("opens the job's payload for editing, shows the API's refusal by path, and replays with the corrected payload", async () => {
    const marker = `edit-${Date.now()}`;
    const id = await rig.enqueue({
      type: "send_email",
      payload: { to: "nobody@example.invalid", subject: marker, body: "b" },
      run_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    await rig.stack.api.request.post(`/jobs/${id}/cancel`).set("Authorization", `Bearer ${rig.stack.owner.token}`).expect(200);
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/jobs?q=${marker}`);
    await page.getByRole("checkbox", { name: `Select job ${id}` }).check();
    await page.getByRole("button", { name: "Replay with changes…" }).click();
    const box = page.getByLabel("Payload (JSON)");
    await page.waitForFunction(() => (document.querySelector("textarea") as HTMLTextAreaElement | null)?.value.includes("nobody@example.invalid"));
    await box.fill(JSON.stringify({ to: "not an address", subject: marker, body: "b" }));
    await page.getByRole("dialog").getByRole("button", { name: "Replay", exact: true }).click();
    await page.getByTestId("replay-problems").filter({ hasText: "The field to must" }).waitFor();
    await checkPage(page, "jobs-replay-edited-refused");
    await checkNarrow(page, "jobs-replay-edited-refused");

    await box.fill(JSON.stringify({ to: "ada@example.com", subject: marker, body: "b" }));
    await page.getByRole("dialog").getByRole("button", { name: "Replay", exact: true }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/jobs/") && !url.pathname.endsWith(id));
    const replayId = page.url().split("/jobs/")[1]!.split("?")[0]!;
    const replay = (await rig.stack.api.request.get(`/jobs/${replayId}`).set("Authorization", `Bearer ${rig.stack.owner.token}`)).body;
    expect(replay).toMatchObject({ replay_of: id, payload: { to: "ada@example.com", subject: marker } });
    const original = (await rig.stack.api.request.get(`/jobs/${id}`).set("Authorization", `Bearer ${rig.stack.owner.token}`)).body;
    expect(original).toMatchObject({ status: "cancelled", replayed_as: [replayId], payload: { to: "nobody@example.invalid" } });
  });

  it("replays from the job's page with an edited payload, and each job's page links to the other", async () => {
    const marker = `page-${Date.now()}`;
    const id = await rig.enqueue({
      type: "send_email",
      payload: { to: "old@example.com", subject: marker, body: "b" },
      run_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    await rig.stack.api.request.post(`/jobs/${id}/cancel`).set("Authorization", `Bearer ${rig.stack.owner.token}`).expect(200);
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/jobs/${id}`);
    await page.getByRole("button", { name: "Replay with changes…" }).click();
    await page.waitForFunction(() => (document.querySelector("textarea") as HTMLTextAreaElement | null)?.value.includes("old@example.com"));
    await page.getByLabel("Payload (JSON)").fill(JSON.stringify({ to: "new@example.com", subject: marker, body: "b" }));
    await page.getByRole("dialog").getByRole("button", { name: "Replay", exact: true }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/jobs/") && !url.pathname.endsWith(id));
    const replayId = page.url().split("/jobs/")[1]!.split("?")[0]!;
    await page.getByText('"new@example.com"').first().waitFor();
    // The replay names its original, and the original lists its replay: each a link to the other's page.
    await page.getByRole("link", { name: id.slice(-8) }).click();
    await page.waitForURL((url) => url.pathname.endsWith(id));
    await page.getByText("Replayed as").waitFor();
    await checkPage(page, "job-replayed-as");
    await page.getByRole("link", { name: replayId.slice(-8) }).click();
    await page.waitForURL((url) => url.pathname.endsWith(replayId));
  });
});

describe("search that finds", () => {
  it("finds a job by the short id the list shows and by field:value, and says in each row what matched", async () => {
    const marker = `Globex-${Date.now()}`;
    const customer = await rig.enqueue({ type: "scripted", payload: { sleep_ms: 1, customer: marker } });
    const supplier = await rig.enqueue({ type: "scripted", payload: { sleep_ms: 1, supplier: marker } });
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/jobs`);
    const searchBox = page.getByLabel("Search");
    await searchBox.fill(customer.slice(-8));
    await searchBox.press("Enter");
    await page.locator(`tr[data-job-id="${customer}"]`).getByTestId("row-matched").filter({ hasText: "matched short id" }).waitFor();
    expect(await page.locator("tr[data-job-id]").count()).toBe(1);

    await searchBox.fill(`customer:${marker}`);
    await searchBox.press("Enter");
    await page.locator(`tr[data-job-id="${customer}"]`).getByTestId("row-matched").filter({ hasText: "matched payload.customer" }).waitFor();
    expect(await page.locator(`tr[data-job-id="${supplier}"]`).count()).toBe(0);
    await checkPage(page, "jobs-search-field");
    await checkNarrow(page, "jobs-search-field");
  });
});
