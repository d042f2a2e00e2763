// docs/reference/robustness.md#r48: envelopes (docs/reference/lifecycle.md#envelopes) against real worker processes, Postgres and Redis. A BullMQ job carries many job
// ids; what must hold is what held when it carried one: every job ends exactly once (at least once for an attempt
// that had started), a job never starts twice because its envelope was delivered again, a cancelled job in a waiting
// envelope never starts, and a stopping worker gives back what it has not started at once.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { startPrivateRedis, waitFor, type PrivateRedis } from "@conveyor/testkit";
import { ScriptedLog, startStack, type Stack } from "@conveyor/api/testing/stack";

const terminal = (job: { status: string }) => job.status === "done" || job.status === "failed" || job.status === "cancelled";

/** Each job's envelope (the BullMQ job id it was handed over in), for the jobs still in the dispatcher's queue. */
async function envelopesOf(stack: Stack, ids: readonly string[]): Promise<Map<string, string | null>> {
  const { rows } = await stack.api.database.db.pool.query<{ job_id: string; envelope_id: string | null }>(
    "SELECT job_id, envelope_id FROM job_queue WHERE job_id = ANY($1::uuid[])",
    [ids],
  );
  return new Map(rows.map((r) => [r.job_id, r.envelope_id]));
}

async function post(stack: Stack, jobs: unknown[]): Promise<string[]> {
  const res = await stack.post("/jobs/batch", { jobs });
  expect(res.status).toBe(202);
  return (res.body as { id: string }[]).map((j) => j.id);
}

/** A file the scripted handler waits for (`until_file`): the test decides when those attempts end. */
function gate(): { file: string; open(): void } {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "conveyor-envelope-gate-")), "open");
  return { file, open: () => writeFileSync(file, "") };
}

describe("a worker SIGKILLed holding an envelope of 64 jobs, half started", () => {
  const log = new ScriptedLog("envelope-kill");
  let stack: Stack;
  beforeAll(async () => {
    // One-second registry heartbeats: the killed worker is known gone (three missed beats) in about three seconds, so
    // the envelope's next delivery takes its started jobs over instead of leaving them to the reconciler's grace
    // (30 s) — which put this test at its 60 s limit.
    stack = await startStack({
      workerEnv: {
        WORKER_TYPES: "scripted",
        WORKER_CONCURRENCY: "64",
        ENVELOPE_MAX: "64",
        SCRIPTED_MARKER_FILE: log.file,
        WORKER_LOCK_MS: "3000",
        WORKER_HEARTBEAT_MS: "1000",
      },
    });
  });
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(() => stack.close());

  it("ends every job once: the started ones at least once, the others exactly once", async () => {
    const busy = gate();
    const first = await stack.startWorker();
    // 32 of the worker's 64 slots held, then 64 jobs in one batch: one envelope of 64, of which 32 can start.
    const holders = await post(
      stack,
      Array.from({ length: 32 }, (_, i) => ({ type: "scripted", payload: { marker: `hold-${i}`, until_file: busy.file } })),
    );
    await waitFor(async () => ((await Promise.all(holders.map((id) => stack.job(id)))).every((j) => j.status === "processing") ? true : null), "32 slots busy");
    const jobs = await post(
      stack,
      Array.from({ length: 64 }, (_, i) => ({ type: "scripted", payload: { marker: `env-${i}`, until_file: busy.file } })),
    );
    const started = await waitFor(
      async () => {
        const views = await Promise.all(jobs.map((id) => stack.job(id)));
        const running = views.filter((j) => j.status === "processing");
        return running.length === 32 ? running.map((j) => j.id) : null;
      },
      "half of the envelope to start",
      20_000,
    );
    const envelopes = await envelopesOf(stack, jobs);
    expect(new Set(envelopes.values()).size).toBe(1);

    await first.stop("SIGKILL");
    busy.open();
    // BullMQ's stalled check gives the envelope to the next worker; its claim takes the started attempts over and
    // starts the others.
    await stack.startWorker();
    for (const id of [...holders, ...jobs]) expect((await stack.waitForJob(id, terminal, 60_000)).status).toBe("done");

    const startedSet = new Set(started);
    jobs.forEach((id, i) => {
      const runs = log.runsOf(`env-${i}`);
      if (startedSet.has(id)) expect(runs).toBeGreaterThanOrEqual(1);
      else expect(runs).toBe(1);
    });
  });
});

describe("an envelope waiting in Redis", () => {
  const log = new ScriptedLog("envelope-wait");
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workerEnv: { WORKER_TYPES: "scripted", WORKER_CONCURRENCY: "2", SCRIPTED_MARKER_FILE: log.file } });
  });
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(() => stack.close());

  it("never starts a job cancelled while its envelope waits, and starts the rest", async () => {
    const busy = gate();
    const worker = await stack.startWorker();
    const holders = await post(
      stack,
      [1, 2].map((n) => ({ type: "scripted", payload: { marker: `busy-${n}`, until_file: busy.file } })),
    );
    await waitFor(
      async () => ((await Promise.all(holders.map((id) => stack.job(id)))).every((j) => j.status === "processing") ? true : null),
      "both slots busy",
    );
    // Handed over while both slots are busy: their envelope waits in BullMQ.
    const [cancelled, kept] = await post(stack, [
      { type: "scripted", payload: { marker: "cancelled" } },
      { type: "scripted", payload: { marker: "kept" } },
    ]);
    await waitFor(async () => ((await envelopesOf(stack, [cancelled!])).get(cancelled!) ? true : null), "the jobs to be handed over");
    const res = await stack.api.request.post(`/jobs/${cancelled}/cancel`).set("X-API-Key", stack.apiKey);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("cancelled");

    busy.open();
    expect((await stack.waitForJob(kept!, terminal)).status).toBe("done");
    expect((await stack.job(cancelled!)).status).toBe("cancelled");
    expect(log.runsOf("cancelled")).toBe(0);
    expect(log.runsOf("kept")).toBe(1);
    await worker.stop("SIGTERM");
  });

  it("SIGTERM gives the unstarted jobs of a delivered envelope back at once, not when its lock expires", async () => {
    const busy = gate();
    const first = await stack.startWorker({ WORKER_CONCURRENCY: "4", ENVELOPE_MAX: "8", WORKER_LOCK_MS: "30000", WORKER_SHUTDOWN_MS: "20000" });
    // 2 slots busy, then 8 jobs: envelopes of 4 (the worker's slots); the first is delivered, 2 of its jobs start and 2
    // wait in the worker for a slot; the second envelope waits in BullMQ.
    const holders = await post(
      stack,
      [1, 2].map((n) => ({ type: "scripted", payload: { marker: `term-busy-${n}`, until_file: busy.file } })),
    );
    await waitFor(
      async () => ((await Promise.all(holders.map((id) => stack.job(id)))).every((j) => j.status === "processing") ? true : null),
      "two slots busy",
    );
    const jobs = await post(
      stack,
      Array.from({ length: 8 }, (_, i) => ({ type: "scripted", payload: { marker: `term-${i}`, until_file: busy.file } })),
    );
    const running = await waitFor(async () => {
      const views = await Promise.all(jobs.map((id) => stack.job(id)));
      const started = views.filter((j) => j.status === "processing");
      return started.length === 2 ? started.map((j) => j.id) : null;
    }, "two of the envelope's jobs to start");
    const envelopes = await envelopesOf(stack, jobs);
    const delivered = envelopes.get(running[0]!)!;
    const unstarted = jobs.filter((id) => envelopes.get(id) === delivered && !running.includes(id));
    expect(unstarted).toHaveLength(2);

    const stopping = first.stop("SIGTERM");
    // Within a moment (the envelope's lock has 30 s to run): back in line in Postgres, no longer handed over.
    await waitFor(
      async () => {
        const now = await envelopesOf(stack, unstarted);
        return unstarted.every((id) => now.get(id) === null) ? true : null;
      },
      "the unstarted jobs to go back in line",
      5_000,
    );
    // A second worker starts every job the first has not, while the first still waits for its running attempts.
    await stack.startWorker({ WORKER_CONCURRENCY: "8" });
    const others = jobs.filter((id) => !running.includes(id));
    for (const id of others) await stack.waitForJob(id, (j) => j.status === "processing", 30_000);
    expect(first.child.exitCode).toBeNull();
    busy.open();
    await stopping;
    for (const id of [...holders, ...jobs]) expect((await stack.waitForJob(id, terminal, 30_000)).status).toBe("done");
    jobs.forEach((_, i) => expect(log.runsOf(`term-${i}`)).toBe(1));
  });
});

describe("envelopes in flight when Redis is wiped or away", () => {
  const log = new ScriptedLog("envelope-redis");
  let redis: PrivateRedis;
  let stack: Stack;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    stack = await startStack({
      apiEnv: { REDIS_URL: redis.url },
      workerEnv: { WORKER_TYPES: "scripted", WORKER_CONCURRENCY: "8", SCRIPTED_MARKER_FILE: log.file, RECONCILE_INTERVAL_MS: "300" },
    });
    await stack.startWorker();
  });
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(async () => {
    await stack.close();
    await redis.stop();
  });

  it("loses nothing to a FLUSHALL: running and waiting envelopes are rebuilt from Postgres", async () => {
    const jobs = await post(
      stack,
      Array.from({ length: 200 }, (_, i) => ({ type: "scripted", payload: { marker: `flush-${i}`, sleep_ms: 50 } })),
    );
    await waitFor(async () => ((await stack.job(jobs[20]!)).status !== "pending" ? true : null), "the first envelopes to run");
    const admin = new Redis(redis.url);
    await admin.flushall();
    admin.disconnect();
    for (const id of jobs) expect((await stack.waitForJob(id, terminal, 60_000)).status).toBe("done");
    jobs.forEach((_, i) => expect(log.runsOf(`flush-${i}`)).toBeGreaterThanOrEqual(1));
    // Only an attempt running at the wipe may have run twice.
    const twice = jobs.filter((_, i) => log.runsOf(`flush-${i}`) > 1);
    expect(twice.length).toBeLessThanOrEqual(8);
  });

  it("loses nothing while Redis is away for 20 s with envelopes in flight", async () => {
    const jobs = await post(
      stack,
      Array.from({ length: 200 }, (_, i) => ({ type: "scripted", payload: { marker: `down-${i}`, sleep_ms: 50 } })),
    );
    await waitFor(async () => ((await stack.job(jobs[20]!)).status !== "pending" ? true : null), "the first envelopes to run");
    await redis.stop();
    // Jobs keep being accepted meanwhile (the API writes nothing to Redis per job).
    const during = await post(stack, [{ type: "scripted", payload: { marker: "down-during" } }]);
    // The fault itself lasts 20 s (docs/reference/robustness.md#r48): this is its length, not a wait for some state.
    await new Promise((resolve) => setTimeout(resolve, 20_000));
    await redis.start();
    for (const id of [...jobs, ...during]) expect((await stack.waitForJob(id, terminal, 90_000)).status).toBe("done");
    jobs.forEach((_, i) => expect(log.runsOf(`down-${i}`)).toBeGreaterThanOrEqual(1));
    expect(log.runsOf("down-during")).toBe(1);
  });
});
