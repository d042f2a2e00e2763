// GET /jobs/stats (the console's overview): counts per minute over the hour and per 15 minutes over the day, by type,
// the failure rate and the queue, on a small data set whose every number is known — checked at several moments, so
// the minutes counted once into job_stats and the ones counted from the jobs on each request add up the same. Internal
// jobs and other organizations' jobs never count.
import { randomBytes } from "node:crypto";
import type { JobStatus } from "@conveyor/contracts";
import { uuidFloor } from "@conveyor/db";
import { responseSchemas } from "../src/declarations/responses";
import { expectError } from "./support/expect-error";
import { createApiKey, createOrg, createSecondOrg, startTestApi, type SecondOrg, type TestApi, type TestMember } from "@conveyor/api/testing";

let api: TestApi;
let second: SecondOrg;
beforeAll(async () => {
  api = await startTestApi({ API_RATE_LIMIT_PER_SEC: "0" });
  second = await createSecondOrg(api.database.db);
  await second.watch(api.get);
});
afterAll(() => api.close());

type Seeded = {
  orgId: string;
  type: string;
  status: JobStatus;
  createdAt: number;
  finishedAt?: number;
  /** Its row in the dispatcher's queue, for live jobs. */
  queue?: { dueAt: number; dispatched: boolean };
};

const MINUTE = 60_000;
const WINDOWS = { hour: { bucketMs: MINUTE, buckets: 60 }, day: { bucketMs: 15 * MINUTE, buckets: 96 } } as const;
type Window = keyof typeof WINDOWS;
type Counts = { created: number; done: number; failed: number; cancelled: number };
const zero = (): Counts => ({ created: 0, done: 0, failed: 0, cancelled: 0 });

/** A UUID v7 of the millisecond `ms`, as the API would have made for a job created then. */
const idAt = (ms: number) => {
  const random = randomBytes(10).toString("hex");
  return `${uuidFloor(ms).slice(0, 14)}7${random.slice(0, 3)}-8${random.slice(3, 6)}-${random.slice(6, 18)}`;
};

async function seed(jobs: Seeded[]): Promise<void> {
  for (const job of jobs) {
    const id = idAt(job.createdAt);
    await api.database.db.pool.query(
      `INSERT INTO jobs (id, org_id, type, status, payload, max_retries, created_at, updated_at, finished_at)
       VALUES ($1, $2, $3, $4, '{}', 0, $5, $5, $6)`,
      [id, job.orgId, job.type, job.status, new Date(job.createdAt), job.finishedAt === undefined ? null : new Date(job.finishedAt)],
    );
    if (job.queue) {
      await api.database.db.pool.query("INSERT INTO job_queue (job_id, type, org_id, priority, due_at, dispatched_at) VALUES ($1, $2, $3, 5, $4, $5)", [
        id,
        job.type,
        job.orgId,
        new Date(job.queue.dueAt),
        job.queue.dispatched ? new Date(job.createdAt) : null,
      ]);
    }
  }
}

/** What GET /jobs/stats must answer for `orgId` at `now`, worked out from the seeded jobs alone. */
function expected(jobs: Seeded[], orgId: string, now: number, window: Window) {
  const { bucketMs, buckets } = WINDOWS[window];
  const start = Math.floor(now / bucketMs) * bucketMs - (buckets - 1) * bucketMs;
  const series = Array.from({ length: buckets }, (_, i) => ({
    start: new Date(start + i * bucketMs).toISOString(),
    ...zero(),
    by_type: {} as Record<string, Counts>,
  }));
  const add = (at: number, type: string, key: keyof Counts) => {
    if (at < start) return;
    const bucket = series[Math.min(Math.floor((at - start) / bucketMs), buckets - 1)]!;
    bucket[key] += 1;
    (bucket.by_type[type] ??= zero())[key] += 1;
  };
  const mine = jobs.filter((j) => j.orgId === orgId && !j.type.startsWith("_"));
  for (const job of mine) {
    add(job.createdAt, job.type, "created");
    if (job.finishedAt !== undefined) add(job.finishedAt, job.type, job.status as keyof Counts);
  }
  const done = series.reduce((n, b) => n + b.done, 0);
  const failed = series.reduce((n, b) => n + b.failed, 0);
  const live = mine.filter((j) => j.status === "pending" || j.status === "processing");
  const delayed = live.filter((j) => j.status === "pending" && j.queue && !j.queue.dispatched && j.queue.dueAt > now).length;
  return {
    window,
    bucket_seconds: bucketMs / 1000,
    buckets: series,
    failure_rate: done + failed ? failed / (done + failed) : null,
    queue: {
      pending: live.filter((j) => j.status === "pending").length,
      processing: live.filter((j) => j.status === "processing").length,
      // Every pending job not delayed: due, handed over and about to start, or waiting for other jobs (no queue row).
      waiting_due: live.filter((j) => j.status === "pending").length - delayed,
      delayed,
    },
  };
}

async function stats(headers: Record<string, string>, window?: Window) {
  const res = await api.request.get(`/jobs/stats${window ? `?window=${window}` : ""}`).set(headers);
  if (res.status !== 200) throw new Error(`GET /jobs/stats: ${res.status} ${res.text}`);
  expect(responseSchemas.JobStats.validate(res.body).error).toBeUndefined();
  return res.body;
}

/** A data set around `now` for `a` (and a little for `b`), covering every way a job counts or does not. */
function dataSet(a: string, b: string, now: number): Seeded[] {
  const hourStart = Math.floor(now / MINUTE) * MINUTE - 59 * MINUTE;
  return [
    { orgId: a, type: "send_email", status: "done", createdAt: hourStart + 30_000, finishedAt: hourStart + 40_000 },
    { orgId: a, type: "send_email", status: "failed", createdAt: hourStart + 10 * MINUTE + 5_000, finishedAt: hourStart + 12 * MINUTE },
    { orgId: a, type: "webhook", status: "cancelled", createdAt: hourStart + 10 * MINUTE + 30_000, finishedAt: hourStart + 10 * MINUTE + 50_000 },
    // Created within the last seconds, finished 2 s "in the future" (a database clock a little ahead): the last bucket.
    { orgId: a, type: "webhook", status: "done", createdAt: now - 20_000, finishedAt: now + 2_000 },
    // Finished inside the hour, created before it.
    { orgId: a, type: "send_email", status: "done", createdAt: hourStart - 5 * MINUTE, finishedAt: hourStart + MINUTE },
    // Inside the day only, and outside both.
    { orgId: a, type: "send_email", status: "done", createdAt: hourStart - 30 * MINUTE, finishedAt: hourStart - 29 * MINUTE },
    { orgId: a, type: "send_email", status: "failed", createdAt: now - 25 * 60 * MINUTE, finishedAt: now - 25 * 60 * MINUTE + MINUTE },
    // The queue: delayed, waiting and due, processing, handed to a worker but not started.
    { orgId: a, type: "send_email", status: "pending", createdAt: now - 5 * MINUTE, queue: { dueAt: now + 60 * MINUTE, dispatched: false } },
    { orgId: a, type: "send_email", status: "pending", createdAt: now - 2 * MINUTE, queue: { dueAt: now - 2 * MINUTE, dispatched: false } },
    { orgId: a, type: "webhook", status: "processing", createdAt: now - 90_000, queue: { dueAt: now - 90_000, dispatched: true } },
    { orgId: a, type: "webhook", status: "pending", createdAt: now - MINUTE, queue: { dueAt: now - MINUTE, dispatched: true } },
    // Waiting for another job: pending, with no queue row yet (issue 23 #10: Pending = Due now + Delayed).
    { orgId: a, type: "send_email", status: "pending", createdAt: now - MINUTE },
    // Internal jobs never count, in the charts or the queue.
    { orgId: a, type: "_webhook_delivery", status: "done", createdAt: hourStart + 30_000, finishedAt: hourStart + 40_000 },
    { orgId: a, type: "_webhook_delivery", status: "pending", createdAt: now - MINUTE, queue: { dueAt: now - MINUTE, dispatched: false } },
    // Another organization, in the same minutes.
    { orgId: b, type: "send_email", status: "failed", createdAt: hourStart + 30_000, finishedAt: hourStart + 50_000 },
    { orgId: b, type: "chat_notify", status: "pending", createdAt: now - MINUTE, queue: { dueAt: now - MINUTE, dispatched: false } },
  ];
}

describe("GET /jobs/stats", () => {
  let a: TestMember;
  let b: TestMember;
  let jobs: Seeded[];
  let start: number;
  beforeAll(async () => {
    a = await createOrg(api.database.db, api.deps.config);
    b = await createOrg(api.database.db, api.deps.config);
    start = api.clock.now().getTime();
    jobs = dataSet(a.orgId, b.orgId, start);
    await seed(jobs);
  });
  const bearerOf = (m: TestMember) => ({ Authorization: `Bearer ${m.token}` });

  it("counts the last hour per minute: created, finished by status and by type, the failure rate and the queue", async () => {
    const body = await stats(bearerOf(a), "hour");
    expect(body).toEqual(expected(jobs, a.orgId, start, "hour"));
    // The same numbers, spelled out.
    expect(body.buckets).toHaveLength(60);
    expect(body.bucket_seconds).toBe(60);
    expect(body.buckets[59].start).toBe(new Date(Math.floor(start / MINUTE) * MINUTE).toISOString());
    expect(body.buckets[0]).toMatchObject({
      created: 1,
      done: 1,
      failed: 0,
      cancelled: 0,
      by_type: { send_email: { created: 1, done: 1, failed: 0, cancelled: 0 } },
    });
    expect(body.buckets[1]).toMatchObject({ created: 0, done: 1 });
    expect(body.buckets[10]).toEqual({
      start: body.buckets[10].start,
      created: 2,
      done: 0,
      failed: 0,
      cancelled: 1,
      by_type: { send_email: { created: 1, done: 0, failed: 0, cancelled: 0 }, webhook: { created: 1, done: 0, failed: 0, cancelled: 1 } },
    });
    expect(body.buckets[12]).toMatchObject({ failed: 1, by_type: { send_email: { failed: 1 } } });
    expect(body.buckets.reduce((n: number, x: Counts) => n + x.created, 0)).toBe(9);
    expect(body.failure_rate).toBe(0.25);
    expect(body.queue).toEqual({ pending: 4, processing: 1, waiting_due: 3, delayed: 1 });
    expect(JSON.stringify(body)).not.toContain("_webhook_delivery");
  });

  it("counts the last day per 15 minutes", async () => {
    const body = await stats(bearerOf(a), "day");
    expect(body).toEqual(expected(jobs, a.orgId, start, "day"));
    expect(body.buckets).toHaveLength(96);
    expect(body.bucket_seconds).toBe(900);
    expect(body.failure_rate).toBe(0.2);
    expect(body.buckets.reduce((n: number, x: Counts) => n + x.created, 0)).toBe(11);
  });

  it("keeps every number right as time passes and minutes are counted once into job_stats", async () => {
    try {
      for (const step of [0, 45_000, 7 * MINUTE, 16 * MINUTE, 3 * 60 * MINUTE]) {
        api.clock.advance(step);
        const now = api.clock.now().getTime();
        for (const window of ["hour", "day"] as const) {
          expect({ step, window, body: await stats(bearerOf(a), window) }).toEqual({ step, window, body: expected(jobs, a.orgId, now, window) });
        }
      }
      // Counted once: job_stats holds this organization's minutes (never an internal type), and how far it got.
      const { rows } = await api.database.db.pool.query("SELECT DISTINCT type FROM job_stats WHERE org_id = $1 ORDER BY type", [a.orgId]);
      expect(rows.map((r) => r.type)).toEqual(["send_email", "webhook"]);
      const progress = await api.database.db.pool.query("SELECT rolled_until FROM job_stats_progress WHERE org_id = $1", [a.orgId]);
      expect(api.clock.now().getTime() - progress.rows[0].rolled_until.getTime()).toBeGreaterThanOrEqual(30_000);
      expect(api.clock.now().getTime() - progress.rows[0].rolled_until.getTime()).toBeLessThan(40_000);
    } finally {
      api.clock.advance(start - api.clock.now().getTime());
    }
  });

  it("counts a job created through the API at once", async () => {
    const c = await createOrg(api.database.db, api.deps.config);
    expect((await stats(bearerOf(c), "hour")).buckets[59].created).toBe(0);
    const res = await api.request
      .post("/jobs")
      .set(bearerOf(c))
      .send({ type: "chat_notify", payload: { channel: "#x", text: "y" } });
    expect(res.status).toBe(202);
    const body = await stats(bearerOf(c), "hour");
    expect(body.buckets[59]).toMatchObject({ created: 1, by_type: { chat_notify: { created: 1, done: 0, failed: 0, cancelled: 0 } } });
    expect(body.queue).toEqual({ pending: 1, processing: 0, waiting_due: 1, delayed: 0 });
  });

  it("shows each organization only its own jobs, for any job credential", async () => {
    const { key } = await createApiKey(api.database.db, b);
    expect(await stats({ "X-API-Key": key }, "hour")).toEqual(expected(jobs, b.orgId, start, "hour"));
    expect((await stats({ "X-API-Key": key }, "hour")).queue).toEqual({ pending: 1, processing: 0, waiting_due: 1, delayed: 0 });
    // The second organization's one job (created a minute ago) and nothing of anyone else's.
    const theirs = await stats({ "X-API-Key": second.apiKey }, "day");
    expect(theirs.buckets.reduce((n: number, x: Counts) => n + x.created, 0)).toBe(1);
    expect(theirs.queue).toEqual({ pending: 0, processing: 0, waiting_due: 0, delayed: 0 });
    await second.expectUntouched({ "X-API-Key": key });
  });

  it("defaults to the hour, refuses another window or an unknown parameter with 400, and needs a credential", async () => {
    expect((await stats(bearerOf(a))).window).toBe("hour");
    for (const query of ["window=week", "window=", "window=hour&org_id=x"]) {
      expectError(await api.request.get(`/jobs/stats?${query}`).set(bearerOf(a)), 400, "validation_failed");
    }
    expectError(await api.request.get("/jobs/stats"), 401, "unauthorized");
    // Not taken for a job id.
    expectError(await api.request.post("/jobs/stats").set(bearerOf(a)), 405, "method_not_allowed");
  });
});
