// Schedules' overlap and catch-up fields, next_runs and backfill through the API alone (docs/reference/time.md#alerts; no worker): the
// fields are echoed and checked, next_runs are the next five run times in the schedule's zone with its offset, and a
// backfill of a day of an hourly schedule creates 24 jobs once however often (and however concurrently) it is sent.
// Another organization's schedule is out of reach, and its data untouched.
import { createSecondOrg, createOrg, startTestApi, type SecondOrg, type TestApi, type TestMember } from "@conveyor/api/testing";
import { responseSchemas } from "../src/declarations/responses";

let api: TestApi;
let alice: TestMember;
let bob: TestMember;
let second: SecondOrg;

beforeAll(async () => {
  api = await startTestApi({ API_RATE_LIMIT_PER_SEC: "0" });
  alice = await createOrg(api.database.db, api.deps.config);
  bob = await createOrg(api.database.db, api.deps.config);
  second = await createSecondOrg(api.database.db);
  await second.watch(api.get);
}, 60_000);
afterEach(() => second.expectUntouched({ Authorization: `Bearer ${alice.token}` }));
afterAll(() => api.close());

const as = (m: TestMember) => ({ Authorization: `Bearer ${m.token}` });
const hook = { type: "webhook", payload: { url: "https://hooks.example.com/tick", payload: {} } };
const create = (body: object, member = alice) =>
  api.request
    .post("/schedules")
    .set(as(member))
    .send({ name: "Hourly", cron: "0 * * * *", job: hook, ...body });
const jobsOf = async (id: string) =>
  (await api.database.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE schedule_id = $1", [id])).rows[0]!.n;

describe("overlap and catch_up", () => {
  it("echoes overlap, catch_up and its window on create, read and PATCH, with the defaults of before", async () => {
    const plain = await create({});
    expect(plain.body).toMatchObject({ overlap: "allow", catch_up: "latest", catch_up_window_seconds: null });
    const res = await create({ overlap: "skip", catch_up: "all" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ overlap: "skip", catch_up: "all", catch_up_window_seconds: 86_400 });
    expect(responseSchemas.Schedule.validate(res.body).error).toBeUndefined();
    const changed = await api.request.patch(`/schedules/${res.body.id}`).set(as(alice)).send({ overlap: "buffer_one", catch_up_window_seconds: 3600 });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ overlap: "buffer_one", catch_up: "all", catch_up_window_seconds: 3600 });
    expect((await api.request.get(`/schedules/${res.body.id}`).set(as(alice))).body).toMatchObject({ overlap: "buffer_one", catch_up_window_seconds: 3600 });
    const none = await api.request.patch(`/schedules/${res.body.id}`).set(as(alice)).send({ catch_up: "none" });
    expect(none.body).toMatchObject({ catch_up: "none", catch_up_window_seconds: null });
  });

  it("refuses an unknown overlap or catch_up, and a window without catch_up all, naming the field", async () => {
    for (const [body, path] of [
      [{ overlap: "queue" }, "overlap"],
      [{ catch_up: "some" }, "catch_up"],
      [{ catch_up: "all", catch_up_window_seconds: 5 }, "catch_up_window_seconds"],
      [{ catch_up: "latest", catch_up_window_seconds: 3600 }, "catch_up_window_seconds"],
    ] as const) {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual([path]);
    }
  });

  it("shows the next five run times in the schedule's zone with its offset, none while paused", async () => {
    const res = await create({ cron: "30 9 * * *", timezone: "Europe/Berlin" });
    const runs = res.body.next_runs as string[];
    expect(runs).toHaveLength(5);
    for (const run of runs) expect(run).toMatch(/^\d{4}-\d{2}-\d{2}T09:30:00\.000\+0[12]:00$/);
    expect(new Date(runs[0]!).toISOString()).toBe(res.body.next_run_at);
    const paused = await api.request.patch(`/schedules/${res.body.id}`).set(as(alice)).send({ paused: true });
    expect(paused.body.next_runs).toEqual([]);
  });
});

describe("POST /schedules/{id}/backfill", () => {
  it("creates a day of an hourly schedule as 24 jobs once, however often and however concurrently it is sent", async () => {
    const schedule = (await create({})).body as { id: string };
    const day = { from: "2026-11-20T00:00:00Z", to: "2026-11-20T23:59:59Z" };
    const first = await api.request.post(`/schedules/${schedule.id}/backfill`).set(as(alice)).send(day);
    expect(first.status).toBe(200);
    expect(responseSchemas.ScheduleBackfill.validate(first.body).error).toBeUndefined();
    expect(first.body.created).toBe(24);
    expect(first.body.runs).toHaveLength(24);
    expect(first.body.runs[0]).toEqual({ tick: "2026-11-20T00:00:00.000Z", job_id: expect.any(String), created: true });
    expect(first.body.runs[23].tick).toBe("2026-11-20T23:00:00.000Z");
    // Again, five at once: nothing new, the same jobs.
    const again = await Promise.all(Array.from({ length: 5 }, () => api.request.post(`/schedules/${schedule.id}/backfill`).set(as(alice)).send(day)));
    for (const res of again) {
      expect(res.status).toBe(200);
      expect(res.body.created).toBe(0);
      expect(res.body.runs.map((r: { job_id: string }) => r.job_id)).toEqual(first.body.runs.map((r: { job_id: string }) => r.job_id));
    }
    expect(await jobsOf(schedule.id)).toBe(24);
    // An overlapping wider range makes only the ticks it adds.
    const wider = await api.request
      .post(`/schedules/${schedule.id}/backfill`)
      .set(as(alice))
      .send({ from: "2026-11-20T22:00:00Z", to: "2026-11-21T01:00:00Z" });
    expect(wider.body.created).toBe(2);
    expect(await jobsOf(schedule.id)).toBe(26);
    const job = await api.request.get(`/jobs/${first.body.runs[5].job_id}`).set(as(alice));
    expect(job.body).toMatchObject({ type: "webhook", schedule_id: schedule.id, status: "pending" });
    // One audit entry per backfill that made runs.
    const audit = await api.request.get("/audit-log?action=schedule.backfill").set(as(alice));
    const entries = (audit.body.items ?? audit.body) as { details: { created: number } }[];
    expect(entries.map((e) => e.details.created).sort()).toEqual([2, 24]);
  });

  it("refuses a future range, a reversed one and one of more than 1,000 runs; another org's schedule is 404", async () => {
    const schedule = (await create({ cron: "* * * * *" })).body as { id: string };
    const send = (body: object, member = alice) => api.request.post(`/schedules/${schedule.id}/backfill`).set(as(member)).send(body);
    const future = new Date(api.clock.now().getTime() + 3_600_000).toISOString();
    for (const body of [
      { from: "2026-11-20T00:00:00Z", to: future },
      { from: "2026-11-20T01:00:00Z", to: "2026-11-20T00:00:00Z" },
      { from: "2026-11-19T00:00:00Z", to: "2026-11-20T00:00:00Z" },
    ]) {
      const res = await send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: "validation_failed", details: [expect.objectContaining({ path: "to" })] });
    }
    expect((await send({ from: "2026-11-20T00:00:00Z", to: "2026-11-20T00:10:00Z" }, bob)).status).toBe(404);
    expect(await jobsOf(schedule.id)).toBe(0);
  });
});
