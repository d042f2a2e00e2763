// docs/reference/robustness.md#a: nothing is lost. Real API, real worker processes, and private Redis / Postgres
// servers for the tests that stop or wipe them (the machine's shared servers are never touched).
import { Redis } from "ioredis";
import { createDatabase, migrate } from "@conveyor/db";
import { withPrisma } from "@conveyor/db/prisma";
import { envelopeKey } from "@conveyor/queue";
import { startPrivatePostgres, startPrivateRedis, waitFor, type PrivatePostgres, type PrivateRedis } from "@conveyor/testkit";
import { ScriptedLog, startStack, starts, type Stack } from "@conveyor/api/testing/stack";

const terminal = (job: { status: string }) => job.status === "done" || job.status === "failed";

/** The envelope (its BullMQ job id, docs/reference/lifecycle.md#envelopes) the job's current attempt was handed over in. */
async function envelopeOf(stack: Stack, jobId: string): Promise<string> {
  const { rows } = await stack.api.database.db.pool.query<{ envelope_id: string }>("SELECT envelope_id FROM job_queue WHERE job_id = $1", [jobId]);
  return rows[0]!.envelope_id;
}

describe("A1: Redis stopped when a job is created", () => {
  let redis: PrivateRedis;
  let stack: Stack;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    stack = await startStack({ apiEnv: { REDIS_URL: redis.url } });
    await stack.registerPluginTypes();
  });
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(async () => {
    await stack.close();
    await redis.stop();
  });

  it("still answers 202 (Postgres is written first), and the job runs once after Redis returns", async () => {
    await redis.stop();
    const res = await stack.post("/jobs", { type: "scripted", payload: { marker: "a1" } });
    expect(res.status).toBe(202);
    expect((await stack.job(res.body.id)).status).toBe("pending");

    await redis.start();
    await stack.startWorker();
    const job = await stack.waitForJob(res.body.id, terminal);
    expect(job.status).toBe("done");
    expect(starts(await stack.logs(job.id))).toBe(1);
  });
});

describe("A2: Redis wiped (FLUSHALL) with jobs pending, running and done", () => {
  let redis: PrivateRedis;
  let stack: Stack;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    // One job at a time, so some jobs are still waiting in Redis when it is wiped.
    stack = await startStack({ apiEnv: { REDIS_URL: redis.url }, workerEnv: { WORKER_CONCURRENCY: "1", WORKER_TYPES: "scripted" } });
    await stack.startWorker();
  });
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(async () => {
    await stack.close();
    await redis.stop();
  });

  it("re-enqueues and runs the pending and running jobs, and never runs the done ones again", async () => {
    const done = await stack.post("/jobs", { type: "scripted", payload: {} });
    await stack.waitForJob(done.body.id, terminal);
    const running = await stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 2500 } });
    await stack.waitForJob(running.body.id, (j) => j.status === "processing");
    const pending = await Promise.all([1, 2, 3].map((n) => stack.post("/jobs", { type: "scripted", payload: { n } })));

    const admin = new Redis(redis.url);
    await admin.flushall();
    admin.disconnect();

    for (const { body } of pending) {
      const job = await stack.waitForJob(body.id, terminal);
      expect(job.status).toBe("done");
      expect(starts(await stack.logs(job.id))).toBe(1);
    }
    expect((await stack.waitForJob(running.body.id, terminal)).status).toBe("done");
    const doneLogs = await stack.logs(done.body.id);
    expect(starts(doneLogs)).toBe(1);
    expect((await stack.job(done.body.id)).status).toBe("done");
  });
});

describe("A3: a worker killed with SIGKILL mid-job", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workerEnv: { WORKER_LOCK_MS: "2000", WORKER_TYPES: "scripted" } });
  });
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(() => stack.close());

  it("leaves the job to another worker, which finishes it; the logs show the interrupted attempt", async () => {
    const first = await stack.startWorker();
    const { body } = await stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 60_000 } });
    await stack.waitForJob(body.id, (j) => j.status === "processing");
    await first.stop("SIGKILL");

    await stack.startWorker({ SCRIPTED_TIME_SCALE: "0" });
    const job = await stack.waitForJob(body.id, terminal);
    expect(job).toMatchObject({ status: "done", retries: 0 });
    const logs = await stack.logs(job.id);
    expect(starts(logs)).toBe(2);
    expect(logs).toContainEqual(expect.objectContaining({ attempt: 1, level: "warn", message: expect.stringMatching(/^Attempt 1 was interrupted/) }));
  });
});

describe("A4: a job that crashes its worker every time", () => {
  let stack: Stack;
  beforeAll(async () => {
    // A killed holder is gone once it misses three heartbeats (docs/reference/lifecycle.md#storage-and-leases): at 1 s a
    // restart takes its job over after about 3 s rather than 15 s at the default, as a supervisor's quick restarts do.
    stack = await startStack({ workerEnv: { WORKER_LOCK_MS: "1500", WORKER_HEARTBEAT_MS: "1000", WORKER_TYPES: "scripted" } });
    await stack.registerPluginTypes();
  });
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(() => stack.close());

  it("ends failed with a reason instead of looping, as a supervisor keeps restarting workers", async () => {
    const { body } = await stack.post("/jobs", { type: "scripted", payload: { crash: true }, max_retries: 1 });
    let job = await stack.job(body.id);
    for (let restart = 0; restart < 8 && !terminal(job); restart++) {
      const worker = stack.spawnWorker();
      await Promise.race([worker.exited, stack.waitForJob(body.id, terminal, 20_000).catch(() => undefined)]);
      await worker.stop("SIGKILL");
      job = await stack.job(body.id);
    }
    expect(job.status).toBe("failed");
    expect(job.error).toMatch(/interrupted 3 times; giving up, as the job probably crashes its worker/);
    expect(starts(await stack.logs(body.id))).toBe(3);
  }, 180_000);
});

describe("A5: SIGTERM with jobs in flight", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workerEnv: { WORKER_TYPES: "scripted" } });
  });
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(() => stack.close());

  it("finishes a job that fits in the grace period, then exits 0", async () => {
    const worker = await stack.startWorker({ WORKER_SHUTDOWN_MS: "10000" });
    const { body } = await stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 1500 } });
    await stack.waitForJob(body.id, (j) => j.status === "processing");
    expect(await worker.stop("SIGTERM", 30_000)).toBe(0);
    const job = await stack.job(body.id);
    expect(job.status).toBe("done");
    expect(starts(await stack.logs(body.id))).toBe(1);
  });

  it("takes no new job after SIGTERM", async () => {
    const worker = await stack.startWorker({ WORKER_SHUTDOWN_MS: "10000" });
    const busy = await stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 1500 } });
    await stack.waitForJob(busy.body.id, (j) => j.status === "processing");
    const stopping = worker.stop("SIGTERM", 30_000);
    await worker.waitForOutput(/SIGTERM received/);
    const late = await stack.post("/jobs", { type: "scripted", payload: {} });
    expect(await stopping).toBe(0);
    expect((await stack.job(late.body.id)).status).toBe("pending");
    const next = await stack.startWorker();
    expect((await stack.waitForJob(late.body.id, terminal)).status).toBe("done");
    await next.stop("SIGTERM");
  });

  it("past the grace period aborts the handler, leaves the job retryable without consuming a retry, exits 0", async () => {
    const worker = await stack.startWorker({ WORKER_SHUTDOWN_MS: "1000" });
    const { body } = await stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 60_000 }, max_retries: 0 });
    await stack.waitForJob(body.id, (j) => j.status === "processing");
    expect(await worker.stop("SIGTERM", 30_000)).toBe(0);

    const released = await stack.job(body.id);
    expect(released).toMatchObject({ status: "pending", retries: 0 });
    expect(await stack.logs(body.id)).toContainEqual(
      expect.objectContaining({ level: "warn", message: "Attempt 1 was stopped by a worker shutdown; the job goes back to the queue." }),
    );

    await stack.startWorker({ SCRIPTED_TIME_SCALE: "0" });
    const job = await stack.waitForJob(body.id, terminal);
    expect(job).toMatchObject({ status: "done", retries: 0 });
  });
});

describe("A6: a handler slower than its lock", () => {
  let stack: Stack;
  beforeAll(async () => {
    // Heartbeats every second: a worker whose event loop is blocked for 12 s misses them and is gone from the worker
    // registry after 3 s, so its job may be taken over (docs/reference/lifecycle.md#storage-and-leases: only a lapsed holder's jobs are).
    stack = await startStack({ workerEnv: { WORKER_LOCK_MS: "1000", WORKER_HEARTBEAT_MS: "1000", WORKER_TYPES: "scripted" } });
  });
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(() => stack.close());

  it("may run twice, but only the owning attempt's outcome is recorded; the stale one is refused by the fence", async () => {
    await stack.startWorker();
    // Blocks the first worker's event loop, so it can renew neither its lock nor its heartbeat; BullMQ hands the job
    // to the second worker after two stalled checks, whose claim takes it over once the first's heartbeat lapsed.
    const { body } = await stack.post("/jobs", { type: "scripted", payload: { busy_ms: 12_000 } });
    await stack.waitForJob(body.id, (j) => j.status === "processing");
    await stack.startWorker({ SCRIPTED_TIME_SCALE: "0" });

    const job = await stack.waitForJob(body.id, terminal);
    expect(job.status).toBe("done");
    const logs = await waitFor(
      async () => {
        const lines = await stack.logs(body.id);
        return lines.some((l) => l.message.includes("outcome was discarded")) ? lines : null;
      },
      "the stale attempt to report back",
      20_000,
    );
    expect(starts(logs)).toBe(2);
    expect(logs).toContainEqual(expect.objectContaining({ level: "warn", message: "Attempt 1's outcome was discarded: a newer attempt owns this job." }));
    // The stale attempt did not move the job out of done, nor change its result.
    expect(await stack.job(body.id)).toEqual(job);
  });
});

describe("A6: a handler slower than its lock whose worker still lives (docs/reference/lifecycle.md#storage-and-leases, docs/reference/robustness.md#r56)", () => {
  let stack: Stack;
  const log = new ScriptedLog("a6-alive");
  beforeAll(async () => {
    // A lock of one second, heartbeats every five: a 6 s block loses the lock (BullMQ's stalled check gives the
    // envelope to the other worker) but not the holder, whose last heartbeat is at most 11 s old when the block ends.
    stack = await startStack({
      workerEnv: { WORKER_LOCK_MS: "1000", WORKER_HEARTBEAT_MS: "5000", WORKER_TYPES: "scripted", SCRIPTED_MARKER_FILE: log.file },
    });
  });
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(() => stack.close());

  it("is not started again while its holder lives: it runs once and its outcome is recorded", async () => {
    await stack.startWorker();
    const { body } = await stack.post("/jobs", { type: "scripted", payload: { busy_ms: 6_000, marker: "alive" } });
    await stack.waitForJob(body.id, (j) => j.status === "processing");
    await stack.startWorker({ SCRIPTED_TIME_SCALE: "0" });
    const job = await stack.waitForJob(body.id, terminal, 30_000);
    expect(job.status).toBe("done");
    expect(starts(await stack.logs(body.id))).toBe(1);
    expect(log.markerCounts().get("alive")).toBe(1);
    const { rows } = await stack.api.database.db.pool.query<{ interruptions: number }>("SELECT interruptions FROM jobs WHERE id = $1", [body.id]);
    expect(rows[0]!.interruptions).toBe(0);
  });
});

describe("A9: Postgres restarted", () => {
  let server: PrivatePostgres;
  let stack: Stack;
  const log = new ScriptedLog("a9");
  beforeAll(async () => {
    server = await startPrivatePostgres();
    const url = server.url("conveyor");
    await migrate(url);
    const db = withPrisma(createDatabase({ url, poolSize: 5 }));
    stack = await startStack({
      database: { name: "conveyor", url, db, drop: () => db.close() },
      workerEnv: { WORKER_TYPES: "scripted", SCRIPTED_MARKER_FILE: log.file },
    });
    await stack.startWorker();
  });
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(async () => {
    await stack.close();
    server.destroy();
  });

  it("answers 503 unavailable meanwhile, recovers by itself, and the job in flight is recorded once Postgres is back", async () => {
    const span = `a9-${Date.now()}`;
    const { body } = await stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 2000, span } });
    await stack.waitForJob(body.id, (j) => j.status === "processing");
    const envelope = await envelopeOf(stack, body.id);
    server.stop();

    const during = await stack.post("/jobs", { type: "scripted", payload: {} });
    expect(during.status).toBe(503);
    expect(during.body.error.code).toBe("unavailable");
    const read = await stack.api.request.get(`/jobs/${body.id}`).set("X-API-Key", stack.apiKey);
    expect(read.status).toBe(503);

    // The handler finishes while Postgres is down, its success unrecorded: the worker keeps retrying the write and keeps
    // the job's envelope in BullMQ (its lock renewed) until the outcome is in Postgres.
    await waitFor(() => log.finished(span)[0] ?? null, "the handler to finish while Postgres is down", 20_000);
    const redis = new Redis(stack.redisUrl);
    try {
      expect(await redis.exists(envelopeKey(stack.prefix, "scripted", envelope))).toBe(1);
    } finally {
      redis.disconnect();
    }
    server.start();
    const after = await waitFor(
      async () => {
        const res = await stack.post("/jobs", { type: "scripted", payload: {} });
        return res.status === 202 ? res : null;
      },
      "the API to recover",
      30_000,
      250,
    );
    expect(after.body.status).toBe("pending");
    expect((await stack.waitForJob(body.id, terminal)).status).toBe("done");
    expect((await stack.waitForJob(after.body.id, terminal)).status).toBe("done");
  });
});

describe("A3b: a worker killed after its job succeeded, before Postgres recorded the success", () => {
  let stack: Stack;
  const log = new ScriptedLog("a3b");
  beforeAll(async () => {
    // The reconciler of the second worker looks at every live job at once (no grace period).
    stack = await startStack({ workerEnv: { WORKER_TYPES: "scripted", RECONCILE_INTERVAL_MS: "300", RECONCILE_GRACE_MS: "0" } });
  });
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(() => stack.close());

  it("runs the job again: its envelope stayed in BullMQ until the outcome was recorded, Postgres still says processing, and Postgres decides", async () => {
    const first = await stack.startWorker({ RECONCILE_INTERVAL_MS: "3600000", SCRIPTED_MARKER_FILE: log.file });
    const span = `a3b-${Date.now()}`;
    const { body } = await stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 1500, span } });
    await stack.waitForJob(body.id, (j) => j.status === "processing");
    const envelope = await envelopeOf(stack, body.id);

    // Hold the job's row, so the success the handler is about to report cannot be written.
    const holder = await stack.api.database.db.pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE", [body.id]);
      // The handler returns; its success waits for the row, and its envelope stays in BullMQ (active, locked) meanwhile.
      await waitFor(() => log.finished(span)[0] ?? null, "the handler to finish", 20_000);
      const redis = new Redis(stack.redisUrl);
      expect(await redis.exists(envelopeKey(stack.prefix, "scripted", envelope))).toBe(1);
      redis.disconnect();
      await waitFor(
        async () => (await holder.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rowCount || null,
        "the success to wait for the row",
        20_000,
      );
      const blocked = await holder.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
      expect(blocked.rows).toHaveLength(1);

      // The worker dies with the success unwritten; its waiting statement goes with its connection.
      await first.stop("SIGKILL");
      await holder.query("SELECT pg_terminate_backend($1)", [blocked.rows[0]!.pid]);
      await holder.query("ROLLBACK");
    } finally {
      holder.release();
    }
    expect((await stack.job(body.id)).status).toBe("processing");

    await stack.startWorker({ SCRIPTED_TIME_SCALE: "0" });
    const job = await stack.waitForJob(body.id, terminal);
    expect(job).toMatchObject({ status: "done", retries: 0 });
    const logs = await stack.logs(body.id);
    expect(starts(logs)).toBe(2);
    expect(logs).toContainEqual(expect.objectContaining({ attempt: 1, level: "warn", message: expect.stringMatching(/^Attempt 1 was interrupted/) }));
  });
});
