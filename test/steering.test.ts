// Retention and bulk cancel through real worker processes (docs/reference/lifecycle.md#steering): the leader worker deletes a job that finished
// more than JOB_RETENTION_DAYS ago — with the logs and events its real run wrote — and leaves recent and live jobs;
// a bulk cancel by filter stops a running handler on its worker. The second organization stays untouched.
import { waitFor } from "@conveyor/testkit";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ workerEnv: { WORKER_TYPES: "scripted,word_count" } });
  await stack.registerPluginTypes();
}, 60_000);
afterEach(() => stack.expectOtherOrgUntouched());
afterAll(() => stack.close());

const rowsOf = async (table: string, jobId: string) =>
  Number((await stack.api.database.db.pool.query(`SELECT count(*) AS n FROM ${table} WHERE job_id = $1`, [jobId])).rows[0].n);

it("deletes a job that finished more than JOB_RETENTION_DAYS ago with its logs and events, and keeps recent and live ones", async () => {
  const first = await stack.startWorker({ WORKER_TYPES: "word_count" });
  const old = (await stack.post("/jobs", { type: "word_count", payload: { text: "old news" } })).body.id as string;
  const recent = (await stack.post("/jobs", { type: "word_count", payload: { text: "fresh news" } })).body.id as string;
  await stack.waitForJob(old, (j) => j.status === "done");
  await stack.waitForJob(recent, (j) => j.status === "done");
  // No worker serves `scripted` now: this one stays pending, however old.
  const live = (await stack.post("/jobs", { type: "scripted", payload: {} })).body.id as string;
  await first.stop("SIGTERM");

  expect(await rowsOf("job_logs", old)).toBeGreaterThan(0);
  expect(await rowsOf("events", old)).toBeGreaterThan(0);
  const pool = stack.api.database.db.pool;
  await pool.query("UPDATE jobs SET finished_at = now() - interval '31 days', created_at = now() - interval '31 days' WHERE id = $1", [old]);
  await pool.query("UPDATE jobs SET finished_at = now() - interval '29 days' WHERE id = $1", [recent]);
  await pool.query("UPDATE jobs SET created_at = now() - interval '400 days' WHERE id = $1", [live]);

  // A new leader (the default JOB_RETENTION_DAYS, 30) sweeps as soon as it leads.
  const leader = await stack.startWorker({ WORKER_TYPES: "word_count" });
  await waitFor(
    async () => (await stack.api.request.get(`/jobs/${old}`).set("X-API-Key", stack.apiKey)).status === 404,
    "the expired job deleted",
    20_000,
    100,
  );
  expect([await rowsOf("job_logs", old), await rowsOf("events", old)]).toEqual([0, 0]);
  expect((await stack.job(recent)).status).toBe("done");
  expect((await stack.job(live)).status).toBe("pending");
  expect((await stack.logs(recent)).length).toBeGreaterThan(0);
  await leader.waitForOutput(/retention: deleted 1 job\(s\)/, 5_000);
  await leader.stop("SIGTERM");
});

it("bulk cancel by filter stops a running handler on its worker and cancels the waiting ones", async () => {
  await stack.startWorker({ WORKER_TYPES: "scripted" });
  const running = (await stack.post("/jobs", { type: "scripted", payload: { sleep_ms: 60_000, marker: "bulk-running" } })).body.id as string;
  await stack.waitForJob(running, (j) => j.status === "processing", 15_000);
  await waitFor(async () => (await stack.logs(running)).some((l) => l.message.startsWith("scripted attempt")), "the handler running", 10_000, 50);
  const delayed = (await stack.post("/jobs", { type: "scripted", payload: { marker: "bulk-delayed" }, run_at: new Date(Date.now() + 60_000).toISOString() }))
    .body.id as string;

  const res = await stack.post("/jobs/bulk", { action: "cancel", filter: { type: "scripted", q: "bulk-running" } });
  expect(res.body).toEqual({ action: "cancel", matched: 1, affected: 1, has_more: false });
  const started = Date.now();
  await stack.waitForJob(running, (j) => j.status === "cancelled", 10_000);
  expect(Date.now() - started).toBeLessThan(5_000);
  expect((await stack.job(delayed)).status).toBe("pending");

  expect((await stack.post("/jobs/bulk", { action: "cancel", filter: { status: "pending", type: "scripted" } })).body).toMatchObject({ affected: 1 });
  expect((await stack.job(delayed)).status).toBe("cancelled");
  // Both replayed in bulk: the replay of the sleeping one (pending, or already running) is found and stopped again.
  const replay = await stack.post("/jobs/bulk", { action: "replay", ids: [running, delayed] });
  expect(replay.body).toEqual({ action: "replay", matched: 2, affected: 2, has_more: false });
  expect((await stack.post("/jobs/bulk", { action: "cancel", filter: { q: "bulk-running", status: "pending,processing" } })).body).toEqual({
    action: "cancel",
    matched: 1,
    affected: 1,
    has_more: false,
  });
  const [again] = (await stack.api.database.db.pool.query<{ id: string }>("SELECT id FROM jobs WHERE replay_of = $1", [running])).rows;
  await stack.waitForJob(again!.id, (j) => j.status === "cancelled", 10_000);
});
