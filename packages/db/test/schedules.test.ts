// The ticker at the SQL level (docs/reference/time.md#time-priority-and-fairness, docs/reference/robustness.md#r35): one job per tick however many tickers race for it, only
// the latest missed tick after an outage, and an edit or a delete that commits first is what the tick sees.
import type pg from "pg";
import { deleteSchedule, insertSchedule, msUntilNextTick, newId, runDueSchedules, updateSchedule, type ScheduleRow } from "@conveyor/db";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";

let database: TestDatabase;
let pool: pg.Pool;
let orgId: string;
let otherOrgId: string;
let otherSchedule: ScheduleRow;

const template = { type: "webhook", payload: { url: "https://example.com/tick", payload: { n: 1 } }, max_retries: 2, priority: 7 };

async function schedule(fields: { cron?: string; timezone?: string; paused?: boolean; nextRunAt?: Date | null; org?: string } = {}) {
  return insertSchedule(pool, {
    id: newId(),
    orgId: fields.org ?? orgId,
    name: "tick",
    cron: fields.cron ?? "* * * * *",
    timezone: fields.timezone ?? "UTC",
    job: template,
    paused: fields.paused ?? false,
    nextRunAt: fields.nextRunAt === undefined ? new Date(Date.now() + 3_600_000) : fields.nextRunAt,
    createdBy: newId(),
    createdAt: new Date(),
  });
}
const dbNow = async () => (await pool.query<{ now: Date }>("SELECT now() AS now")).rows[0]!.now;
/** Makes a schedule due: its next tick `ago` ms in the past, as if every worker had been down since. */
const due = (id: string, agoMs = 1_000) => pool.query("UPDATE schedules SET next_run_at = now() - $2 * interval '1 millisecond' WHERE id = $1", [id, agoMs]);
const jobsOf = async (id: string) =>
  (await pool.query("SELECT id, org_id, type, status, payload, max_retries, priority, run_at, schedule_id FROM jobs WHERE schedule_id = $1", [id])).rows;
const row = async (id: string) =>
  (await pool.query<{ next_run_at: Date | null; last_run_at: Date | null }>("SELECT next_run_at, last_run_at FROM schedules WHERE id = $1", [id])).rows[0]!;
const minute = (date: Date) => new Date(Math.floor(date.getTime() / 60_000) * 60_000);

beforeAll(async () => {
  database = await createTestDatabase();
  pool = database.db.pool;
  orgId = newId();
  otherOrgId = newId();
  await database.db.prisma.organization.createMany({
    data: [
      { id: orgId, name: "Ticking" },
      { id: otherOrgId, name: "Elsewhere" },
    ],
  });
  otherSchedule = await schedule({ org: otherOrgId });
});
afterAll(() => database.drop());
afterEach(async () => {
  // The other org's schedule was never due: no tick touched it, and it has no job.
  expect(await row(otherSchedule.id)).toEqual({ next_run_at: otherSchedule.nextRunAt, last_run_at: null });
  expect((await pool.query("SELECT count(*)::int AS n FROM jobs WHERE org_id = $1", [otherOrgId])).rows[0].n).toBe(0);
});

describe("runDueSchedules", () => {
  it("creates one job from the template, queued and announced, and moves next_run_at past now", async () => {
    const s = await schedule();
    await due(s.id);
    const { ticks } = await runDueSchedules(pool);
    const now = await dbNow();
    const mine = ticks.filter((t) => t.scheduleId === s.id);
    expect(mine).toEqual([{ scheduleId: s.id, orgId, tick: expect.any(Date), jobId: expect.any(String), nextRunAt: expect.any(Date) }]);
    const jobs = await jobsOf(s.id);
    expect(jobs).toEqual([
      {
        id: mine[0]!.jobId,
        org_id: orgId,
        type: "webhook",
        status: "pending",
        payload: template.payload,
        max_retries: 2,
        priority: 7,
        run_at: null,
        schedule_id: s.id,
      },
    ]);
    expect((await pool.query("SELECT priority, dispatched_at FROM job_queue WHERE job_id = $1", [mine[0]!.jobId])).rows).toEqual([
      { priority: 7, dispatched_at: null },
    ]);
    expect((await pool.query("SELECT type FROM events WHERE job_id = $1", [mine[0]!.jobId])).rows).toEqual([{ type: "job.created" }]);
    const after = await row(s.id);
    expect(after.last_run_at).toEqual(minute(now));
    expect(after.next_run_at).toEqual(new Date(minute(now).getTime() + 60_000));
  });

  it("after an outage across several ticks, runs only the latest missed one", async () => {
    const s = await schedule({ cron: "*/5 * * * *" });
    // Every worker down for the last 30 minutes: six ticks missed.
    await due(s.id, 30 * 60_000);
    await runDueSchedules(pool);
    const now = await dbNow();
    expect(await jobsOf(s.id)).toHaveLength(1);
    const latest = new Date(Math.floor(now.getTime() / 300_000) * 300_000);
    expect(await row(s.id)).toEqual({ last_run_at: latest, next_run_at: new Date(latest.getTime() + 300_000) });
  });

  it("makes one job per tick when 12 tickers race for 20 due schedules", async () => {
    const schedules = await Promise.all(Array.from({ length: 20 }, () => schedule()));
    for (let round = 0; round < 3; round++) {
      // A new tick for each: as if a minute had passed since the last one ran (the same minute again here, so its
      // record in schedule_runs, which keeps a backfill from making it twice, goes too).
      await pool.query(
        "UPDATE schedules SET next_run_at = now() - interval '1 second', last_run_at = last_run_at - interval '1 minute' WHERE id = ANY($1::uuid[])",
        [schedules.map((s) => s.id)],
      );
      await pool.query("DELETE FROM schedule_runs WHERE schedule_id = ANY($1::uuid[])", [schedules.map((s) => s.id)]);
      const results = await Promise.all(Array.from({ length: 12 }, () => runDueSchedules(pool, 3)));
      // Batches are small, so some tickers come back for more while others still hold rows.
      while ((await pool.query("SELECT 1 FROM schedules WHERE next_run_at <= now() AND NOT paused")).rowCount) await runDueSchedules(pool, 3);
      const created = results.flatMap((r) => r.ticks).filter((t) => t.jobId);
      expect(new Set(created.map((t) => t.scheduleId)).size).toBe(created.length);
    }
    for (const s of schedules) expect(await jobsOf(s.id)).toHaveLength(3);
  });

  it("makes no second job for a tick that already ran (a clock stepped back, a tick made due again)", async () => {
    const s = await schedule({ cron: "0 0 1 1 *" });
    await due(s.id);
    await runDueSchedules(pool);
    expect(await jobsOf(s.id)).toHaveLength(1);
    const ran = (await row(s.id)).last_run_at;
    await due(s.id);
    const { ticks } = await runDueSchedules(pool);
    expect(ticks.find((t) => t.scheduleId === s.id)).toMatchObject({ jobId: null, tick: null });
    expect(await jobsOf(s.id)).toHaveLength(1);
    expect((await row(s.id)).last_run_at).toEqual(ran);
  });

  it("skips paused schedules and those not yet due", async () => {
    const paused = await schedule({ paused: true, nextRunAt: new Date(Date.now() - 60_000) });
    const later = await schedule({ nextRunAt: new Date(Date.now() + 60_000) });
    await runDueSchedules(pool);
    expect(await jobsOf(paused.id)).toHaveLength(0);
    expect(await jobsOf(later.id)).toHaveLength(0);
  });

  it("sees an edit that committed first: the new template, or a pause; a delete leaves nothing to tick", async () => {
    const edited = await schedule();
    const paused = await schedule();
    const deleted = await schedule();
    for (const s of [edited, paused, deleted]) await due(s.id);
    const at = new Date();
    await updateSchedule(pool, { orgId, id: edited.id, at }, (current) => ({
      ...current,
      job: { ...template, payload: { url: "https://example.com/edited", payload: {} } },
    }));
    await updateSchedule(pool, { orgId, id: paused.id, at }, (current) => ({ ...current, paused: true, nextRunAt: null }));
    expect(await deleteSchedule(pool, orgId, deleted.id)).toBe(true);
    await runDueSchedules(pool);
    expect((await jobsOf(edited.id)).map((j) => j.payload)).toEqual([{ url: "https://example.com/edited", payload: {} }]);
    expect(await jobsOf(paused.id)).toHaveLength(0);
    expect(await jobsOf(deleted.id)).toHaveLength(0);
  });

  it("an edit waits for a tick in progress and lands after it, never in the middle", async () => {
    const s = await schedule();
    await due(s.id);
    const ticker = await pool.connect();
    try {
      // Hold the row lock as a tick in progress does.
      await ticker.query("BEGIN");
      await ticker.query("SELECT 1 FROM schedules WHERE id = $1 FOR UPDATE", [s.id]);
      let landed = false;
      const edit = updateSchedule(pool, { orgId, id: s.id, at: new Date() }, (current) => ({ ...current, paused: true, nextRunAt: null })).then(
        () => (landed = true),
      );
      // Meanwhile another ticker skips the locked row instead of waiting or running it.
      expect((await runDueSchedules(pool)).ticks.map((t) => t.scheduleId)).not.toContain(s.id);
      expect(landed).toBe(false);
      await ticker.query("COMMIT");
      await edit;
    } finally {
      ticker.release();
    }
    await runDueSchedules(pool);
    expect(await jobsOf(s.id)).toHaveLength(0);
  });

  it("clears next_run_at of a schedule whose ticks cannot be computed, and goes on with the others", async () => {
    const broken = await schedule({ timezone: "Mars/Olympus_Mons" });
    const fine = await schedule();
    await due(broken.id);
    await due(fine.id);
    const { failures } = await runDueSchedules(pool);
    expect(failures.map((f) => f.scheduleId)).toEqual([broken.id]);
    expect(await row(broken.id)).toEqual({ next_run_at: null, last_run_at: null });
    expect(await jobsOf(fine.id)).toHaveLength(1);
  });
});

describe("msUntilNextTick", () => {
  it("is the time to the earliest unpaused next_run_at by Postgres' clock", async () => {
    await pool.query("UPDATE schedules SET paused = true, next_run_at = NULL WHERE org_id = $1", [orgId]);
    expect(await msUntilNextTick(pool)).toBeGreaterThan(1_000);
    const s = await schedule({ nextRunAt: new Date(Date.now() - 5_000) });
    expect(await msUntilNextTick(pool)).toBeLessThanOrEqual(-4_000);
    await deleteSchedule(pool, orgId, s.id);
  });
});
