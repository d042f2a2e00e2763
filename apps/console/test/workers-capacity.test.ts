// The Workers page on a shared deployment (docs/reference/time.md#alerts, issue 45) in Chromium against real worker processes: a member of
// the organization sees the deployment's workers only as capacity for the job types it uses — processes and slots
// per type, its own running job linking to its page, "no worker" for a type nothing serves — and no host name or pid;
// another organization's member sees none of it. At 1440 and 375 px, with axe.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { addMember, createOrg } from "@conveyor/api/testing";
import { checkNarrow, checkPage, rigForFile } from "./support/console";

const rig = rigForFile({ workers: 2, workerEnv: { WORKER_TYPES: "scripted,word_count", WORKER_HEARTBEAT_MS: "300", WORKER_CONCURRENCY: "4" } });
const gate = path.join(mkdtempSync(path.join(os.tmpdir(), "conveyor-capacity-page-")), "release");
afterAll(() => writeFileSync(gate, ""));

it("shows a member capacity per job type with their running job, a type no worker serves, and no host name or pid", async () => {
  await rig.stack.registerPluginTypes();
  const ours = (await rig.stack.post("/jobs", { type: "scripted", payload: { until_file: gate } })).body.id as string;
  expect((await rig.stack.post("/jobs", { type: "webhook", payload: { url: "https://hooks.example.com/x", payload: {} } })).status).toBe(202);
  await rig.stack.waitForJob(ours, (job) => job.status === "processing");
  const { db } = rig.stack.api.database;
  const member = await addMember(db, rig.stack.api.deps.config, rig.stack.owner.orgId, "member");

  const page = await rig.loggedIn(member.email, { viewport: { width: 1440, height: 900 } });
  await page.goto(`${rig.base}/workers`);
  await page.getByRole("heading", { name: "Workers", level: 1 }).waitFor();
  const scripted = page.locator('li[data-capacity-type="scripted"]');
  await scripted.getByTestId("capacity").filter({ hasText: "2 workers · 8 slots · 1 of your jobs running" }).waitFor({ timeout: 15_000 });
  await scripted.locator(`[data-job-id="${ours}"] a`).waitFor();
  await page.locator('li[data-capacity-type="webhook"]').getByText("No worker", { exact: true }).waitFor();
  const text = await page.locator("main").innerText();
  expect(text).not.toContain(os.hostname());
  for (const worker of rig.stack.workers) expect(text).not.toContain(`pid ${worker.pid}`);
  await page.mouse.move(1000, 10);
  await checkPage(page, "workers-capacity");
  await checkNarrow(page, "workers-capacity");

  // Another organization's member: no type used, nothing of the deployment's machines.
  const other = await createOrg(db, rig.stack.api.deps.config, "Other Tenant");
  const theirs = await rig.loggedIn(other.email, { viewport: { width: 1440, height: 900 } });
  await theirs.goto(`${rig.base}/workers`);
  await theirs.getByRole("heading", { name: "Workers", level: 1 }).waitFor();
  await theirs.getByText("No worker is running").waitFor({ timeout: 15_000 });
  expect(await theirs.locator("main").innerText()).not.toContain(os.hostname());
});

it("shows the organization's own workers beside the shared capacity, and leaves its own types out of that capacity", async () => {
  // A type of the organization's own, served by its own (protocol) worker, beside a built-in type it used above.
  const owner = rig.stack.owner;
  const as = { Authorization: `Bearer ${owner.token}` };
  expect(
    (
      await rig.stack.api.request
        .post("/job-types")
        .set(as)
        .send({ name: "resize", payload_schema: { type: "object" } })
    ).status,
  ).toBe(201);
  const key = (await rig.stack.api.request.post("/api-keys").set(as).send({ name: "own workers", role: "worker" })).body.key as string;
  expect((await rig.stack.post("/jobs", { type: "resize", payload: {} })).status).toBe(202);
  const workerId = "2d7a3c1e-5b4f-4e8a-9c6d-0f1e2d3c4b5a";
  const leased = await rig.stack.api.request
    .post("/worker/lease")
    .set({ "X-API-Key": key })
    .send({ types: ["resize"], worker_id: workerId, worker_name: "py-resizer", worker_version: "conveyor-python/0.1.0", concurrency: 5, wait_seconds: 5 });
  expect(leased.status).toBe(200);

  const page = await rig.loggedIn(owner.email, { viewport: { width: 1440, height: 900 } });
  await page.goto(`${rig.base}/workers`);
  await page.getByRole("heading", { name: "Workers", level: 1 }).waitFor();
  await page.locator('li[data-capacity-type="scripted"]').waitFor({ timeout: 15_000 });
  const own = page.getByRole("list", { name: "Your own workers" });
  await own.getByText("py-resizer").waitFor({ timeout: 15_000 });
  expect(await page.locator('li[data-capacity-type="resize"]').count()).toBe(0);
  await checkPage(page, "workers-own-beside-capacity");
  await checkNarrow(page, "workers-own-beside-capacity");
});
