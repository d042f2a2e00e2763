// The schedule endpoints alone (docs/reference/time.md#time-priority-and-fairness; no worker): the fields, each refusal of bad input in docs/reference/http.md#errors's shape,
// next_run_at as edits change it, access as for jobs, and another organization's schedules out of reach (404).
import { nextTick } from "@conveyor/contracts";
import { responseSchemas } from "../src/declarations/responses";
import { expectError } from "./support/expect-error";
import { addMember, createApiKey, createOrg, createSecondOrg, startTestApi, type SecondOrg, type TestApi, type TestMember } from "@conveyor/api/testing";

let api: TestApi;
let alice: TestMember; // owner of the org under test
let aliceKey: string;
let bob: TestMember; // owner of another org, whose schedule must stay out of reach
let bobSchedule: Schedule;
let secondOrg: SecondOrg;

type Schedule = {
  id: string;
  name: string;
  cron: string;
  timezone: string;
  job: { type: string; payload: Record<string, unknown>; max_retries: number; priority: number };
  paused: boolean;
  next_run_at: string | null;
  last_run_at: string | null;
  created_at: string;
};

const as = (m: TestMember) => ({ Authorization: `Bearer ${m.token}` });
const email = { type: "send_email", payload: { to: "ops@example.com", subject: "Nightly", body: "Report attached." } };
const nightly = { name: "Nightly report", cron: "30 2 * * *", timezone: "Europe/Berlin", job: email };

async function create(body: object, headers: Record<string, string> = as(alice)) {
  return api.request.post("/schedules").set(headers).send(body);
}
async function created(body: object = nightly, headers: Record<string, string> = as(alice)): Promise<Schedule> {
  const res = await create(body, headers);
  if (res.status !== 201) throw new Error(`POST /schedules: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Schedule;
}
const patch = (id: string, body: object, headers: Record<string, string> = as(alice)) => api.request.patch(`/schedules/${id}`).set(headers).send(body);
const row = async (id: string) => (await api.database.db.pool.query("SELECT * FROM schedules WHERE id = $1", [id])).rows[0];
const expectedNext = (cron: string, timezone: string) => nextTick({ cron, timezone }, api.clock.now())!.toISOString();

beforeAll(async () => {
  api = await startTestApi();
  alice = await createOrg(api.database.db, api.deps.config);
  aliceKey = (await createApiKey(api.database.db, alice)).key;
  bob = await createOrg(api.database.db, api.deps.config);
  bobSchedule = await created({ ...nightly, name: "Bob's" }, as(bob));
  secondOrg = await createSecondOrg(api.database.db);
  await secondOrg.watch(api.get);
});
afterAll(() => api.close());
afterEach(async () => {
  // Bob's schedule is exactly as he made it, whatever Alice tried; the second org's jobs are untouched.
  expect((await api.request.get(`/schedules/${bobSchedule.id}`).set(as(bob))).body).toEqual(bobSchedule);
  await secondOrg.expectUntouched(as(alice));
});

describe("POST /schedules", () => {
  it("answers 201 with the schedule, its first tick in next_run_at, and the job template with its defaults", async () => {
    const res = await create({ ...nightly, job: { type: "compress_image", payload: { url: "https://example.com/a.png", width: 300 } } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: "Nightly report",
      cron: "30 2 * * *",
      timezone: "Europe/Berlin",
      job: { type: "compress_image", payload: { url: "https://example.com/a.png", width: 300, quality: 80 }, max_retries: 0, priority: 5 },
      paused: false,
      next_run_at: expectedNext("30 2 * * *", "Europe/Berlin"),
      last_run_at: null,
      overlap: "allow",
      catch_up: "latest",
      catch_up_window_seconds: null,
      next_runs: expect.arrayContaining([expect.stringMatching(/T02:30:00\.000\+0[12]:00$/)]),
      created_at: api.clock.now().toISOString(),
    });
    expect(Object.keys(res.body)).toEqual([
      "id",
      "name",
      "cron",
      "timezone",
      "job",
      "paused",
      "next_run_at",
      "last_run_at",
      "overlap",
      "catch_up",
      "catch_up_window_seconds",
      "next_runs",
      "created_at",
    ]);
    expect(responseSchemas.Schedule.validate(res.body).error).toBeUndefined();
    expect(await row(res.body.id)).toMatchObject({ org_id: alice.orgId, created_by: alice.userId, paused: false });
  });

  it("reads the cron in UTC by default, keeps max_retries and priority, and stores the cron with single spaces", async () => {
    const schedule = await created({ name: "Every 5", cron: " */5   *  * * * ", job: { ...email, max_retries: 3, priority: 9 } });
    expect(schedule).toMatchObject({
      cron: "*/5 * * * *",
      timezone: "UTC",
      job: { max_retries: 3, priority: 9 },
      next_run_at: expectedNext("*/5 * * * *", "UTC"),
    });
  });

  it("creates a paused schedule with no next_run_at", async () => {
    expect(await created({ ...nightly, paused: true })).toMatchObject({ paused: true, next_run_at: null });
  });

  it("accepts an API key and every role, as the job endpoints do", async () => {
    const admin = await addMember(api.database.db, api.deps.config, alice.orgId, "admin");
    const member = await addMember(api.database.db, api.deps.config, alice.orgId, "member");
    for (const headers of [{ "X-API-Key": aliceKey }, as(admin), as(member)]) {
      const schedule = await created(nightly, headers);
      expect((await api.request.get(`/schedules/${schedule.id}`).set(headers)).status).toBe(200);
      expect((await patch(schedule.id, { name: "renamed" }, headers)).status).toBe(200);
      expect((await api.request.delete(`/schedules/${schedule.id}`).set(headers)).status).toBe(204);
    }
    expectError(await create(nightly, {}), 401, "unauthorized");
    expectError(await api.request.get("/schedules"), 401, "unauthorized");
  });

  describe("refuses bad input with 400 in docs/reference/http.md#errors's shape, storing nothing", () => {
    const cases: [string, object, string, { path: string; message: string | RegExp }[]][] = [
      [
        "a cron with six fields (seconds)",
        { ...nightly, cron: "0 30 2 * * *" },
        "validation_failed",
        [{ path: "cron", message: "has 6 fields; a schedule takes five (minute hour day-of-month month day-of-week), without seconds or years" }],
      ],
      ["a minute of 60", { ...nightly, cron: "60 * * * *" }, "validation_failed", [{ path: "cron", message: "has 60 in the minute field, which takes 0-59" }]],
      ["a cron that never matches", { ...nightly, cron: "0 0 30 2 *" }, "validation_failed", [{ path: "cron", message: /^never matches a date/ }]],
      [
        "an unknown time zone",
        { ...nightly, timezone: "Mars/Olympus_Mons" },
        "validation_failed",
        [{ path: "timezone", message: "is not an IANA time zone name, such as UTC, Europe/Berlin or America/New_York" }],
      ],
      ["a UTC offset for a zone", { ...nightly, timezone: "+02:00" }, "validation_failed", [{ path: "timezone", message: /^is not an IANA time zone name/ }]],
      [
        "a bad cron and a bad zone at once",
        { ...nightly, cron: "* * *", timezone: "Nowhere" },
        "validation_failed",
        [
          { path: "cron", message: /^has 3 fields/ },
          { path: "timezone", message: /^is not an IANA/ },
        ],
      ],
      [
        "a job whose payload fails its type's schema",
        { ...nightly, job: { type: "send_email", payload: { to: "not an address", subject: "x" } } },
        "validation_failed",
        [
          { path: "job.payload.to", message: expect.any(String) },
          { path: "job.payload.body", message: expect.any(String) },
        ] as never,
      ],
      [
        "an unknown job type",
        { ...nightly, job: { type: "no_such_type", payload: {} } },
        "unknown_job_type",
        [{ path: "job.type", message: "is not a known job type" }],
      ],
      [
        "a job with run_at",
        { ...nightly, job: { ...email, run_at: "2030-01-01T00:00:00Z" } },
        "validation_failed",
        [{ path: "job.run_at", message: expect.any(String) }] as never,
      ],
      [
        "a priority of 11",
        { ...nightly, job: { ...email, priority: 11 } },
        "validation_failed",
        [{ path: "job.priority", message: expect.any(String) }] as never,
      ],
      ["no job", { name: "x", cron: "* * * * *" }, "validation_failed", [{ path: "job", message: expect.any(String) }] as never],
      ["an empty name", { ...nightly, name: "  " }, "validation_failed", [{ path: "name", message: expect.any(String) }] as never],
      ["a cron that is not a string", { ...nightly, cron: 5 }, "validation_failed", [{ path: "cron", message: expect.any(String) }] as never],
      [
        "an unknown field",
        { ...nightly, org_id: "0193a5c4-5555-7c1d-9f3a-2b8e4d6f1a01" },
        "validation_failed",
        [{ path: "org_id", message: expect.any(String) }] as never,
      ],
    ];
    it.each(cases)("%s", async (_what, body, code, details) => {
      const before = await api.database.db.pool.query("SELECT count(*)::int AS n FROM schedules");
      const res = await create(body);
      expectError(res, 400, code as "validation_failed");
      expect(res.body.error.details).toEqual(
        details.map((d) => ({ path: d.path, message: d.message instanceof RegExp ? expect.stringMatching(d.message) : d.message })),
      );
      if (code === "unknown_job_type") expect(res.body.error.message).toMatch(/Known types: send_email, .*webhook/);
      expect((await api.database.db.pool.query("SELECT count(*)::int AS n FROM schedules")).rows[0].n).toBe(before.rows[0].n);
    });
  });
});

describe("GET /schedules", () => {
  it("lists the org's schedules newest first, none of another org's, and pages with limit and a Link header", async () => {
    const org = await createOrg(api.database.db, api.deps.config);
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push(await created({ ...nightly, name: `n${i}` }, as(org)));
    const all = await api.request.get("/schedules").set(as(org));
    expect(all.status).toBe(200);
    expect(all.body).toEqual([...mine].reverse());
    for (const item of all.body) expect(responseSchemas.Schedule.validate(item).error).toBeUndefined();

    const first = await api.request.get("/schedules?limit=2").set(as(org));
    expect(first.body.map((s: Schedule) => s.name)).toEqual(["n2", "n1"]);
    const link = /^<[^>]*\/schedules\?(limit=2&cursor=[^>]+)>; rel="next"$/.exec(first.headers.link ?? "");
    expect(link).not.toBeNull();
    const second = await api.request.get(`/schedules?${link![1]}`).set(as(org));
    expect(second.body.map((s: Schedule) => s.name)).toEqual(["n0"]);
    expect(second.headers.link).toBeUndefined();

    const aliceList = (await api.request.get("/schedules").set(as(alice))).body as Schedule[];
    expect(aliceList.map((s) => s.id)).not.toContain(bobSchedule.id);
    expect(aliceList.map((s) => s.id)).not.toContain(mine[0]!.id);
  });

  it("refuses a cursor without limit, a cursor it did not issue and a limit out of range", async () => {
    expectError(await api.request.get("/schedules?cursor=abc").set(as(alice)), 400, "validation_failed");
    expectError(await api.request.get("/schedules?limit=2&cursor=bm90LWFuLWlk").set(as(alice)), 400, "validation_failed");
    expectError(await api.request.get("/schedules?limit=0").set(as(alice)), 400, "validation_failed");
    expectError(await api.request.get("/schedules?status=done").set(as(alice)), 400, "validation_failed");
  });
});

describe("GET /schedules/{id}", () => {
  it("returns the org's schedule; another org's, an unknown and a malformed id are 404", async () => {
    const schedule = await created();
    expect((await api.request.get(`/schedules/${schedule.id}`).set(as(alice))).body).toEqual(schedule);
    expectError(await api.request.get(`/schedules/${bobSchedule.id}`).set(as(alice)), 404, "not_found");
    expectError(await api.request.get(`/schedules/${bobSchedule.id}`).set("X-API-Key", aliceKey), 404, "not_found");
    expectError(await api.request.get("/schedules/0193a5c4-5555-7c1d-9f3a-2b8e4d6f1a01").set(as(alice)), 404, "not_found");
    expectError(await api.request.get("/schedules/not-a-uuid").set(as(alice)), 404, "not_found");
  });
});

describe("PATCH /schedules/{id}", () => {
  it("pausing clears next_run_at; resuming recomputes it from now, not from before the pause", async () => {
    const schedule = await created({ ...nightly, cron: "0 * * * *" });
    const paused = await patch(schedule.id, { paused: true });
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ ...schedule, paused: true, next_run_at: null, next_runs: [] });
    expect((await row(schedule.id)).next_run_at).toBeNull();

    // (The test clock also decides token expiry: every advance in this file stays well inside JWT_TTL.)
    api.clock.advance(2 * 60 * 60 * 1000);
    const resumed = await patch(schedule.id, { paused: false });
    expect(resumed.body).toMatchObject({ paused: false, next_run_at: expectedNext("0 * * * *", "Europe/Berlin") });
    expect(resumed.body.next_run_at).not.toBe(schedule.next_run_at);
  });

  it("a new cron or time zone recomputes next_run_at; the name or the job alone keep it", async () => {
    const schedule = await created({ ...nightly, cron: "0 * * * *" });
    api.clock.advance(2 * 60 * 60 * 1000);
    expect((await patch(schedule.id, { name: "Renamed" })).body).toMatchObject({ name: "Renamed", next_run_at: schedule.next_run_at });
    expect((await patch(schedule.id, { job: { ...email, priority: 2 } })).body).toMatchObject({
      job: { ...email, max_retries: 0, priority: 2 },
      next_run_at: schedule.next_run_at,
    });
    // The same cron, written differently, is no change.
    expect((await patch(schedule.id, { cron: "0  * * * *" })).body).toMatchObject({ cron: "0 * * * *", next_run_at: schedule.next_run_at });

    const moved = await patch(schedule.id, { cron: "0 6 * * 1" });
    expect(moved.body).toMatchObject({ cron: "0 6 * * 1", next_run_at: expectedNext("0 6 * * 1", "Europe/Berlin") });
    const rezoned = await patch(schedule.id, { timezone: "America/New_York" });
    expect(rezoned.body).toMatchObject({ timezone: "America/New_York", next_run_at: expectedNext("0 6 * * 1", "America/New_York") });
    expect(rezoned.body.next_run_at).not.toBe(moved.body.next_run_at);
    expect(responseSchemas.Schedule.validate(rezoned.body).error).toBeUndefined();
  });

  it("never schedules a tick at or before the last one that ran, even when the API's clock is behind", async () => {
    const schedule = await created({ ...nightly, cron: "* * * * *", timezone: "UTC" });
    const lastRun = new Date(api.clock.now().getTime() + 10 * 60_000);
    lastRun.setUTCSeconds(0, 0);
    await api.database.db.pool.query("UPDATE schedules SET last_run_at = $2 WHERE id = $1", [schedule.id, lastRun]);
    const res = await patch(schedule.id, { cron: "*/2 * * * *" });
    expect(new Date(res.body.next_run_at).getTime()).toBeGreaterThan(lastRun.getTime());
    expect(res.body.last_run_at).toBe(lastRun.toISOString());
  });

  it("checks a new job template like POST /jobs and a new cron or zone, changing nothing when refused", async () => {
    const schedule = await created();
    const refusals: [object, string, string][] = [
      [{ job: { type: "send_email", payload: { to: "nobody" } } }, "validation_failed", "job.payload.to"],
      [{ job: { type: "no_such_type", payload: {} } }, "unknown_job_type", "job.type"],
      [{ cron: "* * * * * *" }, "validation_failed", "cron"],
      [{ cron: "60 * * * *", name: "would be renamed" }, "validation_failed", "cron"],
      [{ timezone: "Europe/Atlantis" }, "validation_failed", "timezone"],
      [{ paused: "yes" }, "validation_failed", "paused"],
      [{ next_run_at: "2020-01-01T00:00:00.000Z" }, "validation_failed", "next_run_at"],
      [{}, "validation_failed", "body"],
    ];
    for (const [body, code, path] of refusals) {
      const res = await patch(schedule.id, body);
      expectError(res, 400, code as "validation_failed");
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    expect((await api.request.get(`/schedules/${schedule.id}`).set(as(alice))).body).toEqual(schedule);
  });

  it("is 404 for another org's schedule, an unknown id and a malformed one", async () => {
    expectError(await patch(bobSchedule.id, { paused: true }), 404, "not_found");
    expectError(await patch(bobSchedule.id, { paused: true }, { "X-API-Key": aliceKey }), 404, "not_found");
    expectError(await patch("0193a5c4-5555-7c1d-9f3a-2b8e4d6f1a01", { paused: true }), 404, "not_found");
    expectError(await patch("nope", { paused: true }), 404, "not_found");
  });
});

describe("DELETE /schedules/{id}", () => {
  it("answers 204 and the schedule is gone; the jobs it made keep their schedule_id", async () => {
    const schedule = await created();
    const jobId = "0193a5c4-6666-7c1d-9f3a-2b8e4d6f1a01";
    await api.database.db.pool.query(
      "INSERT INTO jobs (id, org_id, type, status, payload, max_retries, schedule_id) VALUES ($1, $2, 'send_email', 'done', '{}', 0, $3)",
      [jobId, alice.orgId, schedule.id],
    );
    const res = await api.request.delete(`/schedules/${schedule.id}`).set(as(alice));
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expectError(await api.request.get(`/schedules/${schedule.id}`).set(as(alice)), 404, "not_found");
    expectError(await api.request.delete(`/schedules/${schedule.id}`).set(as(alice)), 404, "not_found");
    expect((await api.request.get(`/jobs/${jobId}`).set(as(alice))).body).toMatchObject({ id: jobId, schedule_id: schedule.id });
  });

  it("is 404 for another org's schedule, which stays", async () => {
    expectError(await api.request.delete(`/schedules/${bobSchedule.id}`).set(as(alice)), 404, "not_found");
    expectError(await api.request.delete(`/schedules/${bobSchedule.id}`).set("X-API-Key", aliceKey), 404, "not_found");
    expect(await row(bobSchedule.id)).toBeTruthy();
  });
});
