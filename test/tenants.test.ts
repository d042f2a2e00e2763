// docs/reference/robustness.md#r52 and docs/reference/robustness.md#r53 (docs/reference/tenants.md#usage-quotas-and-backpressure, issue 36), with real API processes, real worker processes, Postgres and Redis:
// - a quota of 100 jobs a day holds exactly across three API processes posting at once;
// - usage equals the truth computed from the jobs and their events after retries, a worker SIGKILLed mid-attempt,
//   a permanent failure and a replay — and stays the same when retention deletes the jobs;
// - an organization flooding past BACKPRESSURE_DUE_MAX is refused 429 overloaded while a quiet organization's jobs are
//   accepted and start on time, /readyz stays up, and every accepted job of the flood still runs.
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { putQuotaOverrides } from "@conveyor/db";
import {
  createTestDatabase,
  deleteRedisPrefix,
  freePort,
  spawnService,
  TEST_REDIS_URL,
  testRedisPrefix,
  waitFor,
  type ServiceProcess,
  type TestDatabase,
} from "@conveyor/testkit";
import { createApiKey, createOrg, createSecondOrg, httpGet } from "@conveyor/api/testing";
import { startStack, type Stack } from "@conveyor/api/testing/stack";
import { loadApiConfig } from "@conveyor/api";

const JWT_SECRET = "test-secret-that-is-long-enough-for-hs256-000";
const final = (job: { status: string }) => ["done", "failed", "cancelled"].includes(job.status);

describe("52: a quota of 100 jobs a day across three API processes", () => {
  let database: TestDatabase;
  const prefix = testRedisPrefix();
  const apis: { process: ServiceProcess; base: string }[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const service = spawnService("api", {
        NODE_ENV: "test",
        LOG_LEVEL: "info",
        PORT: String(port),
        DATABASE_URL: database.url,
        DATABASE_POOL_SIZE: "5",
        REDIS_URL: TEST_REDIS_URL,
        REDIS_PREFIX: prefix,
        JWT_SECRET,
        API_RATE_LIMIT_PER_SEC: "0",
      });
      apis.push({ process: service, base: `http://127.0.0.1:${port}` });
    }
    await Promise.all(apis.map((a) => a.process.waitForOutput(/API listening/, 90_000)));
  }, 180_000);
  afterAll(async () => {
    await Promise.all(apis.map((a) => a.process.stop()));
    await database.drop();
    await deleteRedisPrefix(prefix);
  });

  it("accepts exactly 100 of 150 posts sent at once, 50 to each process, and counts exactly 100 jobs created", async () => {
    const config = loadApiConfig({ JWT_SECRET });
    const owner = await createOrg(database.db, config);
    const { key } = await createApiKey(database.db, owner);
    const other = await createSecondOrg(database.db);
    await other.watch(httpGet(apis[0]!.base));
    await putQuotaOverrides(database.db.pool, owner.orgId, { jobs_per_day: 100 });

    const post = (base: string, n: number) =>
      fetch(`${base}/jobs`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-API-Key": key },
        body: JSON.stringify({ type: "webhook", payload: { url: `https://hooks.example.com/${n}`, payload: { n } } }),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as { error?: { code: string } } }));
    const answers = await Promise.all(Array.from({ length: 150 }, (_, n) => post(apis[n % 3]!.base, n)));

    expect(answers.filter((a) => a.status === 202)).toHaveLength(100);
    const refused = answers.filter((a) => a.status !== 202);
    expect(refused).toHaveLength(50);
    // Listed, not counted: a refusal of another kind shows its status and body when this fails.
    expect(refused.filter((a) => a.status !== 429 || a.body.error?.code !== "quota_exceeded")).toEqual([]);
    const { rows } = await database.db.pool.query(
      `SELECT (SELECT count(*)::int FROM jobs WHERE org_id = $1) AS jobs, (SELECT sum(jobs_created)::int FROM usage_counts WHERE org_id = $1) AS counted`,
      [owner.orgId],
    );
    expect(rows[0]).toEqual({ jobs: 100, counted: 100 });
    await other.expectUntouched({ "X-API-Key": key });
  });

  it("far from a quota creates from each process's block without the lock, and still never passes it: exactly the quota once every block is spent or given back, and a SIGKILLed process's block is never spent by anyone", async () => {
    const config = loadApiConfig({ JWT_SECRET });
    const owner = await createOrg(database.db, config);
    const { key } = await createApiKey(database.db, owner);
    // 5,000 a day: blocks of a 32nd of the room left while that is at least 64 jobs.
    await putQuotaOverrides(database.db.pool, owner.orgId, { jobs_per_day: 5000 });
    let n = 0;
    const post = (base: string, jobs: number) =>
      fetch(`${base}/jobs/batch`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-API-Key": key },
        body: JSON.stringify({
          jobs: Array.from({ length: jobs }, () => ({ type: "webhook", payload: { url: `https://hooks.example.com/${n}`, payload: { n: n++ } } })),
        }),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as { error?: { code: string } } }));
    const counts = async () =>
      (
        await database.db.pool.query<{ jobs: number; counted: number; blocks: number; reserved: number }>(
          `SELECT (SELECT count(*)::int FROM jobs WHERE org_id = $1) AS jobs, (SELECT coalesce(sum(jobs_created), 0)::int FROM usage_counts WHERE org_id = $1) AS counted,
                  (SELECT count(*)::int FROM quota_blocks WHERE org_id = $1) AS blocks, (SELECT coalesce(sum(jobs), 0)::int FROM quota_blocks WHERE org_id = $1) AS reserved`,
          [owner.orgId],
        )
      ).rows[0]!;
    const refusedOnlyByQuota = (answers: { status: number; body: { error?: { code: string } } }[]) =>
      expect(answers.filter((a) => a.status !== 202 && (a.status !== 429 || a.body.error?.code !== "quota_exceeded"))).toEqual([]);

    // Far from the quota: every process takes a block (a row each), and the jobs are counted as they are stored.
    const first = await Promise.all(Array.from({ length: 12 }, (_, i) => post(apis[i % 3]!.base, 50)));
    expect(first.map((a) => a.status)).toEqual(Array(12).fill(202));
    expect(await counts()).toMatchObject({ jobs: 600, counted: 600, blocks: 3 });

    // A process dies holding its block: what it did not spend stays counted as used, by every process.
    await apis[2]!.process.stop("SIGKILL");
    expect((await counts()).blocks).toBe(3);

    // A flood past the quota on the two left: never past it, whatever was granted and spent in what order.
    const flood = await Promise.all(Array.from({ length: 120 }, (_, i) => post(apis[i % 2]!.base, 50)));
    refusedOnlyByQuota(flood);
    const afterFlood = await counts();
    expect(afterFlood.jobs).toBeLessThanOrEqual(5000);
    expect(afterFlood.counted).toBe(afterFlood.jobs);

    // One job at a time to each of the two, until both refuse: what their blocks had left is spent or given back.
    for (let refusals = 0, i = 0; refusals < 2; i++) {
      const answer = await post(apis[i % 2]!.base, 1);
      refusedOnlyByQuota([answer]);
      refusals = answer.status === 202 ? 0 : refusals + 1;
    }
    const last = await counts();
    // Only the dead process's block is left; the jobs stored are the quota less at most what it had not spent.
    expect(last.blocks).toBe(1);
    expect(last.jobs).toBeLessThanOrEqual(5000);
    expect(last.jobs).toBeGreaterThanOrEqual(5000 - last.reserved);
    expect(last.counted).toBe(last.jobs);
    // Giving it back (what a clean stop does) leaves room for exactly the rest.
    await database.db.pool.query("DELETE FROM quota_blocks WHERE org_id = $1", [owner.orgId]);
    const rest = await Promise.all(Array.from({ length: 5000 - last.jobs + 5 }, (_, i) => post(apis[i % 2]!.base, 1)));
    refusedOnlyByQuota(rest);
    expect(rest.filter((a) => a.status === 202)).toHaveLength(5000 - last.jobs);
    expect((await counts()).jobs).toBe(5000);
  });
});

/** Usage as the triggers counted it, per type. */
async function countedUsage(stack: Stack, orgId: string) {
  const { rows } = await stack.api.database.db.pool.query(
    `SELECT type, sum(jobs_created)::int AS jobs_created, sum(attempts_started)::int AS attempts_started, sum(attempt_ms)::int AS attempt_ms,
            sum(payload_bytes)::int AS payload_bytes
       FROM usage_counts WHERE org_id = $1 GROUP BY type ORDER BY type`,
    [orgId],
  );
  return rows;
}

/**
 * The truth from the jobs and their events: jobs created and attempts started are their events; an attempt runs from
 * its job.started to the job's next event (its outcome, or the job.started of the attempt that took it over).
 */
async function truthFromEvents(stack: Stack, orgId: string) {
  const { rows } = await stack.api.database.db.pool.query(
    `WITH e AS (
       SELECT e.*, lead(e.time) OVER (PARTITION BY e.job_id ORDER BY e.id) AS next_time, j.type AS job_type
         FROM events e JOIN jobs j ON j.id = e.job_id WHERE e.org_id = $1
     )
     SELECT job_type AS type,
            count(*) FILTER (WHERE type = 'job.created')::int AS jobs_created,
            count(*) FILTER (WHERE type = 'job.started')::int AS attempts_started,
            coalesce(sum(round(extract(epoch FROM next_time - time) * 1000)) FILTER (WHERE type = 'job.started'), 0)::int AS attempt_ms,
            (SELECT sum(octet_length(payload::text))::int FROM jobs WHERE org_id = $1 AND type = e.job_type) AS payload_bytes
       FROM e GROUP BY job_type ORDER BY job_type`,
    [orgId],
  );
  return rows;
}

describe("52: usage equals the truth after retries, a SIGKILL, a replay and retention", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
    await stack.registerPluginTypes();
  }, 60_000);
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(() => stack.close());

  it("counts every job, attempt and attempt millisecond the events show, and keeps them when the jobs are deleted", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "conveyor-usage-"));
    const release = path.join(dir, "release");
    const worker = await stack.startWorker();
    const ids: string[] = [];
    const post = async (payload: object, extra: object = {}) => {
      const res = await stack.post("/jobs", { type: "scripted", payload, ...extra });
      expect(res.status).toBe(202);
      ids.push(res.body.id as string);
      return res.body.id as string;
    };
    // The attempt the worker is killed in: it waits for a file the test writes after the kill.
    const held = await post({ until_file: release });
    await waitFor(async () => (await stack.job(held)).status === "processing", "the held attempt to start");
    await worker.stop("SIGKILL");
    for (let i = 0; i < 4; i++) await post({ sleep_ms: 20 * i });
    for (let i = 0; i < 2; i++) await post({ fail_until: 2 }, { max_retries: 3 });
    await post({ permanent: true }, { max_retries: 2 });
    await stack
      .post("/jobs", {
        type: "webhook",
        payload: { url: "https://hooks.example.com/x", payload: {} },
        run_at: new Date(Date.now() + 300 * 86_400_000).toISOString(),
      })
      .then((r) => {
        expect(r.status).toBe(202);
      });
    writeFileSync(release, "");
    await stack.startWorker();
    for (const id of ids) await stack.waitForJob(id, final, 60_000);
    const replayed = await stack.api.request.post(`/jobs/${ids[1]}/replay`).set("X-API-Key", stack.apiKey);
    expect(replayed.status).toBe(202);
    await stack.waitForJob(replayed.body.id as string, final);
    expect(existsSync(release)).toBe(true);

    const truth = await truthFromEvents(stack, stack.owner.orgId);
    expect(truth.find((t) => t.type === "scripted")).toMatchObject({ jobs_created: 9, attempts_started: 2 + 4 + 2 * 3 + 1 + 1 });
    expect(await countedUsage(stack, stack.owner.orgId)).toEqual(truth);
    // The pending_max quota's counter equals the pending jobs (the webhook due in 300 days) after the kill, the retries
    // and the replay, and after the deletes below.
    const pendingCounted = async () =>
      (
        await stack.api.database.db.pool.query(
          `SELECT (SELECT coalesce(sum(pending_jobs), 0)::int FROM stored_payload_bytes WHERE org_id = $1) AS counted,
                  (SELECT count(*)::int FROM jobs WHERE org_id = $1 AND status = 'pending' AND left(type, 1) <> '_') AS truth`,
          [stack.owner.orgId],
        )
      ).rows[0];
    expect(await pendingCounted()).toEqual({ counted: 1, truth: 1 });

    // The finished jobs deleted, as retention does (deleteFinishedJobs would take the second organization's too): the
    // usage stays as it was.
    const today = new Date().toISOString().slice(0, 10);
    const before = await stack.api.request.get(`/usage?group_by=type&from=${today}&to=${today}`).set("Authorization", `Bearer ${stack.owner.token}`);
    expect(before.status).toBe(200);
    const deleted = await stack.api.database.db.pool.query("DELETE FROM jobs WHERE org_id = $1 AND status IN ('done', 'failed', 'cancelled')", [
      stack.owner.orgId,
    ]);
    expect(deleted.rowCount).toBe(9);
    const after = await stack.api.request.get(`/usage?group_by=type&from=${today}&to=${today}`).set("Authorization", `Bearer ${stack.owner.token}`);
    expect(after.body).toEqual(before.body);
    expect(await countedUsage(stack, stack.owner.orgId)).toEqual(truth);
    expect(await pendingCounted()).toEqual({ counted: 1, truth: 1 });
  }, 180_000);
});

describe("53: backpressure sheds the flooding organization first", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ apiEnv: { BACKPRESSURE_DUE_MAX: "40", API_RATE_LIMIT_PER_SEC: "0" } });
    await stack.registerPluginTypes();
  }, 60_000);
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(() => stack.close());

  it("refuses the flood with 429 overloaded while a quiet organization's jobs are accepted and start on time, and runs every accepted job", async () => {
    const accepted: string[] = [];
    let refusal: { status: number; body: any } | undefined;
    await waitFor(
      async () => {
        const answers = await Promise.all(Array.from({ length: 10 }, () => stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 400 } })));
        for (const a of answers) if (a.status === 202) accepted.push(a.body.id as string);
        refusal = answers.find((a) => a.status === 429);
        return refusal !== undefined;
      },
      "the flooding organization to be refused",
      30_000,
      0,
    );
    expect(refusal!.body.error.code).toBe("overloaded");
    expect(accepted.length).toBeGreaterThan(40);

    // A quiet organization is still served.
    const quiet = await createOrg(stack.api.database.db, stack.api.deps.config);
    const { key } = await createApiKey(stack.api.database.db, quiet);
    const quietIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await stack.api.request.post("/jobs").set("X-API-Key", key).send({ type: "scripted", payload: {} });
      expect(res.status).toBe(202);
      quietIds.push(res.body.id as string);
    }
    expect((await stack.api.request.get("/readyz")).status).toBe(200);
    expect((await stack.api.request.get("/metrics")).text).toMatch(/^conveyor_jobs_refused_total\{reason="overloaded"\} [1-9]/m);

    // Workers come: the quiet organization's jobs start within a few seconds, before the flood has drained.
    await stack.startWorker();
    const workersReady = Date.now();
    for (const id of quietIds) {
      const job = await waitFor(
        async () => {
          const res = await stack.api.request.get(`/jobs/${id}`).set("X-API-Key", key);
          return res.body.status === "done" ? (res.body as { started_at: string }) : null;
        },
        "the quiet organization's job",
        30_000,
      );
      expect(Date.parse(job.started_at) - workersReady).toBeLessThan(5_000);
    }

    // Nothing accepted is lost or refused work: every accepted job of the flood runs to done.
    await waitFor(
      async () => {
        const done = await stack.api.database.db.pool.query("SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND status = 'done'", [accepted]);
        return done.rows[0].n === accepted.length;
      },
      "every accepted job of the flood to finish",
      120_000,
    );
    const { rows } = await stack.api.database.db.pool.query(
      "SELECT max(started_at) FILTER (WHERE org_id = $1) AS flood, max(started_at) FILTER (WHERE org_id = $2) AS quiet FROM jobs",
      [stack.owner.orgId, quiet.orgId],
    );
    expect(rows[0].quiet.getTime()).toBeLessThan(rows[0].flood.getTime());
  }, 240_000);
});
