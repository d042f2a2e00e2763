// "Held back", decided once (docs/reference/flow-control.md#why-a-job-waits, docs/decisions/2026-12-07-held-back-once.md):
// for each condition — its queue paused, its type paused after a provider's 429, a rate limit spent (its own, the
// type's), its concurrency key full, its organization's cap full, no worker — a due job is reported held for that
// reason by GET /jobs/:id and GET /queues, the dispatcher does not hand it over, and a claim of it (a copy handed over
// before the condition began) does not start it but puts it back in line; once the condition lifts, it is handed over
// and starts. The real API, Postgres and the dispatcher's and the claim's own statements; no worker process runs, so
// the test is the only dispatcher.
import type pg from "pg";
import {
  claimJobs,
  closeHandOverConnection,
  findDueWork,
  handOverConnection,
  jobsInFlight,
  newId,
  pauseType,
  putRateLimit,
  recordTypeState,
  takeDueJobs,
  writeOutcomes,
} from "@conveyor/db";
import { createApiKey, createOrg, type TestMember } from "@conveyor/api/testing";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

jest.setTimeout(120_000);

const TYPE = "chat_notify";
let stack: Stack;
let pool: pg.Pool;
// Each case has an organization of its own, and puts the type's state back after it: a case failing midway leaves
// nothing that holds the next one back.
let org: TestMember;
let apiKey: string;
const owner = () => ({ Authorization: `Bearer ${org.token}` });

beforeAll(async () => {
  stack = await startStack();
  pool = stack.api.database.db.pool;
});
beforeEach(async () => {
  org = await createOrg(stack.api.database.db, stack.api.deps.config);
  apiKey = (await createApiKey(stack.api.database.db, org)).key;
  await workersPresent();
});
afterEach(async () => {
  await pool.query("UPDATE type_state SET paused_until = NULL, starts = '{}' WHERE type = $1", [TYPE]);
});
afterAll(() => stack?.close());

/** Worker slots serve the type, as the dispatcher records them (a slot count older than 10 s means no worker). */
const workersPresent = (rateLimit: { limit: number; periodMs: number } | null = null, slots = 4, orgConcurrencyLimit = 0) =>
  recordTypeState(pool, { type: TYPE, slots, rateLimit, orgConcurrencyLimit });

async function post(body: Record<string, unknown> = {}): Promise<string> {
  const res = await stack.api.request
    .post("/jobs")
    .set("X-API-Key", apiKey)
    .send({ type: TYPE, payload: { channel: "held", text: "held back" }, ...body });
  expect([200, 202]).toContain(res.status);
  return res.body.id as string;
}

const waitingFor = async (id: string) => {
  const res = await stack.api.request.get(`/jobs/${id}`).set("X-API-Key", apiKey);
  expect(res.status).toBe(200);
  return (res.body as { waiting_for: string | null }).waiting_for;
};

const queue = async () => {
  const res = await stack.api.request.get("/queues").set("X-API-Key", apiKey);
  expect(res.status).toBe(200);
  return (res.body as { type: string; due: number; waiting_on_limits: number }[]).find((q) => q.type === TYPE)!;
};

/** One dispatcher round for the type, as the dispatcher makes it: the ids of this case's organization it hands over. */
async function dispatch(): Promise<string[]> {
  const marker = (await handOverConnection(pool))!;
  try {
    const found = await findDueWork(marker, TYPE, null, 0);
    const envelopes = await takeDueJobs(marker, {
      type: TYPE,
      work: found.work,
      room: 100,
      inFlightByOrg: await jobsInFlight(marker, TYPE),
      limits: found.limits,
      after: null,
      envelopeSize: () => 64,
    });
    return envelopes.flatMap((e) => e.jobs.flatMap((j) => (j.orgId === org.orgId ? [j.jobId] : [])));
  } finally {
    await closeHandOverConnection(marker);
  }
}

const state = async (id: string) =>
  (
    await pool.query<{ status: string; in_line: boolean }>(
      "SELECT j.status, q.dispatched_at IS NULL AS in_line FROM jobs j LEFT JOIN job_queue q ON q.job_id = j.id WHERE j.id = $1",
      [id],
    )
  ).rows[0];

/** A claim of `id` as a worker makes it on a delivery; the ids it started. */
async function claim(id: string): Promise<{ started: string[]; fence: string }> {
  const fence = `${newId()}:${newId()}`;
  const claimed = await claimJobs(pool, [{ id, fence }]);
  return { started: claimed.flatMap((c) => ("retryAt" in c ? [] : [c.id])), fence };
}

/** A copy of the job handed over before the condition began (an envelope in Redis): its claim must start nothing. */
async function claimOfEarlierHandOver(id: string): Promise<void> {
  await pool.query("UPDATE job_queue SET dispatched_at = now(), envelope_id = $2 WHERE job_id = $1", [id, newId()]);
  expect((await claim(id)).started).toEqual([]);
  expect(await state(id)).toEqual({ status: "pending", in_line: true });
}

/** Handed over and started: running, holding its key and its place under the cap. */
async function run(id: string): Promise<string> {
  expect(await dispatch()).toEqual([id]);
  const { started, fence } = await claim(id);
  expect(started).toEqual([id]);
  return fence;
}

const finish = (id: string, fence: string) => writeOutcomes(pool, [], [{ id, fence, status: "done", retries: 0, result: "{}", error: null, runAt: null }]);

/**
 * The job is held for `reason`: reported so, not handed over, and a claim of an earlier hand-over starts nothing. A
 * claim refused by a rate limit or a type's pause puts the job back due when that ends (`run_at` from then on).
 */
async function expectHeld(id: string, reason: string): Promise<void> {
  expect(await waitingFor(id)).toBe(reason);
  expect((await queue()).waiting_on_limits).toBe(1);
  expect(await dispatch()).toEqual([]);
  await claimOfEarlierHandOver(id);
  if (reason !== "rate_limit") expect(await waitingFor(id)).toBe(reason);
}

/** The test lifts a rate limit or a type's pause before its end: the job put back due then is due now. */
const dueNow = (id: string) => pool.query("UPDATE job_queue SET due_at = now() WHERE job_id = $1", [id]);

/** Lifted: the job waits for a worker slot only, is handed over and starts. */
async function expectRunsOnceLifted(id: string): Promise<void> {
  expect(await waitingFor(id)).toBe("capacity");
  expect((await queue()).waiting_on_limits).toBe(0);
  const fence = await run(id);
  await finish(id, fence);
}

it("its queue paused", async () => {
  await workersPresent();
  expect((await stack.api.request.patch(`/queues/${TYPE}`).set(owner()).send({ paused: true })).status).toBe(200);
  const id = await post();
  await expectHeld(id, "queue_paused");
  expect((await stack.api.request.patch(`/queues/${TYPE}`).set(owner()).send({ paused: false })).status).toBe(200);
  await expectRunsOnceLifted(id);
});

it("its type paused after a provider's 429: the dispatcher's allowance for the type is nothing", async () => {
  await workersPresent();
  await pauseType(pool, TYPE, new Date(Date.now() + 60_000));
  const id = await post();
  await expectHeld(id, "rate_limit");
  const marker = (await handOverConnection(pool))!;
  expect((await findDueWork(marker, TYPE, null, 0)).limits.typeAllowance).toBe(0);
  await closeHandOverConnection(marker);
  await pool.query("UPDATE type_state SET paused_until = NULL WHERE type = $1", [TYPE]);
  await dueNow(id);
  await expectRunsOnceLifted(id);
});

it("a rate limit it names, spent", async () => {
  await workersPresent();
  await putRateLimit(pool, org.orgId, { name: "held-back", limit: 1, periodMs: 3_600_000 });
  await pool.query("UPDATE rate_limits SET starts = ARRAY[now()] WHERE org_id = $1 AND name = 'held-back'", [org.orgId]);
  const id = await post({ rate_limit: "held-back" });
  await expectHeld(id, "rate_limit");
  await pool.query("UPDATE rate_limits SET starts = '{}' WHERE org_id = $1 AND name = 'held-back'", [org.orgId]);
  await dueNow(id);
  await expectRunsOnceLifted(id);
});

it("the type's deployment-wide rate limit, spent", async () => {
  await workersPresent({ limit: 1, periodMs: 3_600_000 });
  await pool.query("UPDATE type_state SET starts = ARRAY[now()] WHERE type = $1", [TYPE]);
  const id = await post();
  expect(await waitingFor(id)).toBe("rate_limit");
  expect((await queue()).waiting_on_limits).toBe(1);
  expect(await dispatch()).toEqual([]);
  await claimOfEarlierHandOver(id);
  await workersPresent();
  await dueNow(id);
  await expectRunsOnceLifted(id);
});

it("its concurrency key full: neither handed over nor started by a claim while the key's job runs", async () => {
  await workersPresent();
  const first = await post({ concurrency_key: "held-key" });
  const fence = await run(first);
  const id = await post({ concurrency_key: "held-key" });
  await expectHeld(id, "concurrency_key");
  await finish(first, fence);
  await expectRunsOnceLifted(id);
});

it("its organization's cap full: neither handed over nor started by a claim while the cap's jobs run", async () => {
  await workersPresent();
  expect((await stack.api.request.patch(`/queues/${TYPE}`).set(owner()).send({ concurrency_limit: 1 })).status).toBe(200);
  const first = await post();
  const fence = await run(first);
  const id = await post();
  await expectHeld(id, "org_concurrency");
  await finish(first, fence);
  await expectRunsOnceLifted(id);
  expect((await stack.api.request.patch(`/queues/${TYPE}`).set(owner()).send({ concurrency_limit: null })).status).toBe(200);
});

it("its organization's cap full under the deployment's ORG_CONCURRENCY_LIMIT", async () => {
  await workersPresent(null, 4, 1);
  const first = await post();
  const fence = await run(first);
  const id = await post();
  await expectHeld(id, "org_concurrency");
  await finish(first, fence);
  await expectRunsOnceLifted(id);
  await workersPresent();
});

it("no worker serving its type: reported so, and counted due rather than held by a limit", async () => {
  await workersPresent(null, 0);
  const id = await post();
  expect(await waitingFor(id)).toBe("no_worker");
  expect(await queue()).toMatchObject({ due: 1, waiting_on_limits: 0 });
  await workersPresent();
  await expectRunsOnceLifted(id);
});
