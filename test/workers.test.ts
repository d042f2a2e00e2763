// The worker registry and GET /workers (issue 38, the console's Workers view) through real worker processes: a worker
// registers on start with its host, pid, types and concurrency and leaves on SIGTERM; its heartbeat carries its busy
// slots and running jobs, of which each organization sees only its own (the rest is a count); every role and API keys
// read it; a SIGKILLed worker is shown gone after three missed heartbeats, and the reaper deletes it once it is old.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { reapGoneWorkers, type WorkerView } from "@conveyor/db";
import { waitFor } from "@conveyor/testkit";
import { addMember, createApiKey, createOrg } from "@conveyor/api/testing";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

const HEARTBEAT_MS = "300";
let stack: Stack;
let dir: string;
beforeAll(async () => {
  // The full view of a single-company deployment (docs/reference/time.md#alerts); test/workers-visibility.test.ts has the shared one.
  stack = await startStack({
    apiEnv: { WORKERS_VISIBLE_TO_ORGS: "true" },
    workerEnv: { WORKER_TYPES: "scripted,word_count", WORKER_HEARTBEAT_MS: HEARTBEAT_MS, WORKER_CONCURRENCY: "3" },
  });
  await stack.registerPluginTypes();
  dir = mkdtempSync(path.join(os.tmpdir(), "conveyor-workers-"));
}, 60_000);
afterEach(() => stack.expectOtherOrgUntouched());
afterAll(() => stack.close());

const list = async (headers: Record<string, string> = { "X-API-Key": stack.apiKey }) => {
  const res = await stack.api.request.get("/workers").set(headers);
  if (res.status !== 200) throw new Error(`GET /workers: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as WorkerView[];
};
const byPid = async (pid: number, headers?: Record<string, string>) => (await list(headers)).find((w) => w.pid === pid);

it("registers a worker with its host, pid, types and concurrency, registers again if its row goes, and leaves on SIGTERM", async () => {
  const worker = await stack.startWorker();
  const row = await waitFor(() => byPid(worker.pid), "the worker registered");
  expect(row).toMatchObject({
    kind: "worker",
    host: os.hostname(),
    types: ["scripted", "word_count"],
    concurrency: 3,
    slots: 6,
    busy_slots: 0,
    other_busy_slots: 0,
    state: "running",
    heartbeat_ms: 300,
    jobs: [],
  });

  // Its row deleted under it (as the reaper would after a long silence): the next heartbeat puts it back.
  await stack.api.database.db.pool.query("DELETE FROM workers WHERE id = $1", [row.id]);
  await waitFor(async () => (await byPid(worker.pid))?.id === row.id, "the worker registered again", 10_000, 100);

  expect(await worker.stop("SIGTERM")).toBe(0);
  expect(await byPid(worker.pid)).toBeUndefined();
});

it("shows each organization only its own running jobs on a worker; other work is a count of busy slots", async () => {
  const { db } = stack.api.database;
  const third = await createOrg(db, stack.api.deps.config);
  const { key: thirdKey } = await createApiKey(db, third);
  const worker = await stack.startWorker();
  const gate = path.join(dir, "release-jobs");
  const ours = (await stack.post("/jobs", { type: "scripted", payload: { until_file: gate } })).body.id as string;
  const theirs = (
    await stack.api.request
      .post("/jobs")
      .set("X-API-Key", thirdKey)
      .send({ type: "scripted", payload: { until_file: gate } })
  ).body.id as string;
  await stack.waitForJob(ours, (job) => job.status === "processing");

  const seen = await waitFor(
    async () => {
      const row = await byPid(worker.pid);
      return row?.busy_slots === 2 ? row : null;
    },
    "both jobs in the heartbeat",
    15_000,
    100,
  );
  expect(seen.jobs).toEqual([{ id: ours, type: "scripted", started_at: expect.any(String) }]);
  expect(seen.other_busy_slots).toBe(1);
  const theirView = await byPid(worker.pid, { "X-API-Key": thirdKey });
  expect(theirView?.jobs.map((j) => j.id)).toEqual([theirs]);
  expect(theirView?.other_busy_slots).toBe(1);
  // The second organization, with nothing running, sees the worker busy and none of the jobs.
  const secondView = await byPid(worker.pid, { "X-API-Key": stack.otherOrg.apiKey });
  expect(secondView).toMatchObject({ busy_slots: 2, other_busy_slots: 2, jobs: [] });

  writeFileSync(gate, "");
  await stack.waitForJob(ours, (job) => job.status === "done");
  await waitFor(async () => (await byPid(worker.pid))?.busy_slots === 0, "the slots free again", 15_000, 100);
  expect((await byPid(worker.pid))?.jobs).toEqual([]);
  await worker.stop("SIGTERM");
});

it("answers owners, admins, members and API keys alike; no credential is a 401 with the error body", async () => {
  const { db } = stack.api.database;
  const { config } = stack.api.deps;
  const worker = await stack.startWorker();
  await waitFor(() => byPid(worker.pid), "the worker registered");
  const admin = await addMember(db, config, stack.owner.orgId, "admin");
  const member = await addMember(db, config, stack.owner.orgId, "member");
  for (const token of [stack.owner.token, admin.token, member.token]) {
    expect((await byPid(worker.pid, { Authorization: `Bearer ${token}` }))?.state).toBe("running");
  }
  const anonymous = await stack.api.request.get("/workers");
  expect(anonymous.status).toBe(401);
  expect(anonymous.body).toEqual({ error: { code: "unauthorized", message: expect.any(String) } });
  expect(anonymous.headers["www-authenticate"]).toMatch(/^Bearer/);
  const unknownQuery = await stack.api.request.get("/workers?state=gone").set("X-API-Key", stack.apiKey);
  expect(unknownQuery.status).toBe(400);
  expect(unknownQuery.body.error.code).toBe("validation_failed");
  await worker.stop("SIGTERM");
});

it("shows a SIGKILLed worker as gone after three missed heartbeats, beside a live one, and the reaper deletes it once old", async () => {
  const killed = await stack.startWorker();
  const live = await stack.startWorker();
  await waitFor(async () => (await byPid(killed.pid)) && (await byPid(live.pid)), "both workers registered");
  await killed.stop("SIGKILL");

  const gone = await waitFor(
    async () => {
      const row = await byPid(killed.pid);
      return row?.state === "gone" ? row : null;
    },
    "the killed worker shown gone",
    15_000,
    100,
  );
  // Running workers first.
  const states = (await list()).map((w) => w.state);
  expect(states.lastIndexOf("running")).toBeLessThan(states.indexOf("gone"));
  expect((await byPid(live.pid))?.state).toBe("running");

  // Kept while recent (the view shows the crash), deleted once its silence is older than the keep time.
  const pool = stack.api.database.db.pool;
  const keepMs = 15 * 60_000;
  expect(await reapGoneWorkers(pool, keepMs)).toBe(0);
  await pool.query("UPDATE workers SET heartbeat_at = now() - interval '16 minutes' WHERE id = $1", [gone.id]);
  expect(await reapGoneWorkers(pool, keepMs)).toBe(1);
  expect(await byPid(killed.pid)).toBeUndefined();
  expect((await byPid(live.pid))?.state).toBe("running");
  await live.stop("SIGTERM");
});
