// Why a pending job waits (`waiting_for`, docs/reference/flow-control.md#flow-control), in words, in a real browser against the real API: in the jobs
// list under each pending row's status and as a sentence on the job's page — a job due later, a job whose queue is
// paused (read again while the page is open: pausing changes no job), and a job no running worker serves.
import { checkNarrow, checkPage, rigForFile } from "./support/console";

// No worker: a due job of a type nobody serves waits for one.
const rig = rigForFile();

const owner = () => ({ Authorization: `Bearer ${rig.stack.owner.token}` });

it("says in words why each pending job waits, in the list and on the job's page", async () => {
  const later = await rig.enqueue({
    type: "send_email",
    payload: { to: "ops@example.com", subject: "Later", body: "later" },
    run_at: new Date(Date.now() + 3_600_000).toISOString(),
  });
  const unserved = await rig.enqueue({ type: "send_sms", payload: { to: "+254712345678", message: "hello" } });
  const paused = await rig.enqueue({ type: "send_email", payload: { to: "ops@example.com", subject: "Paused", body: "held" } });
  await rig.stack.api.request.patch("/queues/send_email").set(owner()).send({ paused: true }).expect(200);

  const page = await rig.loggedIn(rig.stack.owner.email);
  await page.goto(`${rig.base}/jobs?status=pending`);
  const note = (id: string) => page.locator(`tr[data-job-id="${id}"] [data-waiting-for]`);
  await note(later).filter({ hasText: "Scheduled for later" }).waitFor();
  await note(unserved).filter({ hasText: "No worker serves this type" }).waitFor();
  await note(paused).filter({ hasText: "Its queue is paused" }).waitFor();
  await checkPage(page, "jobs-waiting");
  await checkNarrow(page, "jobs-waiting");

  await page.goto(`${rig.base}/jobs/${paused}`);
  const reason = page.getByTestId("waiting-for");
  await reason.filter({ hasText: "The send_email queue is paused for your organization" }).waitFor();
  await checkPage(page, "job-waiting-paused");
  // Resumed elsewhere: the page reads the job again by itself and gives the new reason.
  await rig.stack.api.request.patch("/queues/send_email").set(owner()).send({ paused: false }).expect(200);
  await page.locator('[data-testid="waiting-for"][data-waiting-for="no_worker"]').waitFor({ timeout: 15_000 });
  await checkNarrow(page, "job-waiting");
  // The way to the queues from there.
  await reason.getByRole("link", { name: "See the queues" }).click();
  await page.getByRole("heading", { name: "Queues", level: 1 }).waitFor();

  await page.goto(`${rig.base}/jobs/${later}`);
  await reason.filter({ hasText: /It is scheduled to run at / }).waitFor();
  expect(await reason.getByRole("link").count()).toBe(0);
});
