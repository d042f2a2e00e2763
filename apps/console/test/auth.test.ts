// The console's accounts in a real browser: sign up, log out, log in, change password; the session lives in an
// HttpOnly, SameSite=Strict cookie that no script reads, state changes without the CSRF token are refused, an
// ended session returns to the login page and then back, and forms show the API's refusals at their fields.
import { createOrg, uniqueEmail } from "@conveyor/api/testing";
import { checkNarrow, checkPage, field, PASSWORD, rigForFile } from "./support/console";

const rig = rigForFile();

describe("signing up, logging out and in", () => {
  it("signs up into the overview, logs out to the login page, and logs in again", async () => {
    const context = await rig.context();
    const page = await context.newPage();
    const email = uniqueEmail("ada");
    await page.goto(`${rig.base}/signup`);
    await field(page, "Email").fill(email);
    await field(page, "Password").fill("short");
    await field(page, "Organization name").fill("Acme Rockets");
    await page.getByRole("button", { name: "Sign up" }).click();
    // The API's rule, checked before sending: the message is at its field.
    await page.getByText("must be at least 15 characters long").waitFor();
    await checkPage(page, "signup-invalid");

    await field(page, "Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.waitForURL(`${rig.base}/overview`);
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await expectText(page, "Acme Rockets");

    // The session is an HttpOnly, SameSite=Strict cookie; a page script sees no credential.
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === "conveyor_session");
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/" });
    expect(await page.evaluate(() => document.cookie)).not.toContain("conveyor_session");
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }))).not.toMatch(/eyJ|conveyor_session/);

    await page.getByTestId("account-menu").click();
    await page.getByRole("menuitem", { name: "Log out" }).click();
    await page.waitForURL(/\/login/);
    expect((await context.cookies()).find((c) => c.name === "conveyor_session")).toBeUndefined();
    // The ended session is gone on the server too: /jobs sends the browser to log in.
    await page.goto(`${rig.base}/jobs`);
    await page.waitForURL(/\/login\?redirect=/);
    await checkPage(page, "login");
    await checkNarrow(page, "login");

    await field(page, "Email").fill(email);
    await field(page, "Password").fill("not the password at all");
    await page.getByRole("button", { name: "Log in" }).click();
    await page
      .getByRole("alert")
      .filter({ hasText: /email or password/i })
      .waitFor();
    await field(page, "Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(`${rig.base}/jobs`);
    await page.getByRole("heading", { name: "Jobs" }).waitFor();
  });

  it("shows the API's refusal at the field: an email that has an account", async () => {
    const page = await (await rig.context()).newPage();
    await page.goto(`${rig.base}/signup`);
    await field(page, "Email").fill(rig.stack.owner.email);
    await field(page, "Password").fill(PASSWORD);
    await field(page, "Organization name").fill("Second try");
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByText("An account with this email already exists; log in instead.").waitFor();
    expect(await field(page, "Email").getAttribute("aria-invalid")).toBe("true");
    await checkPage(page, "signup-email-taken");
  });
});

describe("the session", () => {
  it("refuses a state-changing request that carries the cookie but not the CSRF token", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email);
    const request = page.context().request;
    const without = await request.post(`${rig.base}/api-keys`, { data: { name: "no csrf" } });
    expect(without.status()).toBe(403);
    expect((await without.json()).error.code).toBe("csrf_failed");
    const session = (await (await request.get(`${rig.base}/auth/session`)).json()) as { csrf_token: string };
    const withToken = await request.post(`${rig.base}/api-keys`, { data: { name: "with csrf" }, headers: { "X-CSRF-Token": session.csrf_token } });
    expect(withToken.status()).toBe(201);
  });

  it("sends a person whose session ended to the login page, and back to where they were after logging in", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/jobs?status=failed`);
    await page.getByRole("heading", { name: "Jobs" }).waitFor();
    // The session ends elsewhere (its row is gone, as after expiry): the next request the page makes is a 401.
    await rig.stack.api.database.db.pool.query("DELETE FROM sessions");
    // The page's event stream may notice first and leave for the login page before the click lands.
    await page
      .getByRole("link", { name: "Schedules" })
      .click({ timeout: 3000 })
      .catch(() => undefined);
    await page.waitForURL(/\/login\?redirect=/);
    expect(decodeURIComponent(new URL(page.url()).searchParams.get("redirect")!)).toMatch(/^\/(schedules|jobs\?status=failed)/);
    await field(page, "Email").fill(rig.stack.owner.email);
    await field(page, "Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL((url) => url.pathname === "/schedules" || (url.pathname === "/jobs" && url.searchParams.get("status") === "failed"));
    await checkPage(page, "session-returned");
  });

  it("says nothing about where you were on a first visit, and names the page a link asked for (issue 23 #12)", async () => {
    const context = await rig.context({ width: 1440, height: 900 });
    const page = await context.newPage();
    await page.goto(`${rig.base}/`);
    await page.waitForURL(/\/login/);
    await page.getByRole("button", { name: "Log in" }).waitFor();
    const text = await page.locator("main").innerText();
    expect(text).not.toMatch(/where you were|continue/i);
    expect(await page.getByTestId("login-next").count()).toBe(0);
    await checkPage(page, "login-first-visit");
    await checkNarrow(page, "login-first-visit");

    // A link to a page behind login: the login says where it goes on to, and goes there.
    await page.goto(`${rig.base}/jobs?status=failed`);
    await page.waitForURL(/\/login\?redirect=/);
    await page.getByTestId("login-next").getByText("/jobs?status=failed").waitFor();
    await field(page, "Email").fill(rig.stack.owner.email);
    await field(page, "Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL((url) => url.pathname === "/jobs" && url.searchParams.get("status") === "failed");
  });

  it("changes the password, which ends the person's other sessions but not this one", async () => {
    const member = await createOrg(rig.stack.api.database.db, rig.stack.api.deps.config, "Password Org");
    const here = await rig.loggedIn(member.email);
    const elsewhere = await rig.loggedIn(member.email);
    await elsewhere.goto(`${rig.base}/jobs`);
    await elsewhere.getByRole("heading", { name: "Jobs" }).waitFor();

    await here.goto(`${rig.base}/account`);
    await field(here, "Current password").fill("wrong wrong wrong wrong");
    await field(here, "New password").fill("a brand new long passphrase");
    await field(here, "New password, again").fill("a brand new long passphrase");
    await here.getByRole("button", { name: "Change password" }).click();
    // A wrong current password is shown at its field and does not log this session out.
    await here.getByText("The current password is not correct.").waitFor();
    expect(new URL(here.url()).pathname).toBe("/account");
    await checkPage(here, "account-wrong-password");

    await field(here, "Current password").fill(PASSWORD);
    await here.getByRole("button", { name: "Change password" }).click();
    await here.getByText("Password changed").waitFor();
    await checkPage(here, "account");
    await checkNarrow(here, "account");

    await elsewhere.getByRole("link", { name: "API keys" }).click();
    await elsewhere.waitForURL(/\/login\?redirect=/);
    // This session goes on.
    await here.getByRole("link", { name: "API keys" }).click();
    await here.getByRole("heading", { name: "API keys" }).waitFor();
    expect(new URL(here.url()).pathname).toBe("/api-keys");
  });
});

describe("untrusted text", () => {
  it("renders an organization name full of markup as text", async () => {
    const name = `<script>alert("org")</script>"><img src=x onerror=alert(1)> javascript:alert(2)`;
    const owner = await createOrg(rig.stack.api.database.db, rig.stack.api.deps.config, name);
    const page = await rig.loggedIn(owner.email);
    await page.goto(`${rig.base}/overview`);
    await page.getByTestId("org-name").waitFor();
    expect(await page.getByTestId("org-name").innerText()).toBe(name);
    expect(await page.locator("img[onerror], script:not([src])").count()).toBe(0);
    await checkPage(page, "org-name-markup");
  });
});

async function expectText(page: import("playwright-core").Page, text: string): Promise<void> {
  await page.getByText(text, { exact: false }).first().waitFor();
}
