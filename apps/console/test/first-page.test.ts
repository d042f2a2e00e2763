// The jobs list's first page in /jobs' HTML (issue 38, first rows ≤ 300 ms): the API answers the page's own first
// GET /jobs into the page for the organization the session cookie proves, never for a visitor without one nor for
// another organization, never to be stored; in Chromium the page takes it over — it asks no GET /jobs of its own,
// draws the rows once (the server's copy goes when the page's own are drawn), and stays live. The API draws the page
// in its own frame (header, navigation, heading, filters), so the rows do not move when the page takes over.
import type { Page, Request } from "playwright-core";
import { checkPage, pageProblems, PASSWORD, rigForFile, screenshot } from "./support/console";

const rig = rigForFile({ workers: 1 });

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
const HTML = { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };

/** The list requests (GET /jobs?…) the page sends itself, from now on. */
function listRequests(page: Page): string[] {
  const seen: string[] = [];
  page.on("request", (request: Request) => {
    const url = new URL(request.url());
    if (url.pathname === "/jobs" && request.resourceType() !== "document") seen.push(url.search);
  });
  return seen;
}

describe("the first page of /jobs in its HTML", () => {
  it("holds the session's organization's jobs only, is never stored, and is empty without a live session", async () => {
    const mine = await rig.enqueue({ type: "scripted", payload: {}, run_at: inAnHour() });
    const owner = await rig.loggedIn(rig.stack.owner.email);
    const res = await owner.context().request.get(`${rig.base}/jobs`, { headers: HTML });
    expect(res.status()).toBe(200);
    expect(res.headers()["cache-control"]).toBe("no-store");
    expect(res.headers()["content-encoding"]).toBe("gzip");
    const html = await res.text();
    expect(html).toContain(`data-job-id="${mine}"`);
    expect(html).toContain('<script type="application/json" id="first-page">');
    expect(html).not.toContain(rig.stack.otherOrg.jobId);
    // Drawn in the session's frame: who is logged in and where, as GET /auth/session says; never its CSRF token.
    const session = (await (await owner.context().request.get(`${rig.base}/auth/session`)).json()) as {
      org: { name: string };
      user: { email: string };
      csrf_token: string;
    };
    expect(html).toContain(`${session.user.email} · owner`);
    expect(html).toContain(session.org.name);
    expect(html).not.toContain(session.csrf_token);

    // No cookie, or a dead one: the page as it always was, cacheable and with no data in it.
    for (const cookie of [undefined, "conveyor_session=cvs_not-a-live-session"]) {
      const anonymous = await fetch(`${rig.base}/jobs`, { headers: { ...HTML, ...(cookie ? { cookie } : {}) } });
      expect(anonymous.status).toBe(200);
      expect(anonymous.headers.get("cache-control")).toBe("no-cache");
      const text = await anonymous.text();
      expect(text).not.toContain("data-job-id");
      expect(text).not.toContain('id="first-page"');
    }

    // Another organization's session sees its own list (empty), never this one's jobs.
    const stranger = await rig.context();
    const account = { email: `first-page-${Date.now()}@example.test`, password: "a long enough passphrase for tests" };
    expect((await stranger.request.post(`${rig.base}/auth/signup`, { data: { ...account, org_name: "Stranger" } })).status()).toBe(201);
    expect((await stranger.request.post(`${rig.base}/auth/session`, { data: account })).status()).toBe(200);
    const theirs = await (await stranger.request.get(`${rig.base}/jobs`, { headers: HTML })).text();
    expect(theirs).toContain('id="first-page"');
    expect(theirs).not.toContain(mine);
    expect(theirs).not.toContain("data-job-id");
  });

  it("is taken over by the page: no GET /jobs of its own, one set of rows, the filters applied, still live", async () => {
    const pending = await rig.enqueue({ type: "scripted", payload: {}, run_at: inAnHour() });
    const page = await rig.loggedIn(rig.stack.owner.email);
    const requests = listRequests(page);
    await page.goto(`${rig.base}/jobs?status=pending&type=scripted`);
    await page.locator(`tr[data-job-id="${pending}"]`).waitFor();
    // The page's own frame is drawn, and with it its own rows: the server's are gone, none is shown twice.
    await page.getByRole("heading", { name: "Jobs" }).waitFor();
    expect(await page.locator("#first-rows, #first-page").count()).toBe(0);
    const ids = await page.locator("tr[data-job-id]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-job-id")));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain(pending);
    expect(await page.locator("tr[data-job-id]:not([data-status=pending])").count()).toBe(0);
    // A row the React page drew: its checkbox selects it (the server's rows have no handlers).
    await page.getByRole("checkbox", { name: `Select job ${pending}` }).check();
    await page.getByText(/1 selected/).waitFor();
    expect(requests).toEqual([]);

    // Live as before: a new job of the filters appears.
    const later = await rig.enqueue({ type: "scripted", payload: {}, run_at: inAnHour() });
    await page.locator(`tr[data-job-id="${later}"]`).waitFor({ timeout: 15_000 });
    await checkPage(page, "jobs-first-page");
    expect(pageProblems(page)).toEqual([]);
  });

  it("keeps markup in the address as text: the search the page was asked for cannot end the data's element", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email);
    const requests = listRequests(page);
    const q = "</script><script>alert(1)</script>";
    const res = await page.context().request.get(`${rig.base}/jobs?q=${encodeURIComponent(q)}`, { headers: HTML });
    expect(await res.text()).not.toContain("<script>alert(1)");
    await page.goto(`${rig.base}/jobs?q=${encodeURIComponent(q)}`);
    await page.getByText("No job matches these filters").waitFor();
    expect(await page.getByLabel("Search").inputValue()).toBe(q);
    expect(requests).toEqual([]);
    expect(pageProblems(page)).toEqual([]);
  });

  it("writes the rows' times as the page writes them, in the browser's language and time zone", async () => {
    const id = await rig.enqueue({ type: "scripted", payload: {}, run_at: inAnHour() });
    const context = await rig.browser.newContext({ locale: "de-DE", timezoneId: "Asia/Tokyo", viewport: { width: 1280, height: 800 } });
    try {
      expect((await context.request.post(`${rig.base}/auth/session`, { data: { email: rig.stack.owner.email, password: PASSWORD } })).status()).toBe(200);
      const page = await context.newPage();
      await page.goto(`${rig.base}/jobs`);
      await page.getByRole("heading", { name: "Jobs" }).waitFor();
      const shown = await page.locator(`tr[data-job-id="${id}"] time`).first().innerText();
      // The next arrival (the page remembered its zone; the language comes with every navigation).
      const html = await (await context.request.get(`${rig.base}/jobs`, { headers: { ...HTML, "accept-language": "de-DE,de;q=0.9" } })).text();
      const written = new RegExp(`data-job-id="${id}"[^]*?<time[^>]*>([^<]*)</time>`).exec(html)?.[1];
      expect(written).toBe(shown);
      const job = await rig.stack.waitForJob(id, () => true);
      expect(shown).toBe(
        new Intl.DateTimeFormat("de-DE", { dateStyle: "medium", timeStyle: "medium", timeZone: "Asia/Tokyo" }).format(new Date(job.created_at)),
      );
    } finally {
      await context.close();
    }
  });

  it("draws the page's own frame around the rows: nothing moves when the page's script takes over", async () => {
    await rig.enqueue({ type: "scripted", payload: {}, run_at: inAnHour() });
    for (const width of [1440, 1280, 375]) {
      const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width, height: 900 } });
      // The page's scripts are held back until what the API drew has been measured and photographed.
      let release = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      await page.route(/\.js$/, async (route) => {
        await held;
        await route.continue();
      });
      await page.goto(`${rig.base}/jobs`, { waitUntil: "commit" });
      await page.locator("#first-rows h1").waitFor();
      await page.waitForFunction(() => Array.from(document.querySelectorAll<HTMLLinkElement>("link[rel=stylesheet]")).every((link) => link.sheet));
      const drawnHeading = await page.locator("#first-rows h1").boundingBox();
      const drawnRow = width > 375 ? page.locator("#first-rows tr[data-job-id]").first() : null;
      const id = await drawnRow?.getAttribute("data-job-id");
      const drawn = await drawnRow?.boundingBox();
      expect(await page.locator("#root").innerHTML()).toBe("");
      await screenshot(page, `jobs-first-page-${width}-before-script`);

      release();
      await page.locator("#first-rows").waitFor({ state: "detached" });
      await page.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();
      // The page settled: its saved views read (the block says so in place of "Loading…").
      await page.waitForFunction(() => !document.querySelector('[aria-labelledby="saved-views-title"]')?.textContent?.includes("Loading"));
      await screenshot(page, `jobs-first-page-${width}-after-script`);
      const near = (a: number | undefined, b: number | undefined) => expect(Math.abs((a ?? NaN) - (b ?? NaN))).toBeLessThanOrEqual(4);
      const heading = await page.locator("#root h1").boundingBox();
      near(heading?.x, drawnHeading?.x);
      near(heading?.y, drawnHeading?.y);
      if (id) {
        const row = await page.locator(`#root tr[data-job-id="${id}"]`).boundingBox();
        near(row?.x, drawn?.x);
        near(row?.y, drawn?.y);
        near(row?.width, drawn?.width);
      } else {
        await page.getByTestId("jobs-cards").waitFor();
      }
      expect(pageProblems(page)).toEqual([]);
    }
  });

  it("shows the server's rows before the script runs on a desktop, and not on a phone (its list is cards)", async () => {
    const id = await rig.enqueue({ type: "scripted", payload: {}, run_at: inAnHour() });
    for (const [width, shown] of [
      [1280, true],
      [375, false],
    ] as const) {
      const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width, height: 800 } });
      // The page's script never arrives: what is on screen is the HTML and the stylesheet alone.
      await page.route(/\.js$/, (route) => route.abort());
      await page.goto(`${rig.base}/jobs`);
      const row = page.locator(`#first-rows tr[data-job-id="${id}"]`);
      await row.waitFor({ state: "attached" });
      expect(await row.isVisible()).toBe(shown);
    }
  });

  it("asks for its stylesheet before anything else and preloads no module: its first paint waits on nothing but the stylesheet", async () => {
    const id = await rig.enqueue({ type: "scripted", payload: {}, run_at: inAnHour() });
    const page = await rig.loggedIn(rig.stack.owner.email);
    const html = await (await page.context().request.get(`${rig.base}/jobs`, { headers: HTML })).text();
    expect(html).toContain(`data-job-id="${id}"`);
    // The drawn page's head: its stylesheet ahead of its script, and none of the script's modules preloaded beside it.
    const head = html.slice(0, html.indexOf("</head>"));
    expect(head).not.toContain('rel="modulepreload"');
    expect(head.indexOf('rel="stylesheet"')).toBeGreaterThan(0);
    expect(head.indexOf('rel="stylesheet"')).toBeLessThan(head.indexOf('<script type="module"'));
    // A page the API did not draw keeps the built head: its script is what draws it, its modules are preloaded.
    const built = await (await fetch(`${rig.base}/jobs`, { headers: HTML })).text();
    expect(built).toContain('rel="modulepreload"');

    // In Chromium: the stylesheet is the first thing the page asks for; the script still takes the page over.
    const asked: string[] = [];
    page.on("request", (request) => {
      if (request.resourceType() !== "document") asked.push(request.resourceType());
    });
    await page.goto(`${rig.base}/jobs`);
    await page.locator("#first-rows").waitFor({ state: "detached" });
    await page.locator(`#root tr[data-job-id="${id}"]`).waitFor();
    expect(asked[0]).toBe("stylesheet");
    expect(asked).toContain("script");
    expect(pageProblems(page)).toEqual([]);
  });
});
