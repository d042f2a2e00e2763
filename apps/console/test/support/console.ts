// The console's end-to-end rig: the built console served by the real API on a loopback port (the whole stack:
// API in-process, real worker processes, a second organization), headless Chromium driven by Playwright, and
// the checks every page gets — a screenshot to look at, axe-core with no serious or critical violation, no
// console error or policy violation, and no sideways scrolling at 375 px.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from "playwright-core";
import { createApp } from "@conveyor/api";
import { ensureConsoleBuilt } from "@conveyor/console/build";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "@conveyor/testkit";
import { TEST_PASSWORD } from "@conveyor/api/testing";
import { startStack, type Stack, type StackOptions } from "@conveyor/api/testing/stack";

export const ARTIFACTS = path.resolve(__dirname, "../../../../test-artifacts/console");
export const PASSWORD = TEST_PASSWORD;
const AXE_SOURCE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

/** The test kit's flags, and no QUIC: the console is served over plain HTTP on loopback. */
const CONSOLE_CHROMIUM_ARGS = [...CHROMIUM_ARGS, "--disable-quic"];

export type Rig = {
  stack: Stack;
  /** The API (and console) on a loopback port, e.g. http://127.0.0.1:41234; also its PUBLIC_URL. */
  base: string;
  browser: Browser;
  /** A browser context (cookies of its own) at a desktop size, recording page problems. */
  context(viewport?: { width: number; height: number }): Promise<BrowserContext>;
  /** A page in a context logged in as `email` (through POST /auth/session, as the login form does). */
  loggedIn(email: string, options?: { viewport?: { width: number; height: number }; password?: string }): Promise<Page>;
  /** POST /jobs as the stack's owner: the new job's id (any answer but 202 throws, with its body). */
  enqueue(body: object): Promise<string>;
  close(): Promise<void>;
};

/** A form field by its label (Mantine appends " *" to a required field's label). */
export function field(page: Page, label: string) {
  return page.getByLabel(new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*\\*?$`));
}

/** Problems a page reported: console errors, uncaught exceptions, policy violations, failed requests. */
const problems = new WeakMap<Page, string[]>();

export function pageProblems(page: Page): string[] {
  return problems.get(page) ?? [];
}

function watch(page: Page): void {
  const list: string[] = [];
  problems.set(page, list);
  page.on("console", (message) => {
    // Chromium logs every 4xx answer; the console expects some (a 401 while logged out, a refusal it shows).
    if (message.type() === "error" && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) {
      list.push(`console: ${message.text()}`);
    }
  });
  page.on("pageerror", (error) => list.push(`page: ${error.message}`));
  // A script the page was tricked into running would open a dialog: none may.
  page.on("dialog", (dialog) => {
    list.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
}

export async function startRig(options: StackOptions & { workers?: number } = {}): Promise<Rig> {
  ensureConsoleBuilt();
  // The API's PUBLIC_URL (invite links, Link headers) must be the address the browser uses: take a port first.
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Real time for the API as for its workers and the browser: a clock standing still at the rig's start put every job
  // finished a minute later in the overview's last bar, whose jobs list could not hold it (issue 46 #10).
  const stack = await startStack({ realTime: true, ...options, apiEnv: { PUBLIC_URL: base, AUTH_RATE_LIMIT_PER_MIN: "0", ...options.apiEnv } });
  server.on("request", createApp(stack.api.deps));
  let browser: Browser;
  try {
    for (let i = 0; i < (options.workers ?? 0); i++) await stack.startWorker();
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CONSOLE_CHROMIUM_ARGS });
  } catch (error) {
    // A rig that cannot start (no Chromium, a worker that dies) must not leave its worker processes running.
    await stack.close().catch(() => {});
    await new Promise((resolve) => server.close(resolve));
    throw error;
  }
  const contexts: BrowserContext[] = [];

  const rig: Rig = {
    stack,
    base,
    browser,
    async context(viewport = { width: 1280, height: 800 }) {
      const context = await browser.newContext({ viewport, baseURL: base });
      context.on("page", watch);
      contexts.push(context);
      return context;
    },
    async loggedIn(email, { viewport, password = PASSWORD } = {}) {
      const context = await rig.context(viewport);
      const res = await context.request.post(`${base}/auth/session`, { data: { email, password } });
      if (res.status() !== 200) throw new Error(`POST /auth/session for ${email}: ${res.status()} ${await res.text()}`);
      return context.newPage();
    },
    async enqueue(body) {
      const res = await stack.post("/jobs", body);
      if (res.status !== 202) throw new Error(`POST /jobs: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id as string;
    },
    async close() {
      await Promise.all(contexts.map((c) => c.close().catch(() => undefined)));
      await browser.close();
      await new Promise((resolve) => server.close(resolve));
      await stack.close();
    },
  };
  return rig;
}

/**
 * The test file's rig: started before its tests, closed after them, and after each test the second organization
 * must be untouched. The object returned is filled in by the file's beforeAll.
 */
export function rigForFile(options: Parameters<typeof startRig>[0] = {}): Rig {
  const rig = {} as Rig;
  beforeAll(async () => {
    Object.assign(rig, await startRig(options));
  }, 180_000);
  afterEach(() => rig.stack?.expectOtherOrgUntouched());
  afterAll(() => rig.close?.());
  return rig;
}

/** Saves test-artifacts/console/<name>.png (the full page). */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  // Let transitions (modals, notifications) settle so the picture shows the state, not a frame of an animation.
  await page.waitForTimeout(350);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

type AxeNode = { target: string[]; any: { id: string; data?: { messageKey?: string } | null }[] };
type AxeViolation = { id: string; impact: string | null; help: string; nodes: AxeNode[] };

/** A serious or critical axe finding, named for a report (`page` is set by the caller that knows it). */
export type AxeFinding = { page?: string; rule: string; impact: string | null; help: string; nodes: string[] };

/**
 * axe-core on the page as it is: its serious and critical violations, and text in its own background's colour —
 * axe files a 1:1 contrast under "incomplete" (it might be deliberately hidden), which is how a button whose label
 * was painted the colour of its background passed it. Evaluated by the driver, so the page's policy stays on.
 */
export async function collectAxeFindings(page: Page): Promise<AxeFinding[]> {
  await page.evaluate(AXE_SOURCE);
  const problems = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: AxeViolation[]; incomplete: AxeViolation[] }> } })
      .axe;
    const result = await axe.run(document, { resultTypes: ["violations", "incomplete"] });
    const summary = (v: AxeViolation, nodes: AxeNode[]) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: nodes.slice(0, 3).map((n) => n.target.join(" ")),
    });
    const invisible = result.incomplete
      .filter((v) => v.id === "color-contrast")
      .map((v) =>
        summary(
          v,
          v.nodes.filter((n) => n.any.some((check) => check.data?.messageKey === "equalRatio")),
        ),
      )
      .filter((v) => v.nodes.length > 0)
      .map((v) => ({ ...v, impact: "serious", help: "Text in the colour of its own background" }));
    return [...result.violations.map((v) => summary(v, v.nodes)), ...invisible];
  });
  return problems.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => ({ rule: v.id, impact: v.impact, help: v.help, nodes: v.nodes }));
}

/** axe-core on the page as it is: no serious or critical violation (collectAxeFindings). */
export async function expectAccessible(page: Page): Promise<void> {
  expect(await collectAxeFindings(page)).toEqual([]);
}

/**
 * At 375 px the page scrolls up and down only (tables scroll inside their own box). Waits up to 10 s for the page to
 * settle first: after a resize, React's re-render (media queries switching tables to narrow columns, charts measuring
 * their new box) can take seconds on a loaded machine; a page that never fits still fails, with its widths.
 */
export async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const fits = () => document.documentElement.scrollWidth <= document.documentElement.clientWidth;
  await page.waitForFunction(fits, undefined, { timeout: 10_000 }).catch(() => undefined);
  const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  expect(widths.scroll).toBeLessThanOrEqual(widths.client);
}

/** The checks every page flow ends with. */
export async function checkPage(page: Page, name: string): Promise<void> {
  await screenshot(page, name);
  await expectAccessible(page);
  expect(pageProblems(page)).toEqual([]);
}

/** The same page at 375 px wide: a screenshot, no sideways scroll, accessible. */
export async function checkNarrow(page: Page, name: string): Promise<void> {
  const before = page.viewportSize();
  await page.setViewportSize({ width: 375, height: 740 });
  await expectNoSidewaysScroll(page);
  await screenshot(page, `${name}-375`);
  await expectAccessible(page);
  if (before) await page.setViewportSize(before);
}

/** Closes the notifications on screen (a picture of the page should show the page, not the last toast). */
export async function dismissNotifications(page: Page): Promise<void> {
  const buttons = page.getByRole("button", { name: "Dismiss notification" });
  for (let i = 0; i < 20 && (await buttons.count()) > 0; i++) {
    await buttons
      .first()
      .click({ timeout: 2000 })
      .catch(() => undefined);
    await page.waitForTimeout(50);
  }
}

/**
 * The lines an element's text is laid out on, as the reader sees them (where the browser wrapped it): to check that
 * something wraps only where it should (an e-mail before its "@" or a dot, a cron expression between its fields).
 */
export async function textLines(element: Locator): Promise<string[]> {
  return element.evaluate((el) => {
    const lines: string[] = [];
    let lastTop: number | null = null;
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? "";
      for (let i = 0; i < text.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getBoundingClientRect();
        // A space at the end of a line may be laid out on it with no height: it belongs to the line it ends.
        if (rect.height === 0 && lines.length) {
          lines.push(`${lines.pop()}${text[i]}`);
          continue;
        }
        const top = Math.round(rect.top);
        if (lastTop === null || top > lastTop + 2) lines.push("");
        lines.push(`${lines.pop()}${text[i]}`);
        lastTop = top;
      }
    }
    return lines.map((line) => line.trim());
  });
}
