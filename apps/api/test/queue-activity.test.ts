// GET /queues/activity (issue 38: the Queues page's charts) against real Postgres, Redis and a real worker: each
// attempt's start counts in its minute (a retried job twice), the wait is the attempt's due-to-start time as the job
// itself records it, every queue of the organization has a dense series of 60 minutes, and another organization's
// starts never show.
import { startStack, type Stack } from "@conveyor/api/testing/stack";
import { createOrg } from "@conveyor/api/testing";
import { QUEUE_ACTIVITY_MINUTES } from "@conveyor/db";
import { responseSchemas } from "../src/declarations/responses";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
  await stack.registerPluginTypes();
  await stack.startWorker();
}, 120_000);
afterEach(() => stack?.expectOtherOrgUntouched());
afterAll(() => stack?.close());

type Activity = {
  minutes: string[];
  covered_from: string | null;
  queues: { type: string; started: (number | null)[]; wait_avg_ms: (number | null)[]; wait_p95_ms: (number | null)[] }[];
};
const auth = () => ({ Authorization: `Bearer ${stack.owner.token}` });
const activity = async (token = stack.owner.token): Promise<Activity> => {
  const res = await stack.api.request.get("/queues/activity").set({ Authorization: `Bearer ${token}` });
  expect(res.status).toBe(200);
  expect(responseSchemas.QueueActivity.validate(res.body).error).toBeUndefined();
  return res.body as Activity;
};
const minuteOf = (iso: string) => `${iso.slice(0, 16)}:00.000Z`;

describe("GET /queues/activity", () => {
  it("counts each attempt's start in its minute with its wait from due to start, in a dense series per queue", async () => {
    const empty = await activity();
    expect(empty.minutes).toHaveLength(QUEUE_ACTIVITY_MINUTES);
    expect(empty.covered_from).toBeNull();
    // Every queue of the org has a series, quiet ones too.
    const queues = await stack.api.request.get("/queues").set(auth());
    expect(empty.queues.map((q) => q.type).sort()).toEqual((queues.body as { type: string }[]).map((q) => q.type).sort());
    for (const q of empty.queues) {
      expect(q.started).toHaveLength(QUEUE_ACTIVITY_MINUTES);
      expect(q.wait_p95_ms).toHaveLength(QUEUE_ACTIVITY_MINUTES);
    }

    const once = await stack.post("/jobs", { type: "scripted", payload: {} });
    // Fails its first attempt, succeeds its second: two starts.
    const twice = await stack.post("/jobs", { type: "scripted", payload: { fail_until: 1 }, max_retries: 1 });
    const done = [
      await stack.waitForJob(once.body.id, (j) => j.status === "done", 30_000),
      await stack.waitForJob(twice.body.id, (j) => j.status === "done", 30_000),
    ];

    const after = await activity();
    const scripted = after.queues.find((q) => q.type === "scripted")!;
    const starts = scripted.started.reduce<number>((sum, n) => sum + (n ?? 0), 0);
    const { rows } = await stack.api.database.db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM events WHERE org_id = $1 AND type = 'job.started' AND job_id = ANY($2::uuid[])",
      [stack.owner.orgId, done.map((j) => j.id)],
    );
    expect(rows[0]!.n).toBe(3);
    expect(starts).toBe(3);

    // The first job's only start: its minute holds its wait as the job records it (started_at − created_at), unless
    // the other job's attempts started in the same minute (then the mean and p95 are theirs together).
    const first = done[0]!;
    const i = after.minutes.indexOf(minuteOf(first.started_at as string));
    expect(i).toBeGreaterThanOrEqual(0);
    if (scripted.started[i] === 1) {
      const wait = Date.parse(first.started_at as string) - Date.parse(first.created_at as string);
      expect(Math.abs(scripted.wait_avg_ms[i]! - wait)).toBeLessThanOrEqual(1);
      expect(Math.abs(scripted.wait_p95_ms[i]! - wait)).toBeLessThanOrEqual(1);
    } else {
      expect(scripted.wait_p95_ms[i]).toBeGreaterThanOrEqual(scripted.wait_avg_ms[i]!);
    }
    // A minute without a start has no wait.
    scripted.started.forEach((n, m) => {
      if (n === 0) expect(scripted.wait_p95_ms[m]).toBeNull();
    });

    // Another organization sees none of it.
    const other = await createOrg(stack.api.database.db, stack.api.deps.config);
    const theirs = (await activity(other.token)).queues.find((q) => q.type === "scripted");
    expect(theirs?.started.every((n) => n === 0) ?? true).toBe(true);
  });

  it("refuses a request without a credential with docs/reference/http.md#errors's body", async () => {
    const res = await stack.api.request.get("/queues/activity");
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("unauthorized");
  });
});
