// The Job types page (docs/reference/lifecycle.md#your-own-workers) in a real browser against the real API: an owner registers a type from the page (a
// schema with a catastrophic pattern refused at its field first), sees its schema and defaults, and deletes it; a
// member sees the list with no control to change it — at 1440 and 375 px. A second organization's types never show.
import { addMember, createOrg } from "@conveyor/api/testing";
import { checkNarrow, checkPage, dismissNotifications, field, rigForFile } from "./support/console";

const rig = rigForFile();

describe("the job types page", () => {
  it("registers a type (refusing a catastrophic pattern at its field), shows its schema and deletes it", async () => {
    const { db } = rig.stack.api.database;
    const { config } = rig.stack.api.deps;
    // Another organization's type of its own: never shown here.
    const other = await createOrg(db, config);
    await rig.stack.api.request
      .post("/job-types")
      .set("Authorization", `Bearer ${other.token}`)
      .send({ name: "their_type", payload_schema: { type: "object" } })
      .expect(201);

    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/job-types`);
    await page.getByRole("heading", { name: "Job types", level: 1 }).waitFor();
    await page.getByText("No job types of your own yet").waitFor();

    await page.getByRole("button", { name: "Register type" }).click();
    const dialog = page.getByRole("dialog", { name: "Register a job type" });
    await field(page, "Name").fill("resize");
    await field(page, "Description").fill("Resize with our Python worker");
    await field(page, "Payload schema").fill('{"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}');
    await dialog.getByRole("button", { name: "Register" }).click();
    await dialog.getByText(/exponential time/).waitFor();
    await field(page, "Payload schema").fill('{"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}');
    await field(page, "Default retries").fill("3");
    await dialog.getByRole("button", { name: "Register" }).click();
    await dialog.waitFor({ state: "detached" });

    const row = page.locator('tr[data-job-type="resize"]');
    await row.waitFor();
    expect(await row.innerText()).toContain("Resize with our Python worker");
    expect(await row.getByTestId("payload-schema").innerText()).toContain('"required"');
    expect(await row.innerText()).toContain("3 retries");
    expect(await page.getByText("their_type").count()).toBe(0);
    // What the page registered is what POST /jobs now checks.
    const refused = await rig.stack.post("/jobs", { type: "resize", payload: {} });
    expect(refused.status).toBe(400);
    await dismissNotifications(page);
    await checkPage(page, "job-types");

    const member = await addMember(db, config, rig.stack.owner.orgId, "member");
    const theirs = await rig.loggedIn(member.email, { viewport: { width: 375, height: 800 } });
    await theirs.goto(`${rig.base}/job-types`);
    await theirs.locator('tr[data-job-type="resize"]').waitFor();
    expect(await theirs.getByRole("button", { name: "Register type" }).count()).toBe(0);
    expect(await theirs.getByRole("button", { name: "Delete resize" }).count()).toBe(0);
    await checkNarrow(theirs, "job-types-member");

    await page.getByRole("button", { name: "Delete resize" }).click();
    await page.getByRole("dialog", { name: "Delete this job type?" }).getByRole("button", { name: "Delete" }).click();
    await row.waitFor({ state: "detached" });
    const gone = await rig.stack.post("/jobs", { type: "resize", payload: { url: "u" } });
    expect(gone.status).toBe(400);
  });
});
