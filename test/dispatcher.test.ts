// Which due job runs next (docs/reference/time.md#time-priority-and-fairness), through the real API, Postgres, Redis and worker processes: delayed jobs
// wait in Postgres until due, higher priority runs first, organizations share a type's capacity round-robin
// instead of first-in-first-out, ORG_CONCURRENCY_LIMIT caps one org, and a lost leader is replaced without a
// job lost or run twice (docs/reference/robustness.md#r34).
import { spawn } from "node:child_process";
import os from "node:os";
import { Redis } from "ioredis";
import { waitFor } from "@conveyor/testkit";
import { createApiKey, createOrg } from "@conveyor/api/testing";
import { ScriptedLog, startStack, type LogView, type Stack } from "@conveyor/api/testing/stack";

const terminal = (job: { status: string }) => job.status === "done" || job.status === "failed" || job.status === "cancelled";

/** When the job's first attempt started, from its "started" log line. */
function startedAt(logs: LogView[]): number {
  const line = logs.find((l) => /^Attempt 1 of \d+ started\.$/.test(l.message));
  if (!line) throw new Error(`no start line in ${JSON.stringify(logs)}`);
  return Date.parse(line.timestamp);
}

/** A third organization (the stack's second one must stay untouched) with an API key header. */
async function thirdOrg(stack: Stack): Promise<Record<string, string>> {
  const org = await createOrg(stack.api.database.db, stack.api.deps.config);
  const { key } = await createApiKey(stack.api.database.db, org);
  return { "X-API-Key": key };
}

async function postMany(stack: Stack, count: number, body: object, headers: Record<string, string> = {}): Promise<string[]> {
  const res = await stack.post("/jobs/batch", { jobs: Array.from({ length: count }, () => body) }, headers);
  if (res.status !== 202) throw new Error(`batch: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }[]).map((j) => j.id);
}

async function allDone(stack: Stack, ids: string[], timeoutMs = 60_000): Promise<void> {
  await waitFor(
    async () => {
      const { rows } = await stack.api.database.db.pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM jobs WHERE id = ANY($1::uuid[]) AND status NOT IN ('done', 'failed', 'cancelled')",
        [ids],
      );
      return rows[0]!.n === "0";
    },
    `${ids.length} jobs finished`,
    timeoutMs,
    100,
  );
}

/** When each job's first attempt started, read from Postgres (the jobs belong to more than one org). */
async function starts(stack: Stack, ids: string[]): Promise<Map<string, number>> {
  const { rows } = await stack.api.database.db.pool.query<{ job_id: string; at: Date }>(
    "SELECT job_id, min(time) AS at FROM events WHERE job_id = ANY($1::uuid[]) AND type = 'job.started' GROUP BY job_id",
    [ids],
  );
  return new Map(rows.map((r) => [r.job_id, r.at.getTime()]));
}

describe("dispatching with two worker slots", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workerEnv: { WORKER_TYPES: "scripted,word_count", WORKER_CONCURRENCY: "2" } });
    await stack.startWorker();
  }, 60_000);
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(() => stack.close());

  it("shares capacity between organizations: a small org's jobs do not wait behind another org's backlog", async () => {
    const busy = await postMany(stack, 30, { type: "scripted", payload: { sleep_ms: 150 } });
    const small = await postMany(stack, 2, { type: "scripted", payload: { sleep_ms: 150 } }, await thirdOrg(stack));
    await allDone(stack, [...busy, ...small]);
    const started = await starts(stack, [...busy, ...small]);
    const firstSmall = Math.min(...small.map((id) => started.get(id)!));
    const busyAfter = busy.filter((id) => started.get(id)! > firstSmall).length;
    // First-in-first-out would start all 30 before it; round-robin starts it within a couple of rounds.
    expect(busyAfter).toBeGreaterThanOrEqual(20);
  }, 90_000);

  it("runs a higher priority first among due jobs of one type", async () => {
    // All become due at the same moment, however long the posts take: the first hand-over after it chooses by priority.
    const run_at = new Date(Date.now() + 3_000).toISOString();
    const low = await postMany(stack, 20, { type: "scripted", payload: { sleep_ms: 150 }, priority: 1, run_at });
    const high = await stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 10 }, priority: 10, run_at });
    expect(high.status).toBe(202);
    await allDone(stack, [...low, high.body.id]);
    const started = await starts(stack, [...low, high.body.id]);
    const lowBefore = low.filter((id) => started.get(id)! < started.get(high.body.id)!).length;
    // Two slots: one low job may be handed over in the same round as the high one and claimed a moment earlier.
    expect(lowBefore).toBeLessThanOrEqual(1);
    expect((await stack.job(high.body.id)) as unknown).toMatchObject({ priority: 10 });
  }, 90_000);

  it("keeps a delayed job in Postgres until its run_at, then starts it within a second", async () => {
    const runAt = new Date(Date.now() + 2_500);
    const res = await stack.post("/jobs", { type: "scripted", payload: {}, run_at: runAt.toISOString() });
    expect(res.status).toBe(202);
    const job: unknown = await stack.job(res.body.id);
    expect(job).toMatchObject({ status: "pending", run_at: runAt.toISOString() });
    const queued = await stack.api.database.db.pool.query("SELECT dispatched_at FROM job_queue WHERE job_id = $1", [res.body.id]);
    expect(queued.rows).toEqual([{ dispatched_at: null }]);
    const redis = new Redis(stack.redisUrl);
    try {
      expect(await redis.exists(`${stack.prefix}:scripted:${res.body.id}`)).toBe(0);
    } finally {
      redis.disconnect();
    }
    await stack.waitForJob(res.body.id, terminal, 15_000);
    const started = startedAt(await stack.logs(res.body.id));
    expect(started).toBeGreaterThanOrEqual(runAt.getTime());
    expect(started - runAt.getTime()).toBeLessThan(1_000);
  }, 30_000);

  it("runs a job whose run_at is past at once", async () => {
    const res = await stack.post("/jobs", { type: "scripted", payload: {}, run_at: "2020-01-01T00:00:00Z" });
    const job = await stack.waitForJob(res.body.id, terminal, 10_000);
    expect(job.status).toBe("done");
  });

  it("refuses a run_at more than 365 days ahead, an unparsable one and a priority outside 1..10", async () => {
    const far = new Date(Date.now() + 366 * 24 * 60 * 60 * 1000).toISOString();
    for (const [body, path] of [
      [{ run_at: far }, "run_at"],
      [{ run_at: "tomorrow" }, "run_at"],
      [{ run_at: 1_700_000_000 }, "run_at"],
      [{ priority: 0 }, "priority"],
      [{ priority: 11 }, "priority"],
      [{ priority: 2.5 }, "priority"],
    ] as const) {
      const res = await stack.post("/jobs", { type: "scripted", payload: {}, ...body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
  });

  it("leaves a job of a type no live worker serves pending in Postgres, visibly", async () => {
    await stack.api.database.db.pool.query("INSERT INTO job_types (name) VALUES ('nobody_serves') ON CONFLICT DO NOTHING");
    const res = await stack.post("/jobs", { type: "nobody_serves", payload: {} });
    expect(res.status).toBe(202);
    // A few dispatcher rounds (250 ms each) later it is still waiting, not handed to BullMQ.
    await waitFor(
      async () => (await stack.api.database.db.pool.query("SELECT 1 FROM job_queue WHERE dispatched_at IS NOT NULL LIMIT 1")).rowCount === 0,
      "nothing in flight",
      5_000,
    );
    // A job of a served type, enqueued after it, has been handed over and run: the dispatcher has had its rounds.
    const [later] = await postMany(stack, 1, { type: "scripted", payload: {} });
    await stack.waitForJob(later!, (job) => job.status === "done", 15_000);
    const queued = await stack.api.database.db.pool.query("SELECT dispatched_at FROM job_queue WHERE job_id = $1", [res.body.id]);
    expect(queued.rows).toEqual([{ dispatched_at: null }]);
    expect((await stack.job(res.body.id)).status).toBe("pending");
  });
});

describe("ORG_CONCURRENCY_LIMIT", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workerEnv: { WORKER_TYPES: "scripted", WORKER_CONCURRENCY: "4", ORG_CONCURRENCY_LIMIT: "1" } });
    await stack.startWorker();
  }, 60_000);
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(() => stack.close());

  it("runs at most that many jobs of one org at once per type, while another org uses the free slots", async () => {
    const capped = await postMany(stack, 6, { type: "scripted", payload: { sleep_ms: 200 } });
    const other = await postMany(stack, 2, { type: "scripted", payload: { sleep_ms: 200 } }, await thirdOrg(stack));
    await allDone(stack, [...capped, ...other]);
    const spans = await Promise.all(
      capped.map(async (id) => {
        const logs = await stack.logs(id);
        const end = logs.find((l) => /succeeded/.test(l.message))!;
        return [startedAt(logs), Date.parse(end.timestamp)] as const;
      }),
    );
    spans.sort((a, b) => a[0] - b[0]);
    // One at a time: each capped job starts after the previous one ended.
    for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
    // The other org's jobs ran alongside, not after the capped org's six.
    const otherStarts = await starts(stack, other);
    expect(Math.max(...otherStarts.values())).toBeLessThan(spans[3]![0]);
  }, 90_000);
});

describe("the dispatcher's leader (G34)", () => {
  let stack: Stack;
  let log: ScriptedLog;
  beforeAll(async () => {
    log = new ScriptedLog("leader");
    stack = await startStack({ workerEnv: { WORKER_TYPES: "scripted", WORKER_CONCURRENCY: "8", SCRIPTED_MARKER_FILE: log.file } });
    await Promise.all([stack.startWorker(), stack.startWorker()]);
  }, 60_000);
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(() => stack.close());

  const runs = () => log.markerCounts();

  it("is replaced within seconds when killed with SIGKILL mid-dispatch, losing no job and running none twice", async () => {
    const leader = await waitFor(async () => stack.workers.find((w) => /became the leader/.test(w.output())) ?? null, "a leader", 15_000);
    const jobs = Array.from({ length: 120 }, (_, i) => ({ type: "scripted", payload: { sleep_ms: 50, marker: `kill-${i}` } }));
    const res = await stack.post("/jobs/batch", { jobs });
    const ids = (res.body as { id: string }[]).map((j) => j.id);
    await waitFor(
      async () => (await stack.api.database.db.pool.query("SELECT 1 FROM job_queue WHERE dispatched_at IS NOT NULL LIMIT 1")).rowCount === 1,
      "dispatch under way",
      10_000,
      10,
    );
    const killedAt = Date.now();
    await leader.stop("SIGKILL");
    const survivor = stack.workers.find((w) => w !== leader)!;
    await waitFor(async () => /became the leader/.test(survivor.output()), "a new leader", 15_000, 50);
    expect(Date.now() - killedAt).toBeLessThan(10_000);
    await allDone(stack, ids, 90_000);

    const statuses = await stack.api.database.db.pool.query<{ status: string; n: string }>(
      "SELECT status, count(*) AS n FROM jobs WHERE id = ANY($1::uuid[]) GROUP BY status",
      [ids],
    );
    expect(statuses.rows).toEqual([{ status: "done", n: String(ids.length) }]);
    // A job runs twice only when the killed worker was running it (at-least-once, logged as interrupted).
    const interrupted = new Set<string>();
    for (const id of ids) if ((await stack.logs(id)).some((l) => /was interrupted/.test(l.message))) interrupted.add(id);
    const counts = runs();
    ids.forEach((id, i) => {
      const n = counts.get(`kill-${i}`) ?? 0;
      if (interrupted.has(id)) expect(n).toBeLessThanOrEqual(2);
      else expect(n).toBe(1);
    });
  }, 150_000);

  it("runs nothing twice when two leaders overlap after a lease expiry", async () => {
    // The first test killed one of the two workers: bring the pair back.
    await stack.startWorker();
    const redis = new Redis(stack.redisUrl);
    try {
      const jobs = Array.from({ length: 200 }, (_, i) => ({ type: "scripted", payload: { sleep_ms: 20, marker: `race-${i}` } }));
      const res = await stack.post("/jobs/batch", { jobs });
      const ids = (res.body as { id: string }[]).map((j) => j.id);
      // Expire the lease again and again: the other worker takes it while the first still believes it leads.
      const stealing = setInterval(() => void redis.del(`${stack.prefix}:leader`), 150);
      try {
        await allDone(stack, ids, 90_000);
      } finally {
        clearInterval(stealing);
      }
      const counts = runs();
      ids.forEach((_, i) => expect(counts.get(`race-${i}`)).toBe(1));
      expect(stack.workers.filter((w) => /became the leader/.test(w.output())).length).toBeGreaterThanOrEqual(1);
    } finally {
      redis.disconnect();
    }
  }, 150_000);

  it("runs nothing twice when two leaders overlap again and again while another process saturates the CPU (docs/reference/robustness.md#r56)", async () => {
    // A busy loop per core: the workers' event loops and Postgres wait for the CPU, so a second delivery of a job id
    // (the overlapping leaders' hand-overs, a stalled check on a worker that is only slow) reaches a claim while the
    // first attempt still runs. Its holder lives: the job is not started again (docs/reference/lifecycle.md#storage-and-leases).
    const hogs = Array.from({ length: Math.max(2, os.cpus().length) }, () => spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }));
    const redis = new Redis(stack.redisUrl);
    try {
      // Most jobs are short; some run long enough for the reconciler (grace 1.5 s) to repair their envelopes.
      const jobs = Array.from({ length: 240 }, (_, i) => ({ type: "scripted", payload: { sleep_ms: i % 12 === 0 ? 3_000 : 30, marker: `hog-${i}` } }));
      const res = await stack.post("/jobs/batch", { jobs });
      const ids = (res.body as { id: string }[]).map((j) => j.id);
      const stealing = setInterval(() => void redis.del(`${stack.prefix}:leader`), 150);
      // Envelopes lost from Redis while their jobs run: the reconciler puts them back, and the other worker receives
      // a second delivery of jobs whose holder is alive and running them.
      const losing = setInterval(() => {
        void redis.lrange(`${stack.prefix}:scripted:active`, 0, -1).then((active) => {
          if (active.length) void redis.del(...active.map((envelope) => `${stack.prefix}:scripted:${envelope}`));
        });
      }, 400);
      try {
        await allDone(stack, ids, 120_000);
      } finally {
        clearInterval(stealing);
        clearInterval(losing);
      }
      const counts = runs();
      const twice = ids.map((_, i) => `hog-${i}`).filter((marker) => counts.get(marker) !== 1);
      expect(twice.map((marker) => `${marker} ran ${counts.get(marker) ?? 0} times`)).toEqual([]);
      // No attempt was counted as lost: both workers lived throughout.
      const { rows } = await stack.api.database.db.pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM jobs WHERE id = ANY($1::uuid[]) AND interruptions > 0",
        [ids],
      );
      expect(rows[0]!.n).toBe("0");
    } finally {
      for (const hog of hogs) hog.kill("SIGKILL");
      redis.disconnect();
    }
  }, 180_000);
});
