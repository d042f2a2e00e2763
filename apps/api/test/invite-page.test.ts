/// <reference lib="dom" />
// The invite page (docs/reference/tenants.md#team-and-roles, docs/reference/tenants.md#the-console, docs/reference/robustness.md#r22) in headless Chromium against a listening API: it shows the
// invite, accepts it, logs the person in to a console session and opens the console, and shows each refusal;
// strict CSP, no referrer, no caching, no token in the logs.
import { mkdirSync, readFileSync } from "node:fs";
import type { Server } from "node:http";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { ensureConsoleBuilt } from "@conveyor/console/build";
import { repoRoot, CHROMIUM_ARGS, CHROMIUM_PATH } from "@conveyor/testkit";
import { createApp } from "../src/app";
import { createOrg, TEST_PASSWORD, type TestMember, startTestApi, type TestApi } from "@conveyor/api/testing";

const artifacts = path.join(repoRoot, "test-artifacts");
const PASSWORD = "my new team password";

let api: TestApi;
let server: Server;
let baseUrl: string;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(path.join(artifacts, "console"), { recursive: true });
  api = await startTestApi({ AUTH_RATE_LIMIT_PER_MIN: "0" });
  server = createApp(api.deps).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server.close(resolve));
  await api.close();
});

const tokens: string[] = [];

async function invite(inviter: TestMember, email: string, role = "member") {
  const res = await api.request.post("/org/invite").set("Authorization", `Bearer ${inviter.token}`).send({ email, role });
  expect(res.status).toBe(201);
  const token = new URL(res.body.invite_url).searchParams.get("token")!;
  tokens.push(token);
  return token;
}

/** A phone-sized page that records the invite page's console errors (CSP violations land there). */
async function openPage(token: string | null, base = baseUrl): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  const problems: string[] = [];
  // Only the invite page's own: what the console does once it is opened is the console's tests' business.
  const onInvitePage = () => new URL(page.url()).pathname.startsWith("/accept-invite");
  page.on("console", (message) => {
    if (message.type() === "error" && onInvitePage()) problems.push(message.text());
  });
  page.on("pageerror", (error) => {
    if (onInvitePage()) problems.push(error.message);
  });
  await page.goto(`${base}/accept-invite${token === null ? "" : `?token=${token}`}`);
  return { page, problems };
}

/**
 * The browser holds a console session cookie, HttpOnly and SameSite=Strict, that no script can read, and the API
 * answers GET /auth/session for it with this user, organization and role.
 */
async function expectConsoleSession(page: Page, want: { email: string; orgId: string; role: string }) {
  const cookies = await page.context().cookies();
  // Beside the session, the console may keep only its time zone (not a secret: the server writes the first rows' times in it).
  expect(cookies.map((c) => c.name).filter((name) => name !== "conveyor_time_zone")).toEqual(["conveyor_session"]);
  const cookie = cookies.find((c) => c.name === "conveyor_session")!;
  tokens.push(cookie.value);
  expect(cookie).toMatchObject({ path: "/", httpOnly: true, sameSite: "Strict", secure: false });
  expect(await page.evaluate("document.cookie")).not.toContain("conveyor_session");
  const session = await api.request.get("/auth/session").set("Cookie", `conveyor_session=${cookie.value}`);
  expect(session.status).toBe(200);
  expect(session.body).toMatchObject({ user: { email: want.email }, org: { id: want.orgId }, role: want.role });
  return session.body as { org: { id: string; name: string } };
}

describe("GET /accept-invite", () => {
  it("is served with a strict CSP, no referrer, no caching, and a separate script file", async () => {
    const res = await api.request.get("/accept-invite").query({ token: "anything" });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(res.headers["referrer-policy"]).toBe("no-referrer");
    expect(res.headers["cache-control"]).toBe("no-store");
    const csp = res.headers["content-security-policy"];
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(res.text).toMatch(/<script src="accept-invite\.js" defer><\/script>/);
    expect(res.text).not.toMatch(/<script>(?!<)/);
    for (const asset of ["/accept-invite.js", "/accept-invite.css"]) {
      const file = await api.request.get(asset);
      expect(file.status).toBe(200);
      expect(file.headers["cache-control"]).toBe("no-store");
    }
  });

  it("shows the org and email, accepts with a new password, and ends logged in to the console, in the invite's organization", async () => {
    const owner = await createOrg(api.database.db, api.deps.config, "Lighthouse Logistics");
    const email = `new-teammate-${Date.now()}@example.test`;
    const token = await invite(owner, email, "admin");
    const { page, problems } = await openPage(token);

    await page.getByRole("heading", { name: "Join Lighthouse Logistics" }).waitFor();
    expect(await page.locator("#invite-email").textContent()).toBe(email);
    expect(await page.locator("#password-rule").textContent()).toContain("At least 15 characters");
    await page.fill("#password", PASSWORD);
    await page.screenshot({ path: path.join(artifacts, "invite-page.png"), fullPage: true });

    await page.click("#submit");
    // Into the console (served at /).
    await page.waitForURL(`${baseUrl}/`);
    const me = await expectConsoleSession(page, { email, orgId: owner.orgId, role: "admin" });
    expect(me.org.name).toBe("Lighthouse Logistics");
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("shows 'Invite already used' for a used link", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const token = await invite(owner, `used-${Date.now()}@example.test`);
    expect((await api.request.post("/invite/accept").send({ token, password: PASSWORD })).status).toBe(200);
    const { page } = await openPage(token);
    await page.getByRole("heading", { name: "Invite already used" }).waitFor();
    expect(await page.locator("#failed-text").textContent()).toMatch(/already been used/);
    expect(await page.locator("#invite").isHidden()).toBe(true);
    await page.context().close();
  });

  it("shows 'Invite expired' for a link older than 72 hours", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const token = await invite(owner, `late-${Date.now()}@example.test`);
    api.clock.advance(72 * 3600 * 1000);
    try {
      const { page } = await openPage(token);
      await page.getByRole("heading", { name: "Invite expired" }).waitFor();
      expect(await page.locator("#failed-text").textContent()).toMatch(/72 hours/);
      await page.screenshot({ path: path.join(artifacts, "invite-page-expired.png"), fullPage: true });
      await page.context().close();
    } finally {
      api.clock.advance(-72 * 3600 * 1000);
    }
  });

  it("looks like the console's own login and shows the role offered, at 1440 and 375 px, with no serious axe finding (issue 23 #12)", async () => {
    ensureConsoleBuilt();
    const owner = await createOrg(api.database.db, api.deps.config, "Harbour Freight");
    const token = await invite(owner, `role-${Date.now()}@example.test`, "admin");
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    // The console's login card, as the reference.
    await page.goto(`${baseUrl}/login`);
    await page.getByRole("button", { name: "Log in" }).waitFor();
    const look = (card: string, button: string, heading: string) =>
      page.evaluate(
        ({ card, button, heading }) => {
          const style = (selector: string) => getComputedStyle(document.querySelector(selector)!);
          return {
            font: getComputedStyle(document.body).fontFamily,
            page: getComputedStyle(document.body).backgroundColor,
            cardBorder: style(card).borderTopColor,
            cardRadius: style(card).borderTopLeftRadius,
            cardWidth: style(card).maxWidth,
            button: style(button).backgroundColor,
            buttonText: style(button).color,
            heading: style(heading).fontSize,
          };
        },
        { card, button, heading },
      );
    const consoleLook = await look("main .mantine-Paper-root", "main button[type=submit]", "main h1");
    await page.goto(`${baseUrl}/accept-invite?token=${token}`);
    await page.getByRole("heading", { name: "Join Harbour Freight" }).waitFor();
    expect(await look("main.card", "#submit", "#invite h1")).toEqual(consoleLook);

    // The role it offers, in words.
    expect(await page.locator("#invite").innerText()).toContain("is invited to join as an admin");
    await page.screenshot({ path: path.join(artifacts, "console", "invite-page-1440.png"), fullPage: true });
    await page.evaluate(readFileSync(require.resolve("axe-core/axe.min.js"), "utf8"));
    const serious = async () =>
      (
        (await page.evaluate(
          async () => (await (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string }[] }> } }).axe.run()).violations,
        )) as {
          id: string;
          impact: string;
        }[]
      ).filter((v) => v.impact === "serious" || v.impact === "critical");
    expect(await serious()).toEqual([]);
    await page.setViewportSize({ width: 375, height: 740 });
    await page.screenshot({ path: path.join(artifacts, "console", "invite-page-375.png"), fullPage: true });
    // The address wraps only before its "@" or a dot, or after a hyphen.
    const starts = await page.locator("#invite-email").evaluate((el) => {
      const found: { char: string; after: string }[] = [];
      let lastTop: number | null = null;
      let previous = "";
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent ?? "";
        for (let i = 0; i < text.length; i++) {
          const range = document.createRange();
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          const top = Math.round(range.getBoundingClientRect().top);
          if (lastTop !== null && top > lastTop + 2) found.push({ char: text[i]!, after: previous });
          lastTop = top;
          previous = text[i]!;
        }
      }
      return found;
    });
    for (const start of starts) expect(["@", "."].includes(start.char) || start.after === "-").toBe(true);
    expect(await serious()).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
    await context.close();
  });

  it("shows 'Invalid invite link' for an unknown link and explains a link without a token", async () => {
    const unknown = await openPage("A".repeat(43));
    await unknown.page.getByRole("heading", { name: "Invalid invite link" }).waitFor();
    await unknown.page.context().close();
    const missing = await openPage(null);
    await missing.page.getByRole("heading", { name: "Incomplete invite link" }).waitFor();
    await missing.page.context().close();
  });

  it("says 'Invite already used' on submit when the link was used elsewhere after the page loaded", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const token = await invite(owner, `raced-${Date.now()}@example.test`);
    const { page } = await openPage(token);
    await page.locator("#password").waitFor({ state: "visible" });
    expect((await api.request.post("/invite/accept").send({ token, password: PASSWORD })).status).toBe(200);
    await page.fill("#password", PASSWORD);
    await page.click("#submit");
    await page.getByRole("heading", { name: "Invite already used" }).waitFor();
    await page.context().close();
  });

  it("checks the 15-character rule before sending, and shows the API's answer for a wrong existing-account password", async () => {
    const owner = await createOrg(api.database.db, api.deps.config);
    const existing = await createOrg(api.database.db, api.deps.config);
    const token = await invite(owner, existing.email);
    const { page } = await openPage(token);
    await page.locator("#password").waitFor({ state: "visible" });
    await page.fill("#password", "too short");
    await page.click("#submit");
    expect(await page.locator("#form-error").textContent()).toBe("The password must be at least 15 characters long.");
    await page.fill("#password", "not the account's current password");
    await page.click("#submit");
    await page.locator("#form-error", { hasText: "current password" }).waitFor();
    await page.screenshot({ path: path.join(artifacts, "invite-page-wrong-password.png"), fullPage: true });
    await page.fill("#password", TEST_PASSWORD);
    await page.click("#submit");
    // An existing account: logged in with its own password, in the organization it just joined (not its oldest one).
    await page.waitForURL(`${baseUrl}/`);
    await expectConsoleSession(page, { email: existing.email, orgId: owner.orgId, role: "member" });
    await page.context().close();
  });

  it("says the person joined, and links to the console, when the login that follows is refused", async () => {
    // One login per minute per address: the test spends it, so the page's own is refused with 429.
    const strict = await startTestApi({ AUTH_RATE_LIMIT_PER_MIN: "1" });
    const strictServer = createApp(strict.deps).listen(0, "127.0.0.1");
    await new Promise((resolve) => strictServer.once("listening", resolve));
    const strictUrl = `http://127.0.0.1:${(strictServer.address() as { port: number }).port}`;
    try {
      const owner = await createOrg(strict.database.db, strict.deps.config, "Strict Co");
      const email = `strict-${Date.now()}@example.test`;
      const created = await strict.request.post("/org/invite").set("Authorization", `Bearer ${owner.token}`).send({ email, role: "member" });
      const token = new URL(created.body.invite_url).searchParams.get("token")!;
      tokens.push(token);
      const spent = await fetch(`${strictUrl}/auth/login`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email: owner.email, password: TEST_PASSWORD }),
      });
      expect(spent.status).toBe(200);
      const { page } = await openPage(token, strictUrl);
      await page.locator("#password").waitFor({ state: "visible" });
      await page.fill("#password", PASSWORD);
      await page.click("#submit");
      await page.getByRole("heading", { name: "You're in" }).waitFor();
      expect(await page.locator("#done-text").textContent()).toBe(`You joined Strict Co as member (${email}).`);
      expect(await page.locator("#console-link").getAttribute("href")).toBe("./");
      expect(await page.locator("#password").inputValue()).toBe("");
      expect(page.url()).toBe(`${strictUrl}/accept-invite`);
      expect(await page.context().cookies()).toEqual([]);
      await page.screenshot({ path: path.join(artifacts, "invite-page-joined-not-logged-in.png"), fullPage: true });
      await page.context().close();
      // The invite was accepted all the same.
      expect(await strict.database.db.prisma.membership.count({ where: { orgId: owner.orgId } })).toBe(2);
    } finally {
      await new Promise((resolve) => strictServer.close(resolve));
      await strict.close();
    }
  });

  it("shows an org name containing markup as text", async () => {
    const owner = await createOrg(api.database.db, api.deps.config, `<img src=x onerror="window.pwned=1">Acme`);
    const token = await invite(owner, `xss-${Date.now()}@example.test`);
    const { page } = await openPage(token);
    await page.locator("#org-name").waitFor({ state: "visible" });
    expect(await page.locator("#org-name").textContent()).toBe(`<img src=x onerror="window.pwned=1">Acme`);
    expect(await page.locator("img").count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { pwned?: number }).pwned)).toBeUndefined();
    await page.context().close();
  });

  it("never writes an invite token, a password or a JWT to the logs", () => {
    const logs = api.logs();
    expect(logs).toContain("GET /accept-invite 200");
    expect(logs).toContain("GET /invite 200");
    for (const secret of [...tokens, PASSWORD, TEST_PASSWORD]) expect(logs).not.toContain(secret);
  });
});
