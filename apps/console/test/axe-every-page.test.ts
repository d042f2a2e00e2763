// axe on every page of the console (issue 38: "every page passes axe with no serious finding at 1440 and 375 px"):
// each page of the console (CONSOLE_PAGES, which routes.tsx must declare exactly), visited by an owner whose
// organization has something on every page — jobs in each state, a job waiting to retry, a schedule, a waitpoint,
// an invite, an API key, a webhook endpoint with deliveries, a rate limit, saved views, audit entries — and the
// pages for people logged out. A finding fails the test naming the page, the width, the rule and where it is.
import { newId, recordDeliveryAttempts } from "@conveyor/db";
import type { Page } from "playwright-core";
import { CONSOLE_PAGES } from "@conveyor/contracts/console-pages";
import { collectAxeFindings, screenshot, startRig, type AxeFinding, type Rig } from "./support/console";

const local = { WEBHOOK_ALLOW_HTTP: "true", ALLOW_PRIVATE_NETWORK: "true" };
const WIDTHS = [
  { width: 1440, height: 900 },
  { width: 375, height: 740 },
];

let rig: Rig;
let jobId: string;
beforeAll(async () => {
  // Retries wait ten minutes: the job that failed an attempt stays on the Retries page.
  rig = await startRig({ workers: 1, apiEnv: local, workerEnv: { ...local, RETRY_BASE_MS: "600000" } });
  await rig.stack.registerPluginTypes();
  jobId = await seed();
}, 180_000);
afterAll(() => rig?.close());

const owner = () => ({ Authorization: `Bearer ${rig.stack.owner.token}` });
async function send(method: "post" | "put" | "patch", path: string, body: object): Promise<Record<string, unknown>> {
  const res = await rig.stack.api.request[method](path).set(owner()).send(body);
  if (res.status >= 300) throw new Error(`${method.toUpperCase()} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Record<string, unknown>;
}

/** Something on every page; answers a finished job's id for the job page. */
async function seed(): Promise<string> {
  const { stack } = rig;
  const done = (await send("post", "/jobs", { type: "scripted", payload: { note: "done" } })).id as string;
  const failed = (await send("post", "/jobs", { type: "scripted", payload: { fail_until: 9 } })).id as string;
  const retrying = (await send("post", "/jobs", { type: "scripted", payload: { fail_until: 1 }, max_retries: 3 })).id as string;
  await send("post", "/jobs", {
    type: "send_email",
    payload: { to: "ada@example.com", subject: "Later", body: "b" },
    run_at: new Date(Date.now() + 3_600_000).toISOString(),
  });
  await stack.waitForJob(done, (j) => j.status === "done", 30_000);
  await stack.waitForJob(failed, (j) => j.status === "failed", 30_000);
  await stack.waitForJob(retrying, (j) => j.status === "pending" && j.retries === 1, 30_000);
  await send("post", "/schedules", {
    name: "Nightly report",
    cron: "30 2 * * *",
    timezone: "Europe/Berlin",
    job: { type: "send_email", payload: { to: "ada@example.com", subject: "Report", body: "b" } },
  });
  await send("post", "/waitpoints", { description: "Approval of invoice INV-7", timeout_seconds: 3600 });
  await send("post", "/org/invite", { email: "grace@example.com", role: "member" });
  await send("post", "/api-keys", { name: "billing-service" });
  await send("put", "/rate-limits/email-provider", { limit: 50, period: "second" });
  await send("patch", "/queues/send_email", { rate_limit: "email-provider" });
  await send("post", "/saved-views", { name: "Failed scripted", filter: { status: "failed", type: "scripted" } });
  const endpoint = await send("post", "/webhook-endpoints", { url: "http://127.0.0.1:9/hooks", events: ["job.cancelled"], description: "Billing" });
  const { rows } = await stack.api.database.db.pool.query<{ id: string }>("SELECT id::text FROM events WHERE job_id = $1 ORDER BY id LIMIT 1", [done]);
  await recordDeliveryAttempts(
    stack.api.database.db.pool,
    [
      {
        endpointId: endpoint.id as string,
        eventId: Number(rows[0]!.id),
        eventType: "job.created",
        jobId: newId(),
        subjectJobId: done,
        trigger: "event",
        attempt: 1,
        statusCode: 503,
        durationMs: 8,
        error: "127.0.0.1 answered 503",
        responseBody: "Service Unavailable",
        delivered: false,
      },
    ],
    3 * 24 * 3600_000,
  );
  return done;
}

/** A router path as an address: `$id` is the seeded job. */
const address = (path: string) => path.replace("$id", jobId);
const PUBLIC = new Set(["/login", "/signup"]);

/** The page has drawn its data: a level-1 heading, and no loading state left (charts and lists included). */
async function settled(page: Page): Promise<void> {
  await page.getByRole("heading", { level: 1 }).first().waitFor({ timeout: 20_000 });
  await page.waitForFunction(() => !document.querySelector('[role="status"] .mantine-Loader-root'), undefined, { timeout: 20_000 });
  // Transitions and charts' first measurement.
  await page.waitForTimeout(400);
}

describe("axe on every console page", () => {
  it("finds no serious or critical violation on any page of the router, at 1440 and 375 px", async () => {
    expect(CONSOLE_PAGES.length).toBeGreaterThan(10);
    // The check itself sees a violation: a button without a name (axe's critical button-name) added to a page.
    const probe = await (await rig.context()).newPage();
    await probe.goto(`${rig.base}/login`);
    await settled(probe);
    await probe.evaluate(() => document.body.appendChild(document.createElement("button")));
    expect((await collectAxeFindings(probe)).map((f) => f.rule)).toContain("button-name");

    const findings: AxeFinding[] = [];
    const visited: string[] = [];
    for (const viewport of WIDTHS) {
      const signedIn = await rig.loggedIn(rig.stack.owner.email, { viewport });
      const signedOut = await (await rig.context(viewport)).newPage();
      for (const path of CONSOLE_PAGES) {
        const page = PUBLIC.has(path) ? signedOut : signedIn;
        await page.goto(`${rig.base}${address(path)}`);
        await settled(page);
        const name = `axe${path === "/" ? "-root" : path.replace(/\$id/, "job").replace(/\//g, "-")}-${viewport.width}`;
        await screenshot(page, name);
        for (const finding of await collectAxeFindings(page)) findings.push({ ...finding, page: `${path} at ${viewport.width} px` });
        visited.push(`${path}@${viewport.width}`);
      }
    }
    expect(visited).toHaveLength(CONSOLE_PAGES.length * WIDTHS.length);
    // Named page by page: "/queues at 375 px: color-contrast (serious) … at .selector".
    expect(findings.map((f) => `${f.page}: ${f.rule} (${f.impact}) ${f.help} at ${f.nodes.join(", ")}`)).toEqual([]);
  }, 600_000);
});
