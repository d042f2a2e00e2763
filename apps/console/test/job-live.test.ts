// A running job's progress and output (docs/reference/events.md#progress-and-live-results) in the console, in a real browser against the real API and a
// worker: a bar under the job's status in the jobs list, and on the job's page a bar with the handler's message and
// the output, both following the job live while it runs.
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { checkNarrow, checkPage, startRig, type Rig } from "./support/console";

let rig: Rig;
beforeAll(async () => {
  rig = await startRig({ workers: 1 });
  await rig.stack.registerPluginTypes();
}, 180_000);
afterEach(() => rig?.stack.expectOtherOrgUntouched());
afterAll(() => rig?.close());

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join("");

it("shows a running job's progress in the list and its progress and output live on its page", async () => {
  const hold = path.join(tmpdir(), `conveyor-console-live-${process.pid}`);
  const gate = `${hold}-gate`;
  const res = await rig.stack.post("/jobs", { type: "scripted", payload: { live: { steps: 4, gate }, until_file: hold } });
  expect(res.status).toBe(202);
  const id = res.body.id as string;

  const page = await rig.loggedIn(rig.stack.owner.email);
  await page.goto(`${rig.base}/jobs/${id}`);
  // Live: the page shows each step as the worker reports it (each step waits for the test), without a reload.
  await page.getByTestId("job-progress-label").filter({ hasText: "25 % — step 1" }).waitFor({ timeout: 20_000 });
  await page.getByTestId("job-output").filter({ hasText: "line 1" }).waitFor();
  for (const step of [2, 3, 4]) {
    writeFileSync(`${gate}-${step}`, "");
    await page
      .getByTestId("job-progress-label")
      .filter({ hasText: `${step * 25} % — step ${step}` })
      .waitFor({ timeout: 20_000 });
    await page
      .getByTestId("job-output")
      .filter({ hasText: `line ${step}` })
      .waitFor();
  }
  await page.getByTestId("job-output").filter({ hasText: "line 4" }).waitFor({ timeout: 20_000 });
  expect(await page.getByTestId("job-output").textContent()).toBe(lines(4));
  await checkPage(page, "job-live-running");

  await page.goto(`${rig.base}/jobs`);
  const bar = page.locator(`tr[data-job-id="${id}"] [data-testid="job-progress-label"]`);
  await bar.filter({ hasText: "100 %" }).waitFor();
  await checkPage(page, "jobs-progress");
  await checkNarrow(page, "jobs-progress");

  writeFileSync(hold, "");
  await rig.stack.waitForJob(id, (j) => j.status === "done", 30_000);
  await page.goto(`${rig.base}/jobs/${id}`);
  await page.getByTestId("job-output").filter({ hasText: "line 4" }).waitFor();
  await checkNarrow(page, "job-live-done");
});
