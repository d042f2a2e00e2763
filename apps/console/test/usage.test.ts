// The Usage page in a real browser against the whole stack (docs/reference/tenants.md#usage-quotas-and-backpressure): today's jobs and attempts charted and listed by
// type, the quotas in force with how much of each is used, the overview's notice once a quota is used up, and a
// member told the page is for owners and admins. A second organization's usage never shows.
import { putQuotaOverrides } from "@conveyor/db";
import { addMember, type TestMember } from "@conveyor/api/testing";
import { checkNarrow, checkPage, startRig, type Rig } from "./support/console";

let rig: Rig;
let member: TestMember;
beforeAll(async () => {
  rig = await startRig({ workers: 1, apiEnv: { QUOTA_CACHE_MS: "0" } });
  member = await addMember(rig.stack.api.database.db, rig.stack.api.deps.config, rig.stack.owner.orgId, "member");
}, 180_000);
afterEach(() => rig?.stack.expectOtherOrgUntouched());
afterAll(() => rig?.close());

describe("the usage page", () => {
  it("shows the day's usage by type, the quotas in force, and on the overview that new jobs are refused once one is used up", async () => {
    await putQuotaOverrides(rig.stack.api.database.db.pool, rig.stack.owner.orgId, { jobs_per_day: 4, pending_max: 50 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await rig.stack.post("/jobs", { type: "word_count", payload: { text: `usage ${i}` } })).body.id as string);
    for (const id of ids) await rig.stack.waitForJob(id, (job) => job.status === "done");

    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/usage`);
    await page.getByRole("heading", { name: "Usage", level: 1 }).waitFor();
    const row = page.getByRole("table", { name: "Usage by job type" }).getByRole("row", { name: /word_count/ });
    await row.waitFor();
    expect(await row.getByRole("cell").allInnerTexts()).toEqual(["word_count", "3", "3", expect.stringMatching(/^\d/), "0", expect.stringMatching(/^\d/)]);
    await page.getByText("Jobs created today (UTC)").waitFor();
    await page.getByText("3 of 4").waitFor();
    await page.getByText("Pending jobs held").waitFor();
    expect(await page.getByText("Payload bytes stored").count()).toBe(0);
    await checkPage(page, "usage");
    await checkNarrow(page, "usage");

    // The fourth job uses the day's quota up: the overview says new jobs are refused.
    expect((await rig.stack.post("/jobs", { type: "word_count", payload: { text: "last" } })).status).toBe(202);
    expect((await rig.stack.post("/jobs", { type: "word_count", payload: { text: "refused" } })).status).toBe(429);
    await page.goto(`${rig.base}/overview`);
    const notice = page.getByRole("alert").filter({ hasText: "New jobs are being refused" });
    await notice.waitFor();
    expect(await notice.innerText()).toContain("Jobs created today (UTC): 4 of 4");
    await checkPage(page, "overview-quota-used-up");
  });

  it("tells a member the page is for owners and admins", async () => {
    const page = await rig.loggedIn(member.email);
    await page.goto(`${rig.base}/usage`);
    await page.getByText("Owners and admins only").waitFor();
    expect(await page.getByRole("link", { name: "Usage" }).count()).toBe(0);
  });
});
