// Schedules in a real browser against the real API: the empty list, a new schedule whose cron helper lists the
// next five runs (the first one is the API's own next_run_at), a bad cron refused by the API with its message
// at the cron field, pausing, editing and deleting — and a second organization's schedule never shown.
import { BUILT_IN_PAYLOAD_TEMPLATES } from "@conveyor/client";
import { checkNarrow, checkPage, dismissNotifications, field, startRig, textLines, type Rig } from "./support/console";

let rig: Rig;
let theirSchedule: { id: string; name: string };
beforeAll(async () => {
  rig = await startRig();
  // The second organization has a schedule of its own (paused, so it never creates a job).
  const res = await rig.stack.api.request
    .post("/schedules")
    .set("X-API-Key", rig.stack.otherOrg.apiKey)
    .send({ name: "Their nightly export", cron: "0 3 * * *", paused: true, job: { type: "send_email", payload: EMAIL } });
  if (res.status !== 201) throw new Error(`their schedule: ${res.status} ${JSON.stringify(res.body)}`);
  theirSchedule = res.body as { id: string; name: string };
}, 120_000);
afterEach(() => rig?.stack.expectOtherOrgUntouched());
afterAll(() => rig?.close());

const EMAIL = { to: "ops@example.com", subject: "Weekly report", body: "Numbers attached." };

async function schedule(id: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await rig.stack.api.request.get(`/schedules/${id}`).set("X-API-Key", rig.stack.apiKey);
  return { status: res.status, body: res.body as Record<string, unknown> };
}

async function ourSchedules(): Promise<{ id: string; name: string; cron: string; paused: boolean; next_run_at: string | null }[]> {
  const res = await rig.stack.api.request.get("/schedules").set("X-API-Key", rig.stack.apiKey);
  return res.body;
}

describe("schedules", () => {
  it("creates one with the cron helper, refuses a bad cron at its field, pauses, edits and deletes it", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/schedules`);
    await page.getByText("No schedules yet").waitFor();
    await checkPage(page, "schedules-empty");

    await page.getByRole("button", { name: "New schedule" }).click();
    const dialog = page.getByRole("dialog", { name: "New schedule" });
    await dialog.waitFor();
    await field(page, "Name").fill("Office-hours sync");
    await field(page, "Cron").fill("*/15 9-17 * * MON-FRI");
    await page.getByRole("combobox", { name: "Time zone" }).fill("America/New_Y");
    await page.getByRole("option", { name: "America/New_York" }).click();
    await page.getByRole("combobox", { name: "Job type" }).fill("send_email");
    await field(page, "Payload").fill(JSON.stringify(EMAIL, null, 2));

    // The helper lists the next five runs, in the schedule's zone, while the person types.
    const helper = page.getByTestId("cron-helper");
    await helper.getByText("Next five runs (America/New_York)").waitFor();
    const runs = await helper.locator("time").evaluateAll((times) => times.map((t) => t.getAttribute("datetime")!));
    expect(runs).toHaveLength(5);
    for (const run of runs) {
      // Every quarter hour from 9:00 to 17:45, Monday to Friday, New York time.
      const parts = Object.fromEntries(
        new Intl.DateTimeFormat("en-US", { timeZone: "America/New_York", weekday: "short", hour: "numeric", minute: "numeric", hourCycle: "h23" })
          .formatToParts(new Date(run))
          .map((p) => [p.type, p.value]),
      );
      expect(["Mon", "Tue", "Wed", "Thu", "Fri"]).toContain(parts.weekday);
      expect(Number(parts.hour)).toBeGreaterThanOrEqual(9);
      expect(Number(parts.hour)).toBeLessThanOrEqual(17);
      expect(Number(parts.minute) % 15).toBe(0);
    }
    expect([...runs].sort()).toEqual(runs);
    await checkPage(page, "schedules-new");

    // A cron the API refuses: its message, word for word, at the cron field.
    const refusal = await rig.stack.api.request
      .post("/schedules")
      .set("X-API-Key", rig.stack.apiKey)
      .send({ name: "x", cron: "61 9 * * *", job: { type: "send_email", payload: EMAIL } });
    expect(refusal.status).toBe(400);
    const message = (refusal.body.error.details as { path: string; message: string }[]).find((d) => d.path === "cron")!.message;
    await field(page, "Cron").fill("61 9 * * *");
    await helper.getByText(/No runs to show: Invalid value for minute/).waitFor();
    await dialog.getByRole("button", { name: "Create schedule" }).click();
    await dialog.getByText(message, { exact: true }).waitFor();
    expect(await field(page, "Cron").getAttribute("aria-invalid")).toBe("true");
    await checkPage(page, "schedules-bad-cron");
    expect(await ourSchedules()).toEqual([]);

    await field(page, "Cron").fill("*/15 9-17 * * MON-FRI");
    const firstRun = await helper.locator("time").first().getAttribute("datetime");
    // docs/reference/time.md#alerts's policies: one run at a time, every missed run after downtime.
    await dialog.getByRole("combobox", { name: "While the last run is still going" }).click();
    await page.getByRole("option", { name: "Skip the tick" }).click();
    await dialog.getByRole("combobox", { name: "After downtime, run" }).click();
    await page.getByRole("option", { name: "Every missed run (last 24 h)" }).click();
    await dialog.getByRole("button", { name: "Create schedule" }).click();
    await dialog.waitFor({ state: "detached" });
    const row = page.locator('tr[data-schedule="Office-hours sync"]');
    await row.waitFor();
    const [created] = await ourSchedules();
    expect(created).toMatchObject({ name: "Office-hours sync", cron: "*/15 9-17 * * MON-FRI", paused: false, overlap: "skip", catch_up: "all" });
    // The helper's first run is the tick the API computed.
    expect(created!.next_run_at).toBe(firstRun);
    await dismissNotifications(page);
    await checkPage(page, "schedules");
    await checkNarrow(page, "schedules");

    // Pause.
    await page.getByRole("switch", { name: "Pause Office-hours sync" }).click({ force: true });
    await row.getByText("Paused", { exact: true }).filter({ visible: true }).waitFor();
    expect((await schedule(created!.id)).body).toMatchObject({ paused: true, next_run_at: null });
    await page.getByRole("switch", { name: "Resume Office-hours sync" }).waitFor();

    // Edit: a new cron, still paused.
    await page.getByRole("button", { name: "Edit Office-hours sync" }).click();
    const edit = page.getByRole("dialog", { name: "Edit “Office-hours sync”" });
    await edit.waitFor();
    expect(await field(page, "Cron").inputValue()).toBe("*/15 9-17 * * MON-FRI");
    await field(page, "Name").fill("Morning sync");
    await field(page, "Cron").fill("0 9 * * *");
    await edit.getByRole("button", { name: "Save" }).click();
    await edit.waitFor({ state: "detached" });
    await page.locator('tr[data-schedule="Morning sync"]').getByText("0 9 * * *", { exact: true }).waitFor();
    expect((await schedule(created!.id)).body).toMatchObject({ name: "Morning sync", cron: "0 9 * * *", timezone: "America/New_York", paused: true });

    // Delete.
    await page.getByRole("button", { name: "Delete Morning sync" }).click();
    await page.getByRole("dialog", { name: "Delete this schedule?" }).getByRole("button", { name: "Delete" }).click();
    await page.getByText("No schedules yet").waitFor();
    expect((await schedule(created!.id)).status).toBe(404);
  });

  it("never shows a second organization's schedule", async () => {
    const res = await rig.stack.post("/schedules", { name: "Our report", cron: "0 8 * * 1", job: { type: "send_email", payload: EMAIL } });
    expect(res.status).toBe(201);
    const page = await rig.loggedIn(rig.stack.owner.email);
    await page.goto(`${rig.base}/schedules`);
    await page.locator('tr[data-schedule="Our report"]').waitFor();
    expect(await page.locator("tr[data-schedule]").count()).toBe(1);
    expect(await page.getByText(theirSchedule.name).count()).toBe(0);
    // Their schedule is not found for us, and still there for them.
    expect((await schedule(theirSchedule.id)).status).toBe(404);
    const theirs = await rig.stack.api.request.get(`/schedules/${theirSchedule.id}`).set("X-API-Key", rig.stack.otherOrg.apiKey);
    expect(theirs.body).toMatchObject({ name: theirSchedule.name, paused: true });
  });

  it("shows a schedule's runs in its own zone with the zone's name, and wraps its cron only between fields (issue 23 #5)", async () => {
    const res = await rig.stack.post("/schedules", {
      name: "Nairobi morning report",
      cron: "0,15,30,45 8-17 1,8,15,22 1-12 MON-FRI",
      timezone: "Africa/Nairobi",
      job: { type: "send_email", payload: EMAIL },
    });
    expect(res.status).toBe(201);
    const nextRun = res.body.next_run_at as string;
    // What the clock in Nairobi reads at the next run (the browser runs in UTC: three hours behind).
    const inNairobi = new Intl.DateTimeFormat("en-US", { timeZone: "Africa/Nairobi", hour: "numeric", minute: "2-digit" }).format(new Date(nextRun));
    const inUtc = new Intl.DateTimeFormat("en-US", { timeZone: "UTC", hour: "numeric", minute: "2-digit" }).format(new Date(nextRun));
    expect(inNairobi).not.toBe(inUtc);
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/schedules`);
    const row = page.locator('tr[data-schedule="Nairobi morning report"]');
    const next = row.locator(`time[datetime="${nextRun}"]`).filter({ visible: true });
    await next.waitFor();
    const shown = await next.innerText();
    expect(shown).toContain(inNairobi);
    expect(shown).toContain("Africa/Nairobi");
    expect(shown).not.toContain(inUtc);
    await checkPage(page, "schedules-zone");
    await checkNarrow(page, "schedules-zone");

    // At 375 px the cron wraps between its five fields, never inside one.
    await page.setViewportSize({ width: 375, height: 740 });
    const cron = row.getByTestId("cron").filter({ visible: true });
    const lines = await textLines(cron);
    expect(lines.length).toBeGreaterThan(1);
    const fields = [..."0,15,30,45 8-17 1,8,15,22 1-12 MON-FRI".split(" "), "·", "Africa/Nairobi"];
    for (const line of lines) for (const token of line.split(" ")) expect(fields).toContain(token);
    const nextNarrow = row.locator(`time[datetime="${nextRun}"]`).filter({ visible: true });
    expect(await nextNarrow.innerText()).toContain("Africa/Nairobi");
    await rig.stack.api.request.delete(`/schedules/${res.body.id}`).set("X-API-Key", rig.stack.apiKey);
  });

  it("starts a built-in type's payload from its template and shows every refusal at its field, in words (issue 23 #6, #13)", async () => {
    const page = await rig.loggedIn(rig.stack.owner.email, { viewport: { width: 1440, height: 900 } });
    await page.goto(`${rig.base}/schedules`);
    await page.getByRole("button", { name: "New schedule" }).click();
    const dialog = page.getByRole("dialog", { name: "New schedule" });
    await dialog.waitFor();
    // The default type's template, then another type's when the type changes.
    expect(JSON.parse(await field(page, "Payload").inputValue())).toEqual(BUILT_IN_PAYLOAD_TEMPLATES.send_email);
    await page.getByRole("combobox", { name: "Job type" }).fill("send_sms");
    expect(JSON.parse(await field(page, "Payload").inputValue())).toEqual(BUILT_IN_PAYLOAD_TEMPLATES.send_sms);
    expect(Object.keys(BUILT_IN_PAYLOAD_TEMPLATES.send_sms).sort()).toEqual(["message", "to"]);

    // Two problems in the payload: both shown at the payload field, in words.
    const bad = { to: "0712", message: "" };
    const refusal = await rig.stack.api.request
      .post("/schedules")
      .set("X-API-Key", rig.stack.apiKey)
      .send({ name: "x", cron: "0 8 * * *", job: { type: "send_sms", payload: bad } });
    expect(refusal.status).toBe(400);
    const details = refusal.body.error.details as { path: string; message: string }[];
    expect(details.map((d) => d.path).sort()).toEqual(["job.payload.message", "job.payload.to"]);
    await field(page, "Name").fill("SMS reminder");
    await field(page, "Payload").fill(JSON.stringify(bad));
    await dialog.getByRole("button", { name: "Create schedule" }).click();
    for (const d of details.filter((d) => d.path.startsWith("job.payload."))) {
      await dialog.getByText(`“${d.path.slice("job.payload.".length)}” ${d.message}`).waitFor();
    }
    expect(await dialog.innerText()).not.toContain("job.payload");
    expect(await field(page, "Payload").getAttribute("aria-invalid")).toBe("true");
    await checkPage(page, "schedules-form-errors");
    await checkNarrow(page, "schedules-form-errors");

    // At 375 px the type field shows the whole type (it was cut to "send_e" beside two number fields).
    await page.setViewportSize({ width: 375, height: 740 });
    await page.getByRole("combobox", { name: "Job type" }).fill("mobile_money_stk");
    const typeInput = page.getByRole("combobox", { name: "Job type" });
    expect(await typeInput.evaluate((el: HTMLInputElement) => el.scrollWidth <= el.clientWidth)).toBe(true);
    expect((await ourSchedules()).map((s) => s.name)).not.toContain("SMS reminder");
  });
});
