// Capacity per job type on the Workers page (issue 48 #4), in Chromium against a real worker: a type whose slots are
// all taken says so (its next job waits for a worker) while the page's total still has free slots of other types.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { checkNarrow, checkPage, startRig, type Rig } from "./support/console";

let rig: Rig;
let gate: string;
beforeAll(async () => {
  rig = await startRig({
    workers: 1,
    apiEnv: { WORKERS_VISIBLE_TO_ORGS: "true" },
    workerEnv: { WORKER_TYPES: "scripted,word_count", WORKER_HEARTBEAT_MS: "300", WORKER_CONCURRENCY: "2" },
  });
  await rig.stack.registerPluginTypes();
  gate = path.join(mkdtempSync(path.join(os.tmpdir(), "conveyor-workers-by-type-")), "release");
}, 180_000);
afterEach(() => rig?.stack.expectOtherOrgUntouched());
afterAll(async () => {
  writeFileSync(gate, "");
  await rig?.close();
});

it("shows a type's slots full while the total has free slots of another type", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await rig.stack.post("/jobs", { type: "scripted", payload: { until_file: gate } })).body.id as string);
  for (const id of ids.slice(0, 2)) await rig.stack.waitForJob(id, (job) => job.status === "processing");

  const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
  await page.goto(`${rig.base}/workers`);
  await page.getByTestId("workers-summary").filter({ hasText: "2 of 4 slots busy" }).waitFor({ timeout: 15_000 });
  const table = page.getByRole("table", { name: "Capacity by job type" });
  const scripted = table.locator('tr[data-type="scripted"]');
  await scripted
    .getByTestId("type-slots")
    .filter({ hasText: /^2 of 2 busy Full: new jobs wait$/ })
    .waitFor({ timeout: 15_000 });
  expect(await table.locator('tr[data-type="word_count"]').getByTestId("type-slots").innerText()).toMatch(/^0 of 2 busy on 1 worker$/);
  // The third job is the one waiting for that type's slot.
  expect((await rig.stack.job(ids[2]!)).status).toBe("pending");
  await checkPage(page, "workers-by-type");
  await checkNarrow(page, "workers-by-type");
});
