// Waitpoints in a real browser against the real API and a worker (docs/reference/lifecycle.md#waitpoints-and-durable-steps): a member sees the organization's open
// waitpoints, completes one with JSON data (invalid JSON is refused on the page, nothing sent), the job waiting on it
// then runs, and its page shows its steps under the attempts. A second organization's waitpoints never show.
import { addMember } from "@conveyor/api/testing";
import { STEPS_PLUGIN, SCRIPTED_PLUGIN } from "@conveyor/api/testing/stack";
import { checkPage, dismissNotifications, startRig, type Rig } from "./support/console";

let rig: Rig;
beforeAll(async () => {
  rig = await startRig({ workers: 1, workerEnv: { WORKER_PLUGINS: `${SCRIPTED_PLUGIN},${STEPS_PLUGIN}` } });
  await rig.stack.api.database.db.pool.query("INSERT INTO job_types (name) VALUES ('stepped') ON CONFLICT DO NOTHING");
}, 120_000);
afterEach(() => rig?.stack.expectOtherOrgUntouched());
afterAll(() => rig?.close());

it("a member completes an open waitpoint with JSON data; the waiting job runs and shows its steps", async () => {
  const { stack } = rig;
  const point = (await stack.post("/waitpoints", { timeout_seconds: 3600, description: "Approve refund 77", tags: ["refunds"] })).body as { id: string };
  const theirs = await stack.api.request.post("/waitpoints").set("X-API-Key", stack.otherOrg.apiKey).send({ description: "Their secret approval" });
  expect(theirs.status).toBe(201);
  const job = (await stack.post("/jobs", { type: "stepped", payload: { steps: 2, wait: point.id } })).body.id as string;
  await stack.waitForJob(job, (j) => j.status === "pending" && (j as { waiting_for?: string }).waiting_for === "waitpoint", 60_000);

  const member = await addMember(stack.api.database.db, stack.api.deps.config, stack.owner.orgId, "member");
  const page = await rig.loggedIn(member.email);
  await page.goto(`${rig.base}/waitpoints`);
  const table = page.getByRole("table", { name: "Open waitpoints" });
  const row = table.getByRole("row").filter({ hasText: "Approve refund 77" });
  await row.waitFor();
  expect(await page.getByText("Their secret approval").count()).toBe(0);
  await checkPage(page, "waitpoints-open");

  await row.getByRole("button", { name: "Complete Approve refund 77" }).click();
  const dialog = page.getByRole("dialog", { name: "Complete “Approve refund 77”" });
  const editor = dialog.getByLabel("Data (JSON)");
  await editor.fill('{"approved": tru');
  await dialog.getByRole("button", { name: "Complete" }).click();
  await dialog.getByText(/Not valid JSON/).waitFor();
  expect((await stack.api.request.get(`/waitpoints/${point.id}`).set("X-API-Key", stack.apiKey)).body.status).toBe("waiting");
  await editor.fill('{"approved": true, "by": "member"}');
  await dialog.getByRole("button", { name: "Complete" }).click();
  await dialog.waitFor({ state: "detached" });
  await page.getByText("Nothing is waiting").waitFor();
  await dismissNotifications(page);

  const done = await stack.waitForJob(job, (j) => j.status === "done", 60_000);
  expect(done.result).toMatchObject({ waited: { approved: true, by: "member" } });
  await page.goto(`${rig.base}/jobs/${job}`);
  const steps = page.getByRole("list", { name: "Steps" });
  await steps.getByTestId("step-approval").waitFor();
  expect(await steps.getByTestId("step-step-1").innerText()).toMatch(/succeeded/i);
  expect(await steps.getByTestId("step-approval").innerText()).toMatch(/completed[\s\S]*Wait approval/i);
  await checkPage(page, "waitpoints-job-steps");
});
