// Schedules end to end (docs/reference/time.md#time-priority-and-fairness, docs/reference/robustness.md#r35): the real API and real worker processes. A cron tick makes one
// job — not zero, not three — with three worker replicas running, with the leader killed as the tick falls due, and
// with every worker down across several ticks (then only the latest runs). Pausing, editing and deleting before a
// tick is what the tick sees. Ticks are made due by moving next_run_at into the past in Postgres, which is all the
// ticker looks at, instead of waiting for the clock; the crons fire once an hour at a minute half an hour away, so
// no natural tick lands during the test.
import type pg from "pg";
import { waitFor, type ServiceProcess } from "@conveyor/testkit";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

type Schedule = { id: string; cron: string; next_run_at: string | null; last_run_at: string | null; paused: boolean };

let stack: Stack;
let pool: pg.Pool;
let otherSchedule: Schedule;

/** Hourly, at the minute half an hour from now. */
const farMinute = () => `${(new Date().getUTCMinutes() + 30) % 60} * * * *`;
const scripted = (marker: string) => ({ type: "scripted", payload: { marker } });

async function create(name: string, fields: object = {}, headers: Record<string, string> = {}): Promise<Schedule> {
  // The stack's API runs on a test clock; schedules computed from a stale "now" could fall due unasked.
  stack.api.clock.advance(Date.now() - stack.api.clock.now().getTime());
  const res = await stack.post("/schedules", { name, cron: farMinute(), job: scripted(name), ...fields }, headers);
  if (res.status !== 201) throw new Error(`POST /schedules: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Schedule;
}
const read = async (id: string, key = stack.apiKey) => (await stack.api.request.get(`/schedules/${id}`).set("X-API-Key", key)).body as Schedule;
/** Makes the schedule's next tick `agoMs` in the past, as if it had fallen due then and nothing had ticked since. */
const makeDue = (id: string, agoMs = 1_000) =>
  pool.query("UPDATE schedules SET next_run_at = now() - $2 * interval '1 millisecond' WHERE id = $1", [id, agoMs]);
const jobsOf = async (id: string) => (await pool.query<{ id: string }>("SELECT id FROM jobs WHERE schedule_id = $1 ORDER BY id", [id])).rows.map((r) => r.id);
const waitForJobOf = (id: string, timeoutMs = 20_000) => waitFor(async () => (await jobsOf(id))[0], `a job of schedule ${id}`, timeoutMs, 100);

/** Proof that the ticker has run a whole round after this moment: a fresh schedule made due now has its job. */
async function tickerRanAgain(): Promise<void> {
  const probe = await create("probe");
  await makeDue(probe.id);
  await waitForJobOf(probe.id);
  await stack.api.request.delete(`/schedules/${probe.id}`).set("X-API-Key", stack.apiKey);
}

const hourTicks = (cron: string, now: Date) => {
  const minute = Number(cron.split(" ")[0]);
  const latest = new Date(now);
  latest.setUTCMinutes(minute, 0, 0);
  if (latest > now) latest.setUTCHours(latest.getUTCHours() - 1);
  return { latest, next: new Date(latest.getTime() + 3_600_000) };
};
const leaderOf = (workers: ServiceProcess[]) =>
  workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null).find((w) => /became the leader[^\n]*scheduler/.test(w.output()));

beforeAll(async () => {
  stack = await startStack();
  pool = stack.api.database.db.pool;
  await stack.registerPluginTypes();
  await Promise.all([stack.startWorker(), stack.startWorker(), stack.startWorker()]);
  // The second org has a schedule of its own; nothing here may tick it or reach it.
  otherSchedule = await create("second org's", {}, { "X-API-Key": stack.otherOrg.apiKey });
}, 120_000);
afterEach(async () => {
  expect(await read(otherSchedule.id, stack.otherOrg.apiKey)).toEqual(otherSchedule);
  expect((await stack.api.request.get(`/schedules/${otherSchedule.id}`).set("X-API-Key", stack.apiKey)).status).toBe(404);
  await stack.expectOtherOrgUntouched();
});
afterAll(() => stack?.close());

describe("G35: one job per tick", () => {
  it("with three worker replicas running: one job, carrying schedule_id, run to done", async () => {
    await waitFor(() => leaderOf(stack.workers), "a leader among the three workers", 15_000);
    const schedule = await create("replicas");
    await makeDue(schedule.id);
    const jobId = await waitForJobOf(schedule.id);
    const job = await stack.waitForJob(jobId, (j) => j.status === "done");
    expect(job).toMatchObject({ type: "scripted", payload: { marker: "replicas" }, schedule_id: schedule.id });

    await tickerRanAgain();
    expect(await jobsOf(schedule.id)).toEqual([jobId]);
    const { latest, next } = hourTicks(schedule.cron, new Date());
    expect(await read(schedule.id)).toMatchObject({ last_run_at: latest.toISOString(), next_run_at: next.toISOString() });

    // Made due again within the same hour: that tick has its job already, so none is added.
    await makeDue(schedule.id);
    await tickerRanAgain();
    expect(await jobsOf(schedule.id)).toEqual([jobId]);
  });

  it("with the leader killed (SIGKILL) as the tick falls due: another replica runs it, once", async () => {
    const schedule = await create("leader killed");
    const leader = await waitFor(() => leaderOf(stack.workers), "the leader", 15_000);
    await makeDue(schedule.id);
    await leader.stop("SIGKILL");
    // A new leader takes over once the dead one's lease (5 s) lapses.
    const jobId = await waitForJobOf(schedule.id, 30_000);
    await stack.waitForJob(jobId, (j) => j.status === "done");
    await tickerRanAgain();
    expect(await jobsOf(schedule.id)).toEqual([jobId]);
  });

  it("with every worker down across several ticks: exactly one job, for the latest tick, once a worker is back", async () => {
    await Promise.all(stack.workers.map((w) => w.stop("SIGTERM")));
    const schedule = await create("outage");
    // The last tick ran 4 hours ago; the 3 since were missed while every worker was down.
    await pool.query("UPDATE schedules SET last_run_at = now() - interval '4 hours' WHERE id = $1", [schedule.id]);
    await makeDue(schedule.id, 3 * 3_600_000 + 60_000);
    expect(await jobsOf(schedule.id)).toEqual([]);

    await stack.startWorker();
    const jobId = await waitForJobOf(schedule.id, 30_000);
    await stack.waitForJob(jobId, (j) => j.status === "done");
    await tickerRanAgain();
    expect(await jobsOf(schedule.id)).toEqual([jobId]);
    const { latest, next } = hourTicks(schedule.cron, new Date());
    expect(await read(schedule.id)).toMatchObject({ last_run_at: latest.toISOString(), next_run_at: next.toISOString() });
  });
});

describe("edits before a tick", () => {
  it("pausing or deleting a schedule before its tick leaves it without a job; an edited template is what the tick runs", async () => {
    if (!leaderOf(stack.workers)) await stack.startWorker();
    const [paused, deleted, edited] = [await create("paused"), await create("deleted"), await create("edited")];
    // All three fall due in 2 seconds; each is changed before that.
    await pool.query("UPDATE schedules SET next_run_at = now() + interval '2 seconds' WHERE id = ANY($1::uuid[])", [[paused.id, deleted.id, edited.id]]);
    const patch = (id: string, body: object) => stack.api.request.patch(`/schedules/${id}`).set("X-API-Key", stack.apiKey).send(body);
    expect((await patch(paused.id, { paused: true })).status).toBe(200);
    expect((await stack.api.request.delete(`/schedules/${deleted.id}`).set("X-API-Key", stack.apiKey)).status).toBe(204);
    expect((await patch(edited.id, { job: scripted("edited, v2") })).status).toBe(200);

    const jobId = await waitForJobOf(edited.id);
    expect(await stack.waitForJob(jobId, (j) => j.status === "done")).toMatchObject({ payload: { marker: "edited, v2" }, schedule_id: edited.id });
    await tickerRanAgain();
    expect(await jobsOf(paused.id)).toEqual([]);
    expect(await jobsOf(deleted.id)).toEqual([]);

    // Resuming runs no tick missed while paused: the next one is in the future.
    const resumed = (await patch(paused.id, { paused: false })).body as Schedule;
    expect(new Date(resumed.next_run_at!).getTime()).toBeGreaterThan(Date.now());
    await tickerRanAgain();
    expect(await jobsOf(paused.id)).toEqual([]);
  });
});
