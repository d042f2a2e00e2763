// The jobs pages in a real browser against the whole stack (API, real workers): filters in the URL, search,
// keyset pages, a job moving to done on screen without a reload, bulk cancel and replay, a job's page (payload,
// result, error, attempts and logs, PDF artifact, cancel, replay), markup in payloads and errors shown as text,
// and a second organization whose jobs never appear.
import { checkNarrow, checkPage, rigForFile } from "./support/console";

const rig = rigForFile({ workers: 1 });

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

describe("the jobs list", () => {
  it("shows a new job and moves it to done on screen without a reload", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs`);
    await page.getByRole("heading", { name: "Jobs" }).waitFor();
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
    const id = await rig.enqueue({ type: "scripted", payload: { sleep_ms: 1500 } });
    const row = page.locator(`tr[data-job-id="${id}"]`);
    await row.waitFor({ timeout: 15_000 });
    await page.locator(`tr[data-job-id="${id}"][data-status="done"]`).waitFor({ timeout: 30_000 });
    // How long its attempt took (it sleeps 1.5 s), from the live events' data, as the API's started_at and finished_at say.
    const shown = await row.getByTestId("row-duration").innerText();
    expect(shown).toMatch(/^\d+\.\d s$/);
    const job = await rig.stack.waitForJob(id, (j) => j.status === "done");
    const took = Date.parse(job.finished_at!) - Date.parse(job.started_at!);
    expect(took).toBeGreaterThanOrEqual(1500);
    expect(shown).toBe(`${(took / 1000).toFixed(1)} s`);
    // The same document all along: no reload happened.
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(42);
    await checkPage(page, "jobs");
    await checkNarrow(page, "jobs");
  });

  it("sorts by creation time both ways from the Created column's header, keeping the filters", async () => {
    const older = await rig.enqueue({ type: "scripted", payload: { sort: 1 }, run_at: inAnHour() });
    const newer = await rig.enqueue({ type: "scripted", payload: { sort: 2 }, run_at: inAnHour() });
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/jobs?status=pending&type=scripted`);
    const order = async () => {
      const ids = await page.locator("tr[data-job-id]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-job-id")));
      return ids.filter((id) => id === older || id === newer);
    };
    // The header says the new order at once; the rows follow when the list's answer comes (the last one is kept until then).
    const rowsIn = (first: string, second: string) =>
      page.waitForFunction(
        ([a, b]) => {
          const ids = Array.from(document.querySelectorAll("tr[data-job-id]"), (row) => row.getAttribute("data-job-id")).filter((id) => id === a || id === b);
          return ids.length === 2 && ids[0] === a;
        },
        [first, second],
      );
    await page.locator(`tr[data-job-id="${newer}"]`).waitFor();
    expect(await order()).toEqual([newer, older]);
    const header = page.getByRole("columnheader", { name: /Created/ });
    expect(await header.getAttribute("aria-sort")).toBe("descending");
    await header.getByRole("button").click();
    await page.waitForURL((url) => url.searchParams.get("order") === "oldest" && url.searchParams.get("status") === "pending");
    await page.waitForFunction(() => document.querySelector("th[aria-sort]")?.getAttribute("aria-sort") === "ascending");
    await rowsIn(older, newer);
    expect(await order()).toEqual([older, newer]);
    await checkPage(page, "jobs-oldest-first");
    await header.getByRole("button").click();
    await page.waitForURL((url) => !url.searchParams.has("order"));
    await page.waitForFunction(() => document.querySelector("th[aria-sort]")?.getAttribute("aria-sort") === "descending");
    await rowsIn(newer, older);
    expect(await order()).toEqual([newer, older]);
  });

  it("keeps every filter and the search in the URL, and pages with the API's cursor", async () => {
    const marker = `needle-${Date.now()}`;
    const found = await rig.enqueue({ type: "word_count", payload: { text: marker } });
    await rig.stack.waitForJob(found, (job) => job.status === "done");
    const res = await rig.stack.post("/jobs/batch", { jobs: Array.from({ length: 55 }, () => ({ type: "scripted", payload: {}, run_at: inAnHour() })) });
    expect(res.status).toBe(202);

    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs?status=done&type=word_count`);
    await page.locator(`tr[data-job-id="${found}"]`).waitFor();
    expect(await page.locator("tr[data-status]:not([data-status=done])").count()).toBe(0);
    // Shareable: a fresh browser with the same address sees the same view.
    const other = await rig.loggedIn(rig.stack.owner.email);
    await other.goto(page.url());
    await other.locator(`tr[data-job-id="${found}"]`).waitFor();

    await page.goto(`${rig.base}/jobs`);
    await page.getByRole("searchbox").or(page.getByLabel("Search")).first().fill(marker);
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.searchParams.get("q") === marker);
    await page.locator(`tr[data-job-id="${found}"]`).waitFor();
    expect(await page.locator("tr[data-job-id]").count()).toBe(1);

    await page.goto(`${rig.base}/jobs?status=pending`);
    await page.locator("tr[data-job-id]").first().waitFor();
    const first = await page.locator("tr[data-job-id]").first().getAttribute("data-job-id");
    expect(await page.locator("tr[data-job-id]").count()).toBe(50);
    await page.getByRole("button", { name: "Next page" }).click();
    await page.waitForURL((url) => url.searchParams.has("cursor"));
    await page.waitForFunction((id) => !document.querySelector(`tr[data-job-id="${id}"]`), first);
    expect(await page.locator("tr[data-job-id]").count()).toBeGreaterThanOrEqual(5);
    await checkPage(page, "jobs-page-two");
  });

  it("cancels selected jobs, then replays every matching job, with a count and a confirmation", async () => {
    const type = "scripted";
    const ids = await Promise.all([1, 2, 3].map(() => rig.enqueue({ type, payload: { batch: "bulk" }, run_at: inAnHour(), priority: 2 })));
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs?q=bulk`);
    for (const id of ids) await page.locator(`tr[data-job-id="${id}"]`).waitFor();
    await page.getByRole("checkbox", { name: `Select job ${ids[0]}` }).check();
    await page.getByRole("checkbox", { name: `Select job ${ids[1]}` }).check();
    await page.getByRole("button", { name: "Cancel…" }).click();
    await page.getByTestId("bulk-count").filter({ hasText: "2 selected jobs." }).waitFor();
    await checkPage(page, "jobs-bulk-confirm");
    await page.getByRole("button", { name: "Cancel them" }).click();
    await page.getByText("Cancelled 2 jobs").waitFor();
    for (const id of ids.slice(0, 2)) await page.locator(`tr[data-job-id="${id}"][data-status="cancelled"]`).waitFor();
    expect((await rig.stack.job(ids[2]!)).status).toBe("pending");

    // Every cancelled job matching the search, by filter.
    await page.goto(`${rig.base}/jobs?q=bulk&status=cancelled`);
    await page.locator("tr[data-job-id]").nth(1).waitFor();
    await page.getByRole("checkbox", { name: "Select every job on this page" }).check();
    await page.getByRole("button", { name: "Replay…" }).click();
    await page.getByRole("button", { name: "Replay them" }).click();
    await page.getByText("Replayed 2 jobs").waitFor();
    const replays = (await rig.stack.api.database.db.pool.query("SELECT replay_of FROM jobs WHERE replay_of = ANY($1::uuid[])", [ids])).rows;
    expect(replays.map((r) => r.replay_of).sort()).toEqual(ids.slice(0, 2).sort());
  });

  // The rows are plain elements wearing Mantine's classes (jobs-rows.tsx): they must look like the components they stand
  // for — the header's checkbox and the job page's status badge are those components — and a row's link must still open
  // the job in place, as a router link does, and leave a modified click to the browser.
  it("draws its rows as Mantine's components, and a row's link opens the job's page in place", async () => {
    const id = await rig.enqueue({ type: "scripted", payload: { look: "alike" }, run_at: inAnHour() });
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/jobs?q=alike`);
    const row = page.locator(`tr[data-job-id="${id}"]`);
    await row.waitFor();
    // The page's own rows: the API's drawing of the page (first-page-server.tsx) is gone once they are drawn.
    await page.locator("#first-rows").waitFor({ state: "detached" });
    const look = (selector: string, props: string[], pseudo?: string) =>
      page
        .locator(selector)
        .first()
        .evaluate(
          async (el, [names, pseudoElement]) => {
            // After its transitions (a checkbox's colours ease in over 100 ms when it is checked).
            await Promise.all(el.getAnimations().map((animation) => animation.finished));
            const style = getComputedStyle(el, pseudoElement ?? null);
            return Object.fromEntries((names as string[]).map((name) => [name, style.getPropertyValue(name)]));
          },
          [props, pseudo] as const,
        );
    const BOX = ["width", "height", "border-radius", "border-top-color", "background-color", "cursor"];
    const ICON = ["color", "opacity", "width", "transform"];
    const header = 'th input[aria-label="Select every job on this page"]';
    const mine = `tr[data-job-id="${id}"] input[type=checkbox]`;
    expect(await look(mine, BOX)).toEqual(await look(header, BOX));
    expect(await look(`${mine} + svg`, ICON)).toEqual(await look(`${header} + svg`, ICON));
    // Checked (the only row of this search: the header's checkbox is checked with it).
    await page.getByRole("checkbox", { name: `Select job ${id}` }).check();
    await page.waitForFunction((selector) => document.querySelector<HTMLInputElement>(selector)?.checked, header);
    expect(await look(mine, BOX)).toEqual(await look(header, BOX));
    expect(await look(`${mine} + svg`, ICON)).toEqual(await look(`${header} + svg`, ICON));
    const BADGE = ["height", "padding-left", "font-size", "font-weight", "text-transform", "border-radius", "background-color", "color", "border-top-color"];
    const badge = '.mantine-Badge-root[data-status="pending"]';
    const rowBadge = {
      box: await look(`tr[data-job-id="${id}"] ${badge}`, BADGE),
      dot: await look(`tr[data-job-id="${id}"] ${badge}`, ["background-color", "width"], "::before"),
    };

    // A click with a modifier is the browser's (a new tab): the list stays.
    const link = row.getByRole("link", { name: id.slice(-8) });
    expect(await link.getAttribute("href")).toBe(`/jobs/${id}`);
    const [opened] = await Promise.all([page.context().waitForEvent("page"), link.click({ modifiers: ["ControlOrMeta"] })]);
    await opened.close();
    expect(new URL(page.url()).pathname).toBe("/jobs");
    // A plain click: the job's page, in the same document.
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 7));
    await link.click();
    await page.waitForURL((url) => url.pathname === `/jobs/${id}`);
    await page.getByRole("heading", { name: "scripted" }).waitFor();
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(7);
    expect({ box: await look(badge, BADGE), dot: await look(badge, ["background-color", "width"], "::before") }).toEqual(rowBadge);
  });
});

describe("a job's page", () => {
  it("shows payload, result, attempts with their logs, and the PDF it produced", async () => {
    const id = await rig.enqueue({
      type: "generate_pdf",
      payload: { template: "invoice", data: { number: "INV-7", customer: "Globex", items: [{ description: "Work", quantity: 2, unit_price: 40 }] } },
    });
    await rig.stack.waitForJob(id, (job) => job.status === "done", 60_000);
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs/${id}`);
    await page.getByRole("heading", { name: "generate_pdf" }).waitFor();
    await page.getByTestId("attempt-1").waitFor();
    await page.getByTitle("PDF preview").waitFor();
    await page.getByTestId("artifact-download").waitFor();
    expect(await page.getByRole("region", { name: "Payload", exact: true }).innerText()).toContain("INV-7");
    expect(await page.getByRole("region", { name: "Result", exact: true }).innerText()).toMatch(/pages|bytes/);
    await checkPage(page, "job-pdf");
    await checkNarrow(page, "job-pdf");
  });

  it("shows markup in a payload and in an error as text, and replays a failed job", async () => {
    const markup = `<script>alert("payload")</script>"><img src=x onerror=alert(1)><a href="javascript:alert(2)">click</a>`;
    const id = await rig.enqueue({ type: "scripted", payload: { permanent: true, note: markup } });
    await rig.stack.waitForJob(id, (job) => job.status === "failed");
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs/${id}`);
    await page.getByTestId("job-error").waitFor();
    expect(await page.getByRole("region", { name: "Payload", exact: true }).innerText()).toContain("<img src=x onerror=alert(1)>");
    expect(await page.locator("img[onerror], a[href^='javascript:'], script:not([src])").count()).toBe(0);
    await checkPage(page, "job-failed");
    await page.getByRole("button", { name: "Replay…", exact: true }).click();
    await page.getByRole("dialog", { name: "Replay this job?" }).getByRole("button", { name: "Replay", exact: true }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/jobs/") && !url.pathname.endsWith(id));
    await page.getByText("Replay of").waitFor();
    const replay = new URL(page.url()).pathname.split("/").at(-1)!;
    expect((await rig.stack.job(replay)).type).toBe("scripted");
  });

  it("cancels a waiting job from its page", async () => {
    const id = await rig.enqueue({ type: "scripted", payload: {}, run_at: inAnHour() });
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs/${id}`);
    await page.getByRole("button", { name: "Cancel job" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Cancel job" }).click();
    await page.locator("[data-status=cancelled]").first().waitFor();
    expect((await rig.stack.job(id)).status).toBe("cancelled");
  });
});

describe("a second organization", () => {
  it("never shows its jobs: not in the list, not in a search, and its job's page is not found", async () => {
    const theirs = rig.stack.otherOrg;
    const page = await rig.loggedIn(rig.stack.owner.email);
    const otherJob = theirs.jobId;
    await page.goto(`${rig.base}/jobs`);
    await page.locator("tr[data-job-id]").first().waitFor();
    expect(await page.locator(`tr[data-job-id="${otherJob}"]`).count()).toBe(0);
    await page.goto(`${rig.base}/jobs?q=${otherJob}`);
    await page.getByText("No job matches these filters").waitFor();
    await page.goto(`${rig.base}/jobs/${otherJob}`);
    await page
      .getByRole("alert")
      .filter({ hasText: /not found/i })
      .waitFor();
    await checkPage(page, "job-other-org");
  });
});
