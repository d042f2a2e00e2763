// The Alerts page (docs/reference/time.md#alerts) in Chromium against a real worker whose leader evaluates the rules: a rule on a type no
// worker serves fires, the page shows the firing alert with what was seen and the rule's state; an owner silences the
// rule for an hour and lifts it again by keyboard-reachable buttons (audited); a member sees the alerts but not the
// rules. At 1440 and 375 px, with axe.
import { waitFor } from "@conveyor/testkit";
import { addMember } from "@conveyor/api/testing";
import { checkNarrow, checkPage, rigForFile } from "./support/console";

const rig = rigForFile({ workers: 1, workerEnv: { WORKER_TYPES: "scripted", ALERT_EVALUATION_MS: "200" } });

it("shows a firing alert and its rule, silences the rule and lifts the silence; a member sees only the alerts", async () => {
  const owner = { Authorization: `Bearer ${rig.stack.owner.token}` };
  const rule = await rig.stack.api.request
    .post("/alert-rules")
    .set(owner)
    .send({ name: "No word_count worker", condition: { kind: "no_worker", type: "word_count" }, window_seconds: 10, channels: [{ kind: "webhook" }] });
  expect(rule.status).toBe(201);
  expect((await rig.stack.post("/jobs", { type: "word_count", payload: { text: "a b" } })).status).toBe(202);
  await waitFor(
    async () => ((await rig.stack.api.request.get("/alerts?status=firing").set(owner)).body as unknown[]).length === 1,
    "the alert firing",
    60_000,
    250,
  );

  const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
  await page.goto(`${rig.base}/overview`);
  await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Alerts" }).click();
  await page.getByRole("heading", { name: "Alerts", level: 1 }).waitFor();
  const alertRow = page.locator('tr[data-status="firing"]');
  await alertRow.getByText("Firing", { exact: true }).waitFor();
  expect(await alertRow.innerText()).toMatch(/No word_count worker[\s\S]*1 word_count jobs due; 0 live workers serve the type/);
  const ruleRow = page.locator(`tr[data-rule-id="${rule.body.id as string}"]`);
  await ruleRow.getByText("Firing", { exact: true }).waitFor();
  await page.mouse.move(1000, 10);
  await checkPage(page, "alerts");
  await checkNarrow(page, "alerts");

  await ruleRow.getByRole("button", { name: "Silence 1 h No word_count worker" }).click();
  await ruleRow.getByTestId("silenced-until").waitFor();
  const read = async () => (await rig.stack.api.request.get(`/alert-rules/${rule.body.id as string}`).set(owner)).body as { silenced_until: string | null };
  expect((await read()).silenced_until).not.toBeNull();
  await ruleRow.getByRole("button", { name: "Unsilence No word_count worker" }).click();
  await waitFor(async () => (await read()).silenced_until === null, "the silence lifted", 10_000, 100);
  const audit = (await rig.stack.api.request.get("/audit-log?action=alert_rule.silence").set(owner)).body as unknown[];
  expect(audit).toHaveLength(2);

  const member = await addMember(rig.stack.api.database.db, rig.stack.api.deps.config, rig.stack.owner.orgId, "member");
  const theirs = await rig.loggedIn(member.email, { viewport: { width: 375, height: 740 } });
  await theirs.goto(`${rig.base}/alerts`);
  await theirs.locator('tr[data-status="firing"]').first().waitFor();
  expect(await theirs.getByRole("heading", { name: "Rules" }).count()).toBe(0);
  await checkPage(theirs, "alerts-member-375");
});
