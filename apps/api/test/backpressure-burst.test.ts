// Backpressure under a burst (docs/reference/tenants.md#usage-quotas-and-backpressure, issue 45): the due backlog is read in the background about once a second, so
// admission counts the jobs each batch adds in this process until the next read. Parallel batches from one
// organization then overshoot BACKPRESSURE_DUE_MAX by at most one batch (one process here), and a quiet organization is
// still served. No worker runs, so every accepted job stays due.
import pg from "pg";
import { createApiKey, createOrg, createSecondOrg, startTestApi, type SecondOrg, type TestApi, type TestMember } from "@conveyor/api/testing";
import { Backpressure } from "../src/services/infrastructure/admission/backpressure";

const MAX = 100;
const BATCH = 20;

let api: TestApi;
let flood: TestMember;
let quiet: TestMember;
let other: SecondOrg;
let otherKey: string;

beforeAll(async () => {
  api = await startTestApi({ BACKPRESSURE_DUE_MAX: String(MAX), API_RATE_LIMIT_PER_SEC: "0" });
  flood = await createOrg(api.database.db, api.deps.config);
  quiet = await createOrg(api.database.db, api.deps.config);
  other = await createSecondOrg(api.database.db);
  await other.watch(api.get);
  otherKey = (await createApiKey(api.database.db, await createOrg(api.database.db, api.deps.config))).key;
}, 60_000);
afterEach(() => other.expectUntouched({ "X-API-Key": otherKey }));
afterAll(() => api.close());

const as = (m: TestMember) => ({ Authorization: `Bearer ${m.token}` });
const jobs = (n: number) => Array.from({ length: n }, (_, i) => ({ type: "webhook", payload: { url: `https://hooks.example.com/${i}`, payload: { i } } }));
/** Posts a batch of `n` jobs for `org` (202) and answers their ids. */
const postBatch = async (org: TestMember, n: number): Promise<string[]> => {
  const res = await api.request
    .post("/jobs/batch")
    .set(as(org))
    .send({ jobs: jobs(n) });
  expect(res.status).toBe(202);
  return (res.body as { id: string }[]).map((j) => j.id);
};
const dueOf = async (orgId: string) =>
  (await api.database.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE org_id = $1", [orgId])).rows[0]!.n;

it("refuses parallel batches past BACKPRESSURE_DUE_MAX before the next background read, overshooting by at most one batch", async () => {
  // Twenty batches of 20 at once, inside one background read: 400 jobs asked for, a limit of 100.
  const answers = await Promise.all(
    Array.from({ length: 20 }, () =>
      api.request
        .post("/jobs/batch")
        .set(as(flood))
        .send({ jobs: jobs(BATCH) }),
    ),
  );
  const accepted = answers.filter((a) => a.status === 202).length;
  const refused = answers.filter((a) => a.status === 429);
  expect(accepted + refused.length).toBe(20);
  for (const r of refused) {
    expect(r.body.error.code).toBe("overloaded");
    expect(r.headers["retry-after"]).toBeDefined();
  }
  expect(accepted * BATCH).toBeGreaterThanOrEqual(MAX);
  expect(accepted * BATCH).toBeLessThanOrEqual(MAX + BATCH);
  expect(await dueOf(flood.orgId)).toBe(accepted * BATCH);
  // The quiet organization holds none of the backlog: it is still served.
  expect((await api.request.post("/jobs").set(as(quiet)).send(jobs(1)[0]!)).status).toBe(202);
  // A single job from the flood is refused too, until the backlog falls.
  expect((await api.request.post("/jobs").set(as(flood)).send(jobs(1)[0]!)).status).toBe(429);
});

it("counts a job once when it is admitted and committed while the backlog read waits for a connection", async () => {
  // A process whose backlog read queues for its pool's one connection (the pool is busy, as under load) while the
  // organization's batch is admitted and committed: the read then holds the batch, and so does the count of what was
  // admitted since. The mark between the two is taken once the read holds a connection, so the batch counts once.
  const pool = new pg.Pool({ connectionString: api.database.url, max: 1 });
  const busy = await pool.connect();
  try {
    const baseline = (
      await api.database.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM job_queue WHERE dispatched_at IS NULL AND due_at <= now()")
    ).rows[0]!.n;
    const max = baseline + 50;
    const org = await createOrg(api.database.db, api.deps.config);
    const backpressure = new Backpressure({ ...api.deps, config: { ...api.deps.config, BACKPRESSURE_DUE_MAX: max }, db: { ...api.deps.db, pool } });
    backpressure.refuseIfShed(org.orgId, 0); // starts the background read, which waits for the busy connection
    backpressure.refuseIfShed(org.orgId, 30);
    const flight = backpressure.writing(org.orgId, await postBatch(org, 30), 30);
    backpressure.wrote(flight); // as this process's writer reports the write it made
    busy.release();
    await backpressure.settle();
    // baseline + 30 are due, 20 under the limit: counted twice it would be 10 over, and the organization shed.
    expect(() => backpressure.refuseIfShed(org.orgId, 1)).not.toThrow();
  } finally {
    await pool.end();
  }
});

it("counts a job once when its write commits before the read's snapshot and reports after the read began", async () => {
  // The write's commit and its report are two moments: under load the report can come after the read has taken its
  // snapshot, which already holds the jobs. The read looks up the writes under way, so the batch counts once.
  const pool = new pg.Pool({ connectionString: api.database.url, max: 1 });
  const busy = await pool.connect();
  try {
    const baseline = (
      await api.database.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM job_queue WHERE dispatched_at IS NULL AND due_at <= now()")
    ).rows[0]!.n;
    const max = baseline + 50;
    const org = await createOrg(api.database.db, api.deps.config);
    const backpressure = new Backpressure({ ...api.deps, config: { ...api.deps.config, BACKPRESSURE_DUE_MAX: max }, db: { ...api.deps.db, pool } });
    backpressure.refuseIfShed(org.orgId, 0); // starts the background read, which waits for the busy connection
    backpressure.refuseIfShed(org.orgId, 30);
    // Committed (the API's own writer wrote the batch), but this process's write has not reported yet.
    const flight = backpressure.writing(org.orgId, await postBatch(org, 30), 30);
    busy.release();
    await backpressure.settle();
    // baseline + 30 are due, 20 under the limit: counted twice (the read's 30 and the 30 under way) it would be 10 over.
    expect(() => backpressure.refuseIfShed(org.orgId, 1)).not.toThrow();
    backpressure.forget(org.orgId, 1);
    backpressure.wrote(flight); // the report arrives: the jobs are in the read already, and stay counted once
    expect(() => backpressure.refuseIfShed(org.orgId, 1)).not.toThrow();
    backpressure.forget(org.orgId, 1);
    // The rest of the limit is still enforced: 21 more admitted in this process put it over, and the organization is shed.
    backpressure.refuseIfShed(org.orgId, 21);
    expect(() => backpressure.refuseIfShed(org.orgId, 1)).toThrow(/backlog limit/);
  } finally {
    await pool.end();
  }
});
