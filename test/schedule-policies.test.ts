// Overlap and catch-up end to end (docs/reference/time.md#alerts): the real API and a real worker whose leader runs the ticker. A `skip`
// schedule whose job outlasts its interval runs one at a time; `buffer_one` holds one tick and runs it when the last
// run ends; after downtime `all` runs each missed tick within its window, `none` runs none. Ticks are made due by
// moving next_run_at into the past, as test/schedules.test.ts does, and the crons fire at a minute half an hour away.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type pg from "pg";
import { ticksBetween } from "@conveyor/contracts";
import { waitFor } from "@conveyor/testkit";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

let stack: Stack;
let pool: pg.Pool;
let dir: string;

beforeAll(async () => {
  stack = await startStack();
  pool = stack.api.database.db.pool;
  await stack.registerPluginTypes();
  await stack.startWorker({ WORKER_CONCURRENCY: "5" });
  dir = mkdtempSync(path.join(os.tmpdir(), "conveyor-overlap-"));
}, 120_000);
afterEach(() => stack.expectOtherOrgUntouched());
afterAll(() => stack?.close());

const farMinute = () => `${(new Date().getUTCMinutes() + 30) % 60} * * * *`;
async function create(fields: object): Promise<{ id: string; cron: string; timezone: string }> {
  stack.api.clock.advance(Date.now() - stack.api.clock.now().getTime());
  const res = await stack.post("/schedules", { name: "policy", cron: farMinute(), ...fields });
  if (res.status !== 201) throw new Error(`POST /schedules: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
/** The next tick falls due now: a new tick each time (last_run_at moved back, its run record gone), as a new hour would. */
const nextTickDue = async (id: string) => {
  await pool.query("UPDATE schedules SET next_run_at = now() - interval '1 second', last_run_at = last_run_at - interval '1 hour' WHERE id = $1", [id]);
  await pool.query("DELETE FROM schedule_runs WHERE schedule_id = $1 AND tick > (SELECT last_run_at FROM schedules WHERE id = $1)", [id]);
};
const jobsOf = async (id: string) =>
  (await pool.query<{ id: string; status: string }>("SELECT id, status FROM jobs WHERE schedule_id = $1 ORDER BY id", [id])).rows;
/** The ticker has handled the schedule's due tick: next_run_at is in the future again. */
const handled = (id: string) =>
  waitFor(
    async () => (await pool.query("SELECT 1 FROM schedules WHERE id = $1 AND next_run_at > now()", [id])).rowCount === 1,
    "the ticker handled the tick",
    20_000,
    100,
  );
const gated = (name: string) => ({ type: "scripted", payload: { until_file: path.join(dir, name) } });
const release = (name: string) => writeFileSync(path.join(dir, name), "");

it("skip: a job that outlasts its interval runs one at a time; the ticks meanwhile pass", async () => {
  const s = await create({ overlap: "skip", job: gated("skip") });
  await nextTickDue(s.id);
  const [first] = await waitFor(async () => ((await jobsOf(s.id)).length === 1 ? jobsOf(s.id) : null), "the first run", 20_000, 100);
  await stack.waitForJob(first!.id, (j) => j.status === "processing");
  for (let i = 0; i < 3; i++) {
    await nextTickDue(s.id);
    await handled(s.id);
  }
  expect((await jobsOf(s.id)).map((j) => j.id)).toEqual([first!.id]);
  release("skip");
  await stack.waitForJob(first!.id, (j) => j.status === "done");
  await nextTickDue(s.id);
  const after = await waitFor(async () => ((await jobsOf(s.id)).length === 2 ? jobsOf(s.id) : null), "the next run once it ended", 20_000, 100);
  // The next run's gate is already open, so it may be done by now: what matters is that it was made after the first ended.
  const next = after.find((j) => j.id !== first!.id)!;
  const { rows } = await pool.query<{ ended: Date; made: Date }>(
    "SELECT (SELECT finished_at FROM jobs WHERE id = $1) AS ended, (SELECT created_at FROM jobs WHERE id = $2) AS made",
    [first!.id, next.id],
  );
  expect(rows[0]!.made.getTime()).toBeGreaterThanOrEqual(rows[0]!.ended.getTime());
});

it("buffer_one: holds one tick while the last run goes on and runs it once that ends, never two at once", async () => {
  const s = await create({ overlap: "buffer_one", job: gated("buffer") });
  await nextTickDue(s.id);
  const [first] = await waitFor(async () => ((await jobsOf(s.id)).length === 1 ? jobsOf(s.id) : null), "the first run", 20_000, 100);
  await stack.waitForJob(first!.id, (j) => j.status === "processing");
  for (let i = 0; i < 3; i++) {
    await nextTickDue(s.id);
    await handled(s.id);
  }
  expect(await jobsOf(s.id)).toHaveLength(1);
  expect((await pool.query("SELECT buffered_run_at FROM schedules WHERE id = $1", [s.id])).rows[0].buffered_run_at).not.toBeNull();
  release("buffer");
  const both = await waitFor(async () => ((await jobsOf(s.id)).length === 2 ? jobsOf(s.id) : null), "the buffered run", 20_000, 100);
  await stack.waitForJob(both[1]!.id, (j) => j.status === "done");
  expect((await pool.query("SELECT buffered_run_at FROM schedules WHERE id = $1", [s.id])).rows[0].buffered_run_at).toBeNull();
  expect(await jobsOf(s.id)).toHaveLength(2);
});

it("catch_up all runs each tick missed within the window after downtime, once; none runs none", async () => {
  // Created paused, so the ticker cannot run a tick of theirs before the downtime is staged. `none` ticks hourly half an
  // hour away: its latest missed tick is never within the grace in which `none` still runs it.
  const all = await create({ cron: "*/10 * * * *", paused: true, catch_up: "all", catch_up_window_seconds: 3_600, job: { type: "scripted", payload: {} } });
  const none = await create({ paused: true, catch_up: "none", job: { type: "scripted", payload: {} } });
  // Down for three hours: the window keeps the last hour of ticks.
  await pool.query("UPDATE schedules SET paused = false, next_run_at = now() - interval '3 hours' WHERE id = ANY($1::uuid[])", [[all.id, none.id]]);
  await handled(all.id);
  await handled(none.id);
  const { rows } = await pool.query<{ last_run_at: Date }>("SELECT last_run_at FROM schedules WHERE id = $1", [all.id]);
  const expected = ticksBetween(all, new Date(rows[0]!.last_run_at.getTime() - 3_600_000), rows[0]!.last_run_at);
  const runs = await pool.query<{ tick: Date }>("SELECT tick FROM schedule_runs WHERE schedule_id = $1 ORDER BY tick", [all.id]);
  // The window is counted back from the ticker's now, which is at most a tick past last_run_at.
  expect(runs.rows.length).toBeGreaterThanOrEqual(expected.length - 1);
  expect(runs.rows.length).toBeLessThanOrEqual(expected.length);
  expect((await jobsOf(all.id)).length).toBe(runs.rows.length);
  expect(await jobsOf(none.id)).toEqual([]);
});
