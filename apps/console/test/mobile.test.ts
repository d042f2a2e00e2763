// Every page of the console at 375 px wide (a small phone) and by keyboard alone, in a real browser against the
// real API, with data on every page: no sideways scrolling (tables scroll inside their own box), the navigation
// behind a menu button that the keyboard opens, and Tab reaching each page's main actions in order — a dialog
// opened from the keyboard takes the focus, and Escape gives it back.
import type { Page } from "playwright-core";
import { addMember, uniqueEmail } from "@conveyor/api/testing";
import { checkNarrow, checkPage, startRig, type Rig } from "./support/console";

// The webhook endpoint points at a loopback address, which the API accepts only when told to.
const local = { WEBHOOK_ALLOW_HTTP: "true", ALLOW_PRIVATE_NETWORK: "true" };

let rig: Rig;
let jobId: string;
beforeAll(async () => {
  rig = await startRig({ apiEnv: local });
  const { stack } = rig;
  await addMember(stack.api.database.db, stack.api.deps.config, stack.owner.orgId, "member");
  const auth = { Authorization: `Bearer ${stack.owner.token}` };
  const email = { to: "ops@example.com", subject: "Weekly report", body: "Numbers attached." };
  const created = await Promise.all([
    stack.post("/jobs", { type: "send_email", payload: email, run_at: new Date(Date.now() + 3_600_000).toISOString() }),
    stack.post("/schedules", { name: "Weekly report", cron: "0 8 * * MON", timezone: "Europe/Berlin", job: { type: "send_email", payload: email } }),
    stack.api.request
      .post("/org/invite")
      .set(auth)
      .send({ email: uniqueEmail("invitee"), role: "member" }),
    stack.api.request
      .post("/webhook-endpoints")
      .set(auth)
      .send({ url: "http://127.0.0.1:9/hooks", events: ["job.succeeded", "job.failed"], description: "Billing" }),
  ]);
  for (const res of created) if (res.status >= 300) throw new Error(`setup: ${res.status} ${JSON.stringify(res.body)}`);
  jobId = created[0].body.id as string;
}, 120_000);
afterEach(() => rig?.stack.expectOtherOrgUntouched());
afterAll(() => rig?.close());

/** Each page, what shows it is ready, and the actions Tab must reach on it (accessible names, in page order). */
const PAGES: { path: () => string; name: string; ready: string; actions: (string | RegExp)[] }[] = [
  { path: () => "/overview", name: "overview", ready: "Overview", actions: ["Last hour", "Jobs per minute by status", "Jobs created per minute by type"] },
  {
    path: () => "/jobs",
    name: "jobs",
    ready: "Jobs",
    actions: ["Search", "Status", "Apply filters", "Select every job on this page", /^Select job /, /^…?[0-9a-f]{8}$/],
  },
  { path: () => `/jobs/${jobId}`, name: "job", ready: "send_email", actions: ["Copy job id", "Cancel job"] },
  { path: () => "/queues", name: "queues", ready: "Queues", actions: ["ai_summarize", "Pause ai_summarize", "Limits of ai_summarize", "New rate limit"] },
  {
    path: () => "/schedules",
    name: "schedules",
    ready: "Schedules",
    actions: ["New schedule", "Pause Weekly report", "Edit Weekly report", "Delete Weekly report"],
  },
  { path: () => "/team", name: "team", ready: "Team", actions: [/^Role of member-/, /^Remove member-/, "Invite someone", /^Revoke the invite for invitee-/] },
  { path: () => "/api-keys", name: "api-keys", ready: "API keys", actions: ["Create key", "Revoke test key"] },
  { path: () => "/webhooks", name: "webhooks", ready: "Webhooks", actions: ["Add endpoint", "Deliveries", "Rotate secret", "Delete"] },
  { path: () => "/account", name: "account", ready: "Account", actions: ["Current password", "New password", "New password, again", "Change password"] },
];

/** The accessible name of the focused element, roughly as a screen reader would say it. */
const focusedName = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return "";
    const labelledBy = el.getAttribute("aria-labelledby");
    const byId = labelledBy
      ? labelledBy
          .split(" ")
          .map((id) => document.getElementById(id)?.textContent ?? "")
          .join(" ")
      : "";
    const label = (el as HTMLInputElement).labels?.[0]?.textContent ?? "";
    const svgTitle = el instanceof SVGElement ? (el.querySelector(":scope > title")?.textContent ?? "") : "";
    return (el.getAttribute("aria-label") ?? (byId || label || svgTitle || el.innerText || el.getAttribute("placeholder") || ""))
      .replace(/\s*\*\s*$/, "")
      .replace(/\s+/g, " ")
      .trim();
  });

/** Presses Tab from the top of the page until the focus comes round again; the names of what it stopped on. */
async function tabStops(page: Page, max = 80): Promise<string[]> {
  // A click on the header's empty corner puts the starting point of Tab at the top of the page.
  await page.mouse.click(1, 1);
  const stops: string[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    const id = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement & { dataset: DOMStringMap };
      el.dataset.tabStop ??= String(Math.random());
      return el.dataset.tabStop;
    });
    if (stops.length && id === (await page.evaluate(() => document.querySelector<HTMLElement>("[data-tab-stop]")?.dataset.tabStop))) break;
    stops.push(await focusedName(page));
  }
  return stops;
}

/** `actions` appear among `stops` in this order. */
function expectInOrder(stops: string[], actions: (string | RegExp)[]): void {
  let from = 0;
  for (const action of actions) {
    const at = stops.findIndex((stop, i) => i >= from && (typeof action === "string" ? stop === action : action.test(stop)));
    if (at < 0) throw new Error(`Tab never reached ${String(action)} after ${JSON.stringify(stops.slice(0, from))}; stops: ${JSON.stringify(stops)}`);
    from = at + 1;
  }
}

describe("at 375 px wide", () => {
  it("shows every page without sideways scrolling, the navigation behind a menu button", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 375, height: 740 } });
    for (const { path, name, ready } of PAGES) {
      await page.goto(`${rig.base}${path()}`);
      await page.getByRole("heading", { name: ready, level: 1 }).waitFor();
      await page.waitForFunction(() => !document.querySelector('[role="status"]'));
      await checkNarrow(page, `mobile-${name}`);
      expect(await page.locator('[role="alert"]').count()).toBe(0);
    }
    // The jobs list keeps its search box in sight and folds the other filters away.
    await page.goto(`${rig.base}/jobs`);
    await page.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();
    expect(await page.getByRole("combobox", { name: "Status" }).isVisible()).toBe(false);
    await page.getByRole("button", { name: "More filters" }).click();
    await page.getByRole("combobox", { name: "Status" }).waitFor();
    await checkNarrow(page, "mobile-jobs-filters");
    // The navigation: closed behind the menu button (out of Tab's way), opened and used from the keyboard.
    const nav = page.getByRole("navigation", { name: "Sections" });
    const closed = await tabStops(page);
    expect(closed[0]).toBe("Open navigation");
    expect(closed).not.toContain("Schedules");
    await page.getByRole("button", { name: "Open navigation" }).focus();
    await page.keyboard.press("Enter");
    await nav.getByRole("link", { name: "Schedules" }).waitFor();
    await checkPage(page, "mobile-navigation");
    await nav.getByRole("link", { name: "Schedules" }).focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(`${rig.base}/schedules`);
    // Choosing a page closes the menu, and takes its links out of Tab's way again.
    await page.getByRole("heading", { name: "Schedules", level: 1 }).waitFor();
    await page.waitForFunction(() => document.querySelector("nav")?.hasAttribute("inert"));
    expect(await tabStops(page)).not.toContain("Overview");
  });
});

describe("by keyboard", () => {
  it("reaches every page's main actions with Tab", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email);
    for (const { path, ready, actions } of PAGES) {
      await page.goto(`${rig.base}${path()}`);
      await page.getByRole("heading", { name: ready, level: 1 }).waitFor();
      await page.waitForFunction(() => !document.querySelector('[role="status"]'));
      const stops = await tabStops(page);
      // The frame first: the sections, then the account menu.
      expectInOrder(stops, ["Overview", "Jobs", "Queues", "Schedules", "Team", "API keys", "Webhooks", "Account"]);
      expectInOrder(stops, actions);
    }
    // A group of choices is one Tab stop; the arrow keys choose within it.
    await page.goto(`${rig.base}/overview`);
    await page.getByRole("radio", { name: "Last hour" }).focus();
    await page.keyboard.press("ArrowRight");
    await page.getByRole("region", { name: "Jobs per 15 minutes by status" }).waitFor();
  });

  it("opens a dialog from the keyboard with the focus inside it, and Escape returns the focus", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/schedules`);
    await page.getByRole("button", { name: "New schedule" }).focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "New schedule" });
    await dialog.waitFor();
    await page.waitForFunction(() => document.activeElement?.closest('[role="dialog"]') !== null);
    expect(await focusedName(page)).toBe("Name");
    // The focus stays in the dialog however far Tab goes.
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.closest('[role="dialog"]') !== null)).toBe(true);
    }
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    await page.waitForFunction(() => document.activeElement?.textContent === "New schedule");
  });
});
