// Dependencies in the job state machine (docs/reference/lifecycle.md#dependencies): a job waiting for others has no queue row (the dispatcher never
// reads it) until the final transition of its last dependency gives it one, in the same transaction; a failed or
// cancelled dependency cancels its waiting dependents down the chain. Real Postgres, the transitions themselves.
import {
  claimJobs,
  deleteFinishedJobs,
  findJobGraph,
  insertJobs,
  inTransaction,
  newId,
  cancelJobs,
  UnknownDependencyError,
  writeOutcomes,
  type NewJob,
} from "@conveyor/db";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";

let database: TestDatabase;
const pool = () => database.db.pool;
let org: string;
let otherOrg: string;

beforeAll(async () => {
  database = await createTestDatabase();
  org = newId();
  otherOrg = newId();
  await database.db.prisma.organization.createMany({
    data: [
      { id: org, name: "A" },
      { id: otherOrg, name: "B" },
    ],
  });
});
afterAll(() => database.drop());

const job = (extra: Partial<NewJob> = {}): NewJob => ({
  id: newId(),
  orgId: org,
  type: "word_count",
  payloadJson: "{}",
  maxRetries: 0,
  createdAt: new Date(),
  ...extra,
});

async function create(...jobs: NewJob[]): Promise<string[]> {
  await insertJobs(pool(), jobs);
  return jobs.map((j) => j.id);
}

type State = { status: string; queued: boolean; pending: number; waiting_for: string | null; error: string | null };
async function state(id: string): Promise<State> {
  const { rows } = await pool().query<State>(
    `SELECT j.status, q.job_id IS NOT NULL AS queued, j.dependencies_pending AS pending, conveyor_waiting_for(j) AS waiting_for, j.error
       FROM jobs j LEFT JOIN job_queue q ON q.job_id = j.id WHERE j.id = $1`,
    [id],
  );
  return rows[0]!;
}

/** Starts and finishes a job as a worker would. */
async function run(id: string, status: "done" | "failed" = "done"): Promise<void> {
  const fence = newId();
  const [claimed] = await claimJobs(pool(), [{ id, fence }]);
  expect(claimed?.id).toBe(id);
  const written = await writeOutcomes(
    pool(),
    [],
    [{ id, fence, status, retries: 0, result: status === "done" ? '{"ok":true}' : null, error: status === "failed" ? "boom" : null, runAt: null }],
  );
  expect(written.get(id)).toBe(status);
}

async function eventTypes(id: string): Promise<string[]> {
  const { rows } = await pool().query<{ type: string }>("SELECT type FROM events WHERE job_id = $1 ORDER BY id", [id]);
  return rows.map((r) => r.type);
}

test("a chain waits without a queue row and is released link by link, in the finishing transaction", async () => {
  const a = job();
  const b = job({ dependsOn: [a.id] });
  const c = job({ dependsOn: [b.id] });
  await create(a, b, c);
  expect(await state(a.id)).toMatchObject({ queued: true, waiting_for: expect.not.stringMatching("dependencies") });
  expect(await state(b.id)).toMatchObject({ status: "pending", queued: false, pending: 1, waiting_for: "dependencies" });
  await run(a.id);
  expect(await state(b.id)).toMatchObject({ status: "pending", queued: true, pending: 0 });
  expect(await state(c.id)).toMatchObject({ queued: false, waiting_for: "dependencies" });
  await run(b.id);
  await run(c.id);
  expect((await state(c.id)).status).toBe("done");
});

test("a diamond's bottom waits for both sides; a fan-in waits for every child", async () => {
  const top = job();
  const left = job({ dependsOn: [top.id] });
  const right = job({ dependsOn: [top.id] });
  const bottom = job({ dependsOn: [left.id, right.id] });
  await create(top, left, right, bottom);
  await run(top.id);
  await run(left.id);
  expect(await state(bottom.id)).toMatchObject({ queued: false, pending: 1 });
  await run(right.id);
  expect(await state(bottom.id)).toMatchObject({ queued: true, pending: 0 });

  const children = Array.from({ length: 50 }, () => job());
  const parent = job({ dependsOn: children.map((c) => c.id) });
  await create(...children, parent);
  for (const child of children.slice(0, 49)) await run(child.id);
  expect(await state(parent.id)).toMatchObject({ queued: false, pending: 1 });
  await run(children[49]!.id);
  expect(await state(parent.id)).toMatchObject({ queued: true, pending: 0 });
});

test("a failure cancels the waiting chain below it with dependency_failed, except a job that runs on failure", async () => {
  const a = job();
  const b = job({ dependsOn: [a.id] });
  const c = job({ dependsOn: [b.id] });
  const runs = job({ dependsOn: [b.id], runOnDependencyFailure: true });
  const afterRuns = job({ dependsOn: [runs.id] });
  await create(a, b, c, runs, afterRuns);
  await run(a.id, "failed");
  for (const id of [b.id, c.id]) {
    const s = await state(id);
    expect(s).toMatchObject({ status: "cancelled", queued: false, waiting_for: null });
    expect(s.error).toMatch(/^dependency_failed: job [0-9a-f-]{36}, which this job depends on, (failed|was cancelled)\.$/);
    expect(await eventTypes(id)).toEqual(["job.created", "job.cancelled"]);
  }
  expect((await state(b.id)).error).toContain(`job ${a.id}, which this job depends on, failed.`);
  expect((await state(c.id)).error).toContain(`job ${b.id}, which this job depends on, was cancelled.`);
  expect(await state(runs.id)).toMatchObject({ status: "pending", queued: true });
  expect(await state(afterRuns.id)).toMatchObject({ status: "pending", queued: false });
  const { rows } = await pool().query("SELECT message, level FROM job_logs WHERE job_id = $1", [c.id]);
  expect(rows).toEqual([{ level: "warn", message: expect.stringMatching(/^Cancelled before it started: dependency_failed: /) }]);
});

test("cancelling a job cancels its waiting dependents in the same transaction", async () => {
  const a = job();
  const b = job({ dependsOn: [a.id] });
  const c = job({ dependsOn: [b.id] });
  await create(a, b, c);
  await inTransaction(pool(), (tx) => cancelJobs(tx, { orgId: org, ids: [a.id], by: "a test" }));
  expect((await state(b.id)).status).toBe("cancelled");
  expect((await state(c.id)).status).toBe("cancelled");
  // Cancelling a dependent and its dependency together settles each once.
  const d = job();
  const e = job({ dependsOn: [d.id] });
  const f = job({ dependsOn: [d.id, e.id], runOnDependencyFailure: true });
  await create(d, e, f);
  await inTransaction(pool(), (tx) => cancelJobs(tx, { orgId: org, ids: [d.id, e.id], by: "a test" }));
  expect(await state(f.id)).toMatchObject({ status: "pending", queued: true, pending: 0 });
});

test("a job created on finished dependencies is due at once, or cancelled when one failed", async () => {
  const done = job();
  const failed = job();
  await create(done, failed);
  await run(done.id);
  await run(failed.id, "failed");
  const [onDone] = await create(job({ dependsOn: [done.id] }));
  expect(await state(onDone!)).toMatchObject({ status: "pending", queued: true });
  const below = job();
  const onFailed = job({ dependsOn: [failed.id, done.id] });
  const belowIt = { ...below, dependsOn: [onFailed.id] };
  await create(onFailed, belowIt);
  expect(await state(onFailed.id)).toMatchObject({ status: "cancelled", queued: false });
  expect(await state(belowIt.id)).toMatchObject({ status: "cancelled" });
  const [runsAnyway] = await create(job({ dependsOn: [failed.id], runOnDependencyFailure: true }));
  expect(await state(runsAnyway!)).toMatchObject({ status: "pending", queued: true });
});

test("a dependency of another organization, or no job, refuses the whole call", async () => {
  const theirs = job({ orgId: otherOrg });
  await create(theirs);
  const mine = job({ dependsOn: [theirs.id] });
  await expect(insertJobs(pool(), [job(), mine])).rejects.toBeInstanceOf(UnknownDependencyError);
  await expect(insertJobs(pool(), [job({ dependsOn: [newId()] })])).rejects.toBeInstanceOf(UnknownDependencyError);
  const { rows } = await pool().query("SELECT 1 FROM jobs WHERE id = $1", [mine.id]);
  expect(rows).toHaveLength(0);
});

test("a dependency finishing while its dependent is cancelled ends in exactly one state", async () => {
  for (let round = 0; round < 60; round++) {
    const a = job();
    const b = job({ dependsOn: [a.id] });
    await create(a, b);
    const fence = newId();
    await claimJobs(pool(), [{ id: a.id, fence }]);
    await Promise.all([
      writeOutcomes(pool(), [], [{ id: a.id, fence, status: round % 2 ? "done" : "failed", retries: 0, result: "{}", error: null, runAt: null }]),
      inTransaction(pool(), (tx) => cancelJobs(tx, { orgId: org, ids: [b.id], by: "a race" })),
    ]);
    const s = await state(b.id);
    expect(s.status).toBe("cancelled");
    // Also when the release won the row lock: its queue row does not outlive the cancellation.
    expect(s.queued).toBe(false);
    expect(await eventTypes(b.id)).toEqual(["job.created", "job.cancelled"]);
  }
});

test("a dependent created while its dependency finishes is settled either way", async () => {
  for (let round = 0; round < 20; round++) {
    const a = job();
    await create(a);
    const fence = newId();
    await claimJobs(pool(), [{ id: a.id, fence }]);
    const b = job({ dependsOn: [a.id] });
    await Promise.all([writeOutcomes(pool(), [], [{ id: a.id, fence, status: "done", retries: 0, result: "{}", error: null, runAt: null }]), create(b)]);
    expect(await state(b.id)).toMatchObject({ status: "pending", queued: true, pending: 0 });
  }
});

test("retention keeps a finished job while a live job depends on it", async () => {
  const a = job();
  const b = job({ dependsOn: [a.id] });
  const c = job({ dependsOn: [a.id, b.id], runOnDependencyFailure: true });
  await create(a, b, c);
  await run(a.id);
  await pool().query("UPDATE jobs SET finished_at = now() - interval '90 days' WHERE id = $1", [a.id]);
  await deleteFinishedJobs(pool(), { before: new Date(), limit: 100 });
  expect((await state(a.id)).status).toBe("done");
  await run(b.id);
  await run(c.id);
  await pool().query("UPDATE jobs SET finished_at = now() - interval '90 days' WHERE id = ANY($1::uuid[])", [[a.id, b.id, c.id]]);
  await deleteFinishedJobs(pool(), { before: new Date(), limit: 100 });
  const { rows } = await pool().query("SELECT count(*)::int AS n FROM job_dependencies WHERE job_id = ANY($1::uuid[]) OR depends_on_id = ANY($1::uuid[])", [
    [a.id, b.id, c.id],
  ]);
  expect(rows[0].n).toBe(0);
});

test("a lost attempt taken over after a cancellation request settles the dependents too", async () => {
  const a = job();
  const b = job({ dependsOn: [a.id] });
  await create(a, b);
  await claimJobs(pool(), [{ id: a.id, fence: newId() }]);
  await inTransaction(pool(), (tx) => cancelJobs(tx, { orgId: org, ids: [a.id], by: "a test" }));
  expect((await state(b.id)).status).toBe("pending");
  // Another delivery of the job: its first attempt is gone, and the job is cancelled instead of run again.
  expect(await claimJobs(pool(), [{ id: a.id, fence: newId() }])).toEqual([]);
  expect((await state(a.id)).status).toBe("cancelled");
  expect(await state(b.id)).toMatchObject({ status: "cancelled", error: expect.stringContaining("dependency_failed") });
});

test("the graph of a job answers at most the limit, the job first, and says when it left some out", async () => {
  const root = job();
  const leaves = Array.from({ length: 12 }, () => job({ dependsOn: [root.id] }));
  const below = job({ dependsOn: [leaves[0]!.id] });
  await create(root, ...leaves, below);
  const whole = (await findJobGraph(pool(), org, below.id, 100))!;
  expect(whole.truncated).toBe(false);
  expect(whole.nodes).toHaveLength(14);
  expect((whole.nodes[0] as { id: string }).id).toBe(below.id);
  expect(whole.edges).toHaveLength(13);
  expect(whole.edges).toContainEqual({ from: root.id, to: leaves[5]!.id });
  const cut = (await findJobGraph(pool(), org, below.id, 5))!;
  expect(cut.truncated).toBe(true);
  expect(cut.nodes.slice(0, 3).map((n) => (n as { id: string }).id)).toEqual([below.id, leaves[0]!.id, root.id]);
  expect(cut.nodes).toHaveLength(5);
  expect(await findJobGraph(pool(), otherOrg, below.id, 100)).toBeNull();
});
