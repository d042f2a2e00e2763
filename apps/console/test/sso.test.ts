// Single sign-on and the audit log in a real browser (docs/reference/tenants.md#audit-log), against a real OpenID provider (the `oidc-provider`
// package, started here): the owner sets the provider up on its page; a new person signs in from the login page,
// through the provider's own login form and consent page, lands in the console as a member with the default role,
// and signs in again as the same member; a refused sign-in comes back to the login page saying why; the owner reads
// all of it in the audit log, as sentences, with filters; members see neither page. Every page is checked with axe
// and at 375 px.
import type { Page } from "playwright-core";
import { addMember, uniqueEmail, type TestMember } from "@conveyor/api/testing";
import { startOidcProvider, type OidcProvider } from "@conveyor/testkit/oidc";
import { checkNarrow, checkPage, dismissNotifications, field, pageProblems, startRig, type Rig } from "./support/console";

const CLIENT = { client_id: "conveyor-console", client_secret: "console-client-secret-5e1f" };
const DOMAIN = "sso-acme.test";

let rig: Rig;
let provider: OidcProvider;
let member: TestMember;

beforeAll(async () => {
  // The provider listens on 127.0.0.1 over http: both settings are for development and tests only.
  rig = await startRig({ apiEnv: { SSO_ALLOW_HTTP: "true", ALLOW_PRIVATE_NETWORK: "true" } });
  provider = await startOidcProvider([{ ...CLIENT, redirect_uris: [`${rig.base}/auth/sso/callback`] }]);
  member = await addMember(rig.stack.api.database.db, rig.stack.api.deps.config, rig.stack.owner.orgId, "member");
}, 180_000);
afterEach(() => rig?.stack.expectOtherOrgUntouched());
afterAll(async () => {
  await provider?.stop();
  await rig?.close();
});

const ownerAuth = () => ({ Authorization: `Bearer ${rig.stack.owner.token}` });

/** From the console's login page through the provider's login form and consent page, back into the console. */
async function signInWithSso(page: Page, email: string): Promise<void> {
  await page.goto(`${rig.base}/login`);
  await field(page, "Work email").fill(email);
  await page.getByRole("button", { name: "Sign in with SSO" }).click();
  await page.waitForURL(new RegExp(`^${provider.issuer}/`));
  await page.locator("input[name=login]").fill(email);
  await page.locator("input[name=password]").fill("anything: the development form takes any password");
  await page.locator("button[type=submit]").click();
  // The consent page: one submit button.
  await page.locator("button[type=submit]").waitFor();
  await page.locator("button[type=submit]").click();
  await page.waitForURL(`${rig.base}/overview`);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  // The provider's own pages link a web font from fonts.googleapis.com, which this machine cannot reach: those
  // failures are the provider's, not the console's, and only those are forgiven.
  const problems = pageProblems(page);
  const ours = problems.filter((problem) => problem !== "console: Failed to load resource: net::ERR_NAME_NOT_RESOLVED");
  problems.splice(0, problems.length, ...ours);
}

describe("single sign-on", () => {
  it("is set up by the owner on its page: the provider is checked, the secret never shown again", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/sso`);
    await page.getByRole("heading", { name: "Single sign-on" }).waitFor();
    expect(await page.getByTestId("redirect-uri").innerText()).toBe(`${rig.base}/auth/sso/callback`);
    await checkPage(page, "sso-empty");

    // A provider that is not there: the API's check, shown above the form.
    await field(page, "Issuer").fill("http://127.0.0.1:9");
    await field(page, "Client ID").fill(CLIENT.client_id);
    await field(page, "Client secret").fill(CLIENT.client_secret);
    await field(page, "E-mail domains").fill(DOMAIN);
    await page.getByRole("button", { name: "Set up single sign-on" }).click();
    await page.getByText(/discovery failed/).waitFor();

    await field(page, "Issuer").fill(provider.issuer);
    await page.getByRole("button", { name: "Set up single sign-on" }).click();
    await page.getByText("Single sign-on saved").waitFor();
    await dismissNotifications(page);
    const saved = await rig.stack.api.request.get("/org/sso").set(ownerAuth());
    expect(saved.body).toMatchObject({ issuer: provider.issuer, client_id: CLIENT.client_id, email_domains: [DOMAIN], default_role: "member", enforce: false });
    // The secret field is empty again and says the stored one is kept.
    expect(await field(page, "Client secret").inputValue()).toBe("");
    await page.getByText("Leave empty to keep it").waitFor();
    expect(await page.content()).not.toContain(CLIENT.client_secret);
    await checkPage(page, "sso-saved");
    await checkNarrow(page, "sso-saved");
  });

  it("signs a new person in through the provider, as a member with the default role; a second sign-in is the same member", async () => {
    const email = `newcomer-${Date.now()}@${DOMAIN}`;
    const context = await rig.context();
    const page = await context.newPage();
    await signInWithSso(page, email);
    await checkPage(page, "sso-landed");
    const session = (await (await context.request.get(`${rig.base}/auth/session`)).json()) as {
      user: { id: string; email: string };
      org: { id: string };
      role: string;
    };
    expect(session).toMatchObject({ user: { email }, org: { id: rig.stack.owner.orgId }, role: "member" });
    const cookie = (await context.cookies()).find((c) => c.name === "conveyor_session");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict" });
    // The flow's own cookie is gone once used.
    expect((await context.cookies()).find((c) => c.name === "conveyor_sso")).toBeUndefined();
    const members = await rig.stack.api.request.get("/org/members").set(ownerAuth());
    expect(members.body).toContainEqual(expect.objectContaining({ id: session.user.id, email, role: "member" }));
    // A member: no Audit log or Single sign-on in the navigation.
    const nav = page.getByRole("navigation", { name: "Sections" });
    await nav.getByRole("link", { name: "Jobs" }).waitFor();
    expect(await nav.getByRole("link", { name: "Audit log" }).count()).toBe(0);
    expect(await nav.getByRole("link", { name: "Single sign-on" }).count()).toBe(0);

    // Again, in a browser that remembers nothing: the same member, one membership.
    const again = await (await rig.context()).newPage();
    await signInWithSso(again, email);
    const second = (await (await again.context().request.get(`${rig.base}/auth/session`)).json()) as { user: { id: string } };
    expect(second.user.id).toBe(session.user.id);
    const { rows } = await rig.stack.api.database.db.pool.query("SELECT role FROM memberships WHERE user_id = $1", [session.user.id]);
    expect(rows).toEqual([{ role: "member" }]);
  });

  it("comes back to the login page saying why when it cannot sign in", async () => {
    const page = await (await rig.context()).newPage();
    await page.goto(`${rig.base}/login`);
    await field(page, "Work email").fill(uniqueEmail("nobody"));
    await page.getByRole("button", { name: "Sign in with SSO" }).click();
    await page.waitForURL(/\/login\?sso_error=not_configured/);
    await page.getByRole("alert").filter({ hasText: "No organization signs in this e-mail's domain" }).waitFor();
    await checkPage(page, "login-sso-refused");
    await checkNarrow(page, "login-sso-refused");
  });
});

describe("the audit log page", () => {
  it("reads every change as a sentence, filters by who and what, and keeps the filters in the address", async () => {
    const api = rig.stack.api.request;
    await api.patch(`/org/members/${member.userId}`).set(ownerAuth()).send({ role: "admin" });
    await api.patch(`/org/members/${member.userId}`).set(ownerAuth()).send({ role: "member" });
    // Text that would be markup if it were rendered as HTML.
    await api.post("/api-keys").set(ownerAuth()).send({ name: '<img src=x onerror="alert(1)">' });

    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/audit-log`);
    await page.getByRole("heading", { name: "Audit log" }).waitFor();
    const sentences = page.getByTestId("audit-sentence");
    await sentences.first().waitFor();
    const all = await sentences.allInnerTexts();
    expect(all).toContain(`${rig.stack.owner.email} changed ${member.email}'s role from member to admin`);
    expect(all).toContain(`${rig.stack.owner.email} changed ${member.email}'s role from admin to member`);
    expect(all).toContain(`${rig.stack.owner.email} created API key “<img src=x onerror="alert(1)">”`);
    expect(all.some((s) => /^newcomer-\d+@sso-acme\.test signed in with single sign-on and joined as member$/.test(s))).toBe(true);
    expect(all).toContain(`${rig.stack.owner.email} set up single sign-on with ${provider.issuer} for ${DOMAIN}`);
    await checkPage(page, "audit-log");
    await checkNarrow(page, "audit-log");

    await page.getByLabel("What").selectOption("member.role_change");
    await page.getByLabel("Who").selectOption({ label: rig.stack.owner.email });
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/action=member\.role_change/);
    expect(page.url()).toContain(`actor_id=${rig.stack.owner.userId}`);
    await page.locator('[data-action="api_key.create"]').waitFor({ state: "detached" });
    // The unfiltered list leaves before the filtered one arrives: wait for its rows, then read the whole list.
    await page.locator('[data-action="member.role_change"]').nth(1).waitFor();
    expect(await page.locator("[data-action]").evaluateAll((items) => items.map((item) => item.getAttribute("data-action")))).toEqual([
      "member.role_change",
      "member.role_change",
    ]);
    await checkPage(page, "audit-log-filtered");
    // A reload keeps the filtered view.
    await page.reload();
    await page.locator('[data-action="member.role_change"]').first().waitFor();
    expect(await page.locator("[data-action]").count()).toBe(2);
  });

  it("tells a member it is for owners and admins, and shows the second organization nothing of this one", async () => {
    const page = await rig.loggedIn(member.email);
    await page.goto(`${rig.base}/audit-log`);
    await page.getByText("Owners and admins only").waitFor();
    expect(await page.getByTestId("audit-sentence").count()).toBe(0);
    await page.goto(`${rig.base}/sso`);
    await page.getByText("Owners only").waitFor();
    await checkPage(page, "audit-log-member");

    const theirs = await rig.stack.api.request.get("/audit-log?limit=1000").set("X-API-Key", rig.stack.otherOrg.apiKey);
    expect(theirs.status).toBe(403);
  });
});
