// Flow control end to end (docs/reference/flow-control.md#flow-control, docs/reference/robustness.md#r40, docs/reference/robustness.md#r41, docs/reference/robustness.md#r42): real API, Postgres, Redis and worker processes. Which
// attempts ran at the same time is read from the handlers' own start/end marks (the scripted plugin's `span`).
import { deleteExpiredDedupeKeys } from "@conveyor/db";
import { waitFor } from "@conveyor/testkit";
import { createApiKey, createOrg } from "@conveyor/api/testing";
import { startSlackFake, type SlackFake } from "@conveyor/testkit/fakes";
import { ScriptedLog, startStack, type Stack } from "@conveyor/api/testing/stack";

jest.setTimeout(180_000);

let stack: Stack;
let log: ScriptedLog;
let slack: SlackFake;
const owner = () => ({ Authorization: `Bearer ${stack.owner.token}` });

beforeAll(async () => {
  log = new ScriptedLog("flow");
  slack = await startSlackFake();
  stack = await startStack({
    workerEnv: {
      SCRIPTED_MARKER_FILE: log.file,
      WORKER_CONCURRENCY: "6",
      CHAT_WEBHOOK_URL: slack.webhookUrl,
      WEBHOOK_ALLOW_HTTP: "true",
      ALLOW_PRIVATE_NETWORK: "true",
    },
  });
  await stack.startWorker();
  await stack.startWorker();
});
afterAll(async () => {
  await stack?.close();
  await slack?.close();
});

/** When each of the jobs started (its job.started events, a take-over's included), in order. */
async function startTimes(ids: string[]): Promise<number[]> {
  const { rows } = await stack.api.database.db.pool.query<{ time: Date }>(
    "SELECT time FROM events WHERE job_id = ANY($1::uuid[]) AND type = 'job.started' ORDER BY time",
    [ids],
  );
  return rows.map((r) => r.time.getTime());
}

/** The most executions of `runs` ever going on at one moment. */
function mostAtOnce(runs: { start: number; end: number }[]): number {
  const edges = runs.flatMap((r) => [
    [r.start, 1],
    [r.end, -1],
  ]);
  // An end and a start at the same millisecond do not overlap.
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let now = 0;
  let most = 0;
  for (const [, step] of edges) most = Math.max(most, (now += step!));
  return most;
}

async function enqueue(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await stack.post("/jobs", { type: "scripted", ...body }, headers);
  if (res.status !== 202 && res.status !== 200) throw new Error(`POST /jobs: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; status: string; deduplicated?: true; debounced?: true };
}

const allFinal = (ids: string[], timeoutMs = 60_000) =>
  Promise.all(ids.map((id) => stack.waitForJob(id, (job) => ["done", "failed", "cancelled"].includes(job.status), timeoutMs)));

/** Polls until one of `ids` says it waits for `reason`. */
const someoneWaitsFor = (ids: string[], reason: string) =>
  waitFor(
    async () => {
      for (const id of ids) if (((await stack.job(id)) as unknown as { waiting_for: string | null }).waiting_for === reason) return true;
      return null;
    },
    `a job waiting for ${reason}`,
    20_000,
    50,
  );

describe("concurrency keys", () => {
  it("never runs two attempts of a key with limit 1 at once, across two workers, and says why the others wait", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push((await enqueue({ payload: { sleep_ms: 150, span: `key1-${i}` }, concurrency_key: "phone:254700000001" })).id);
    await someoneWaitsFor(ids, "concurrency_key");
    const jobs = await allFinal(ids);
    expect(jobs.every((j) => j.status === "done")).toBe(true);
    const runs = log.finished("key1-");
    expect(runs).toHaveLength(8);
    expect(mostAtOnce(runs)).toBe(1);
    const detail = (await stack.job(ids[0]!)) as unknown as Record<string, unknown>;
    expect(detail).toMatchObject({ concurrency_key: "phone:254700000001", concurrency_limit: 1, waiting_for: null });
  });

  it("runs up to concurrency_limit at once and no more, while jobs of other keys run beside them", async () => {
    // One batch: the keyed jobs are ahead of the free ones in line, and all are due at once, however slow the machine.
    const keyed = Array.from({ length: 9 }, (_, i) => ({
      type: "scripted",
      payload: { sleep_ms: 200, span: `key3-${i}` },
      concurrency_key: "tenant:3",
      concurrency_limit: 3,
    }));
    const unkeyed = Array.from({ length: 3 }, (_, i) => ({ type: "scripted", payload: { sleep_ms: 200, span: `free-${i}` } }));
    const batch = await stack.post("/jobs/batch", { jobs: [...keyed, ...unkeyed] });
    expect(batch.status).toBe(202);
    await allFinal(batch.body.map((job: { id: string }) => job.id));
    expect(mostAtOnce(log.finished("key3-"))).toBe(3);
    // The keyed backlog held nobody else up: the unkeyed jobs ran while keyed ones were still waiting.
    const lastKeyed = Math.max(...log.finished("key3-").map((r) => r.start));
    expect(Math.max(...log.finished("free-").map((r) => r.start))).toBeLessThan(lastKeyed);
  });
});

describe("rate limits", () => {
  it("starts at most `limit` jobs in any window of the period, and every job runs", async () => {
    const put = await stack.api.request.put("/rate-limits/five-a-second").set(owner()).send({ limit: 5, period: "second" });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: "five-a-second", limit: 5, period: "second", used: 0 });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await enqueue({ payload: { span: `rate-${i}` }, rate_limit: "five-a-second" })).id);
    await someoneWaitsFor(ids, "rate_limit");
    const jobs = await allFinal(ids);
    expect(jobs.every((j) => j.status === "done" && j.retries === 0)).toBe(true);
    expect(log.finished("rate-")).toHaveLength(20);
    // A job starts when its claim commits it (its job.started event): that is what the window counts.
    const starts = await startTimes(ids);
    for (const from of starts) expect(starts.filter((t) => t >= from && t < from + 1000).length).toBeLessThanOrEqual(5);
    // 20 starts at 5 a second: the last comes at least three windows after the first.
    expect(Math.max(...starts) - Math.min(...starts)).toBeGreaterThanOrEqual(3000);
    const listed = await stack.api.request.get("/rate-limits").set("X-API-Key", stack.apiKey);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([expect.objectContaining({ name: "five-a-second", limit: 5, period: "second" })]);
  });

  it("refuses a job naming a rate limit its organization has not defined, at its field", async () => {
    const res = await stack.post("/jobs", { type: "scripted", payload: {}, rate_limit: "no-such-limit" });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_failed");
    expect(res.body.error.details).toEqual([expect.objectContaining({ path: "rate_limit" })]);
    const batch = await stack.post("/jobs/batch", {
      jobs: [
        { type: "scripted", payload: {} },
        { type: "scripted", payload: {}, rate_limit: "nope" },
      ],
    });
    expect(batch.status).toBe(400);
    expect(batch.body.error.details).toEqual([expect.objectContaining({ path: "jobs.1.rate_limit" })]);
  });
});

describe("dedupe and debounce", () => {
  it("makes exactly one job of 50 parallel posts with one dedupe key, and answers the others with it", async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => stack.post("/jobs", { type: "scripted", payload: { n: i }, dedupe_key: "order:A-1", dedupe_seconds: 600 })),
    );
    const created = answers.filter((a) => a.status === 202);
    expect(created).toHaveLength(1);
    const id = created[0]!.body.id as string;
    expect(answers.filter((a) => a.status === 200).map((a) => a.body)).toEqual(
      Array(49).fill({ id, status: expect.stringMatching(/^(pending|processing|done)$/), deduplicated: true }),
    );
    const { rows } = await stack.api.database.db.pool.query("SELECT id FROM jobs WHERE dedupe_key = 'order:A-1'");
    expect(rows).toEqual([{ id }]);
    // Once the first job failed or was cancelled, the key makes a new job.
    await stack.post(`/jobs/${id}/cancel`, {});
    await stack.waitForJob(id, (job) => ["done", "cancelled"].includes(job.status));
    if ((await stack.job(id)).status === "cancelled") {
      const again = await stack.post("/jobs", { type: "scripted", payload: {}, dedupe_key: "order:A-1" });
      expect(again.status).toBe(202);
      expect(again.body.id).not.toBe(id);
    }
  });

  it("forgets dedupe keys past the longest window (7 days), a batch at a time, and keeps the others", async () => {
    const pool = stack.api.database.db.pool;
    const old = await stack.post("/jobs", { type: "scripted", payload: {}, dedupe_key: "forget:old", dedupe_seconds: 60 });
    const young = await stack.post("/jobs", { type: "scripted", payload: {}, dedupe_key: "forget:young", dedupe_seconds: 60 });
    await pool.query("UPDATE dedupe_keys SET created_at = now() - interval '8 days' WHERE job_id = $1", [old.body.id]);
    expect(await deleteExpiredDedupeKeys(pool)).toBe(1);
    const { rows } = await pool.query("SELECT key FROM dedupe_keys WHERE key LIKE 'forget:%' ORDER BY key");
    expect(rows).toEqual([{ key: "forget:young" }]);
    expect(young.status).toBe(202);
  });

  it("leaves one pending job of 50 parallel debounced posts, replaced by each, holding the last payload accepted", async () => {
    // The first post's due time is the API clock's now + debounce_ms; the test API's clock stands where the stack
    // started (tests move it), so it is brought to the present first, or the job is due at once and handed over.
    stack.api.clock.advance(Date.now() - stack.api.clock.now().getTime());
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => stack.post("/jobs", { type: "scripted", payload: { n: i }, debounce_key: "recalc:7", debounce_ms: 3000 })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(49).fill(200), 202]);
    const ids = new Set(answers.map((a) => a.body.id as string));
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    expect(answers.filter((a) => a.status === 200).every((a) => a.body.debounced === true)).toBe(true);
    // One more, after the others were answered: it is the last accepted, so its payload is the one that runs.
    const last = await stack.post("/jobs", { type: "scripted", payload: { n: "last", span: "debounced" }, debounce_key: "recalc:7", debounce_ms: 300 });
    expect(last).toEqual({ status: 200, body: { id, status: "pending", debounced: true } });
    const done = await stack.waitForJob(id!, (job) => job.status === "done");
    expect(done.payload).toEqual({ n: "last", span: "debounced" });
    expect(log.finished("debounced")).toHaveLength(1);
    const { rows } = await stack.api.database.db.pool.query("SELECT count(*)::int AS n FROM jobs WHERE debounce_key = 'recalc:7'");
    expect(rows[0].n).toBe(1);
    // Once it has started, the key makes a new job.
    const after = await stack.post("/jobs", { type: "scripted", payload: { n: "after" }, debounce_key: "recalc:7", debounce_ms: 100 });
    expect(after.status).toBe(202);
    expect(after.body.id).not.toBe(id);
  });

  it("refuses a debounce key without its wait, with a run_at, or beside a dedupe key", async () => {
    for (const body of [
      { debounce_key: "k" },
      { debounce_key: "k", debounce_ms: 500, run_at: new Date().toISOString() },
      { debounce_key: "k", debounce_ms: 500, dedupe_key: "d" },
      { concurrency_limit: 2 },
      { concurrency_key: "" },
      { concurrency_key: "k", concurrency_limit: 0 },
      { timeout_ms: 10 },
    ]) {
      const res = await stack.post("/jobs", { type: "scripted", payload: {}, ...body });
      expect([res.status, res.body.error?.code]).toEqual([400, "validation_failed"]);
    }
  });
});

describe("queues", () => {
  it("never starts a paused type's job, even one handed over before the pause, and resumes them in order", async () => {
    const ids: string[] = [];
    const batch = await stack.post("/jobs/batch", {
      jobs: Array.from({ length: 80 }, (_, i) => ({ type: "scripted", payload: { sleep_ms: 300, span: `paused-${i}` } })),
    });
    expect(batch.status).toBe(202);
    ids.push(...batch.body.map((job: { id: string }) => job.id));
    await waitFor(async () => (log.finished("paused-").length >= 2 ? true : null), "a few started", 20_000, 20);
    try {
      await pauseAndCheck(ids);
    } finally {
      expect((await stack.api.request.patch("/queues/scripted").set(owner()).send({ paused: false })).status).toBe(200);
    }
    const jobs = await allFinal(ids);
    expect(jobs.every((j) => j.status === "done")).toBe(true);
  });

  async function pauseAndCheck(ids: string[]) {
    const paused = await stack.api.request.patch("/queues/scripted").set(owner()).send({ paused: true });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ type: "scripted", paused: true });
    const pausedAt = new Date();
    // Long enough for anything handed over before the pause to have been delivered to a worker.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // No attempt started (the start transition, timed by Postgres) once the pause had been answered.
    const { rows: late } = await stack.api.database.db.pool.query(
      "SELECT job_id FROM events WHERE job_id = ANY($1::uuid[]) AND type = 'job.started' AND time > $2",
      [ids, pausedAt],
    );
    expect(late).toEqual([]);
    const waiting = ids.filter((id) => !log.finished("paused-").some((r) => r.span === `paused-${ids.indexOf(id)}`));
    expect(waiting.length).toBeGreaterThan(0);
    expect(((await stack.job(waiting[0]!)) as unknown as { waiting_for: string }).waiting_for).toBe("queue_paused");
    const queues = await stack.api.request.get("/queues").set("X-API-Key", stack.apiKey);
    expect(queues.body.find((q: { type: string }) => q.type === "scripted")).toMatchObject({ paused: true, waiting_on_limits: waiting.length });
  }

  it("lets another organization's jobs run while one organization's jobs are held by its own limit", async () => {
    const other = await createOrg(stack.api.database.db, stack.api.deps.config);
    const { key } = await createApiKey(stack.api.database.db, other);
    const held: string[] = [];
    for (let i = 0; i < 40; i++) held.push((await enqueue({ payload: { sleep_ms: 300, span: `held-${i}` }, concurrency_key: "one-at-a-time" })).id);
    const res = await stack.api.request
      .post("/jobs")
      .set("X-API-Key", key)
      .send({ type: "scripted", payload: { span: "fair" } });
    expect(res.status).toBe(202);
    await stack.api.request.get(`/jobs/${res.body.id}`).set("X-API-Key", key).expect(200);
    await waitFor(async () => (log.finished("fair").length ? true : null), "the other organization's job ran", 10_000, 50);
    // It ran while the first organization's keyed backlog was still mostly waiting.
    expect(log.finished("held-").length).toBeLessThan(20);
    for (const id of held) await stack.post(`/jobs/${id}/cancel`, {});
  });

  it("lets owners and admins change queues and rate limits, and nobody else; another organization sees none of them", async () => {
    const member = await stack.api.request.put("/rate-limits/x").set("X-API-Key", stack.apiKey).send({ limit: 1, period: "second" });
    expect(member.status).toBe(403);
    expect((await stack.api.request.patch("/queues/scripted").set("X-API-Key", stack.apiKey).send({ paused: true })).status).toBe(403);
    const other = await createOrg(stack.api.database.db, stack.api.deps.config);
    const theirs = await stack.api.request.get("/rate-limits").set({ Authorization: `Bearer ${other.token}` });
    expect(theirs.body).toEqual([]);
    expect((await stack.api.request.delete("/rate-limits/five-a-second").set({ Authorization: `Bearer ${other.token}` })).status).toBe(404);
    expect((await stack.api.request.patch("/queues/no_such_type").set(owner()).send({ paused: true })).status).toBe(404);
    const bad = await stack.api.request.patch("/queues/scripted").set(owner()).send({ rate_limit: "undefined-limit" });
    expect(bad.status).toBe(400);
    const audited = await stack.api.database.db.pool.query("SELECT action FROM audit_log WHERE org_id = $1 AND action IN ('queue.update', 'rate_limit.put')", [
      stack.owner.orgId,
    ]);
    // Each change is in the audit log; the refused ones are not.
    expect(new Set(audited.rows.map((r) => r.action))).toEqual(new Set(["queue.update", "rate_limit.put"]));
    await stack.expectOtherOrgUntouched();
  });
});

describe("timeouts", () => {
  it("aborts an attempt past its timeout, fails it with attempt_timeout, and retries as for any failure", async () => {
    const { id } = await enqueue({ payload: { sleep_ms: 2500, ignore_abort: true, span: "slow" }, timeout_ms: 1000, max_retries: 1 });
    const job = await stack.waitForJob(id, (j) => j.status === "failed", 60_000);
    expect(job.retries).toBe(1);
    expect(job.error).toMatch(/^attempt_timeout: the attempt ran longer than its timeout of 1000 ms/);
    const messages = (await stack.logs(id)).map((l) => l.message);
    expect(messages.filter((m) => /^Attempt \d failed.*: attempt_timeout: /.test(m))).toHaveLength(2);
    await waitFor(
      async () => ((await stack.logs(id)).some((l) => /returned after its timeout/.test(l.message)) ? true : null),
      "the late return noted",
      10_000,
    );
  });
});

describe("a provider's 429", () => {
  it("pauses the type everywhere for its Retry-After, without spending the job's retries", async () => {
    slack.failNext(429, "rate_limited", { "Retry-After": "2", "Content-Type": "text/plain" });
    const first = await stack.post("/jobs", { type: "chat_notify", payload: { channel: "#ops", text: "one" } });
    expect(first.status).toBe(202);
    await slack.waitForRequests(1, 20_000);
    // The second job is created once the pause is recorded: a job started while the 429 was still on its way back
    // could not have known of it.
    await waitFor(
      async () => ((await stack.logs(first.body.id)).some((l) => /rate limited by the provider/.test(l.message)) ? true : null),
      "the pause recorded",
      20_000,
    );
    const second = await stack.post("/jobs", { type: "chat_notify", payload: { channel: "#ops", text: "two" } });
    const [one, two] = await allFinal([first.body.id, second.body.id]);
    expect([one!.status, one!.retries, two!.status]).toEqual(["done", 0, "done"]);
    // Nothing of the type reached the provider during the pause it asked for.
    const times = slack.requests.map((r) => r.receivedAt);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(1900);
    expect((await stack.logs(first.body.id)).map((l) => l.message).join("\n")).toMatch(/rate limited by the provider.*no retry is spent/);
  });
});
