// Durable steps end to end (docs/reference/lifecycle.md#waitpoints-and-durable-steps, docs/reference/robustness.md#r49, docs/reference/robustness.md#r50): real worker processes running the "stepped" test plugin. A
// three-step handler SIGKILLed inside step 2 runs step 1 once; a sleeping job frees its slot (another job runs
// meanwhile) and wakes on time though every worker process was replaced; ctx.waitFor suspends until its waitpoint is
// completed and returns its data; a repeated step name fails the job naming it.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { waitFor, type ServiceProcess } from "@conveyor/testkit";
import { SCRIPTED_PLUGIN, STEPS_PLUGIN, startStack, type Stack } from "@conveyor/api/testing/stack";

jest.setTimeout(300_000);

let stack: Stack;
let dir: string;
let markers: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "steps-"));
  markers = path.join(dir, "markers.log");
  fs.writeFileSync(markers, "");
  stack = await startStack({ workerEnv: { WORKER_PLUGINS: `${SCRIPTED_PLUGIN},${STEPS_PLUGIN}`, SCRIPTED_MARKER_FILE: markers, WORKER_LOCK_MS: "3000" } });
  await stack.api.database.db.pool.query("INSERT INTO job_types (name) VALUES ('stepped'), ('scripted') ON CONFLICT DO NOTHING");
});
afterEach(() => stack?.expectOtherOrgUntouched());
afterAll(async () => {
  await stack?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const live = () => stack.workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
async function replaceWorkers(count: number, env: Record<string, string> = {}): Promise<ServiceProcess[]> {
  await Promise.all(live().map((w) => w.stop("SIGKILL")));
  const started: ServiceProcess[] = [];
  for (let i = 0; i < count; i++) started.push(await stack.startWorker(env));
  return started;
}
const marked = (marker: string) =>
  fs
    .readFileSync(markers, "utf8")
    .split("\n")
    .filter((line) => line.startsWith(`${marker} `));
const create = async (type: string, payload: object, extra: object = {}) => {
  const res = await stack.post("/jobs", { type, payload, ...extra });
  expect(res.status).toBe(202);
  return res.body.id as string;
};
const detail = async (id: string) => (await stack.api.request.get(`/jobs/${id}`).set("X-API-Key", stack.apiKey)).body;
const eventTimes = async (id: string, type: string) =>
  (await stack.api.database.db.pool.query<{ time: Date }>("SELECT time FROM events WHERE job_id = $1 AND type = $2 ORDER BY id", [id, type])).rows.map(
    (r) => r.time,
  );

it("a three-step handler SIGKILLed inside step 2 runs step 1 once, step 2 again, and finishes", async () => {
  await replaceWorkers(3);
  const id = await create("stepped", { steps: 3, crash_in_step: 2, crash_file: path.join(dir, "crash-1"), marker: "kill" }, { max_retries: 0 });
  const job = await stack.waitForJob(id, (j) => j.status === "done" || j.status === "failed", 120_000);
  expect(job.status).toBe("done");
  const lines = marked("kill");
  expect(lines.filter((l) => l.includes("step=1 "))).toHaveLength(1);
  expect(lines.filter((l) => l.includes("step=2 "))).toHaveLength(2);
  expect(lines.filter((l) => l.includes("step=3 "))).toHaveLength(1);
  // Step 1's stored result is what the later attempt got: the first process' pid.
  const results = (job.result as { results: { i: number; pid: number }[] }).results;
  const firstPid = Number(/pid=(\d+)/.exec(lines[0]!)![1]);
  expect(results[0]).toMatchObject({ i: 1, pid: firstPid });
  expect(results[1]!.pid).not.toBe(firstPid);
  const steps = (await detail(id)).steps as { name: string; kind: string; status: string }[];
  expect(steps.map((s) => [s.name, s.kind, s.status])).toEqual([
    ["step-1", "step", "succeeded"],
    ["step-2", "step", "succeeded"],
    ["step-3", "step", "succeeded"],
  ]);
});

it("a sleeping job frees its slot, and wakes on time after every worker process was replaced", async () => {
  await replaceWorkers(1, { WORKER_CONCURRENCY: "1" });
  const sleepMs = 8_000;
  const sleeper = await create("stepped", { steps: 2, sleep_ms: sleepMs, marker: "nap" });
  await waitFor(async () => (await detail(sleeper)).waiting_for === "run_at" || undefined, "the job to sleep", 60_000);
  const suspendedAt = (await eventTimes(sleeper, "job.retrying"))[0]!;
  // The only slot is free: another job runs while it sleeps.
  const other = await create("scripted", {});
  const ran = await stack.waitForJob(other, (j) => j.status === "done", 60_000);
  expect(new Date(ran.finished_at!).getTime()).toBeLessThan(suspendedAt.getTime() + sleepMs);
  expect((await detail(sleeper)).status).toBe("pending");
  // Every process goes (SIGKILL) and new ones come: the sleep is in Postgres.
  await replaceWorkers(2);
  const job = await stack.waitForJob(sleeper, (j) => j.status === "done", 90_000);
  const started = await eventTimes(sleeper, "job.started");
  expect(started).toHaveLength(2);
  const wake = suspendedAt.getTime() + sleepMs;
  // Not before its time; late by no more than a loaded machine's few seconds.
  expect(started[1]!.getTime()).toBeGreaterThanOrEqual(wake - 50);
  expect(started[1]!.getTime() - wake).toBeLessThan(5_000);
  expect(job.retries).toBe(0);
  expect(marked("nap").filter((l) => l.includes("step=1 "))).toHaveLength(1);
  const steps = (await detail(sleeper)).steps as { name: string; kind: string; status: string }[];
  expect(steps.map((s) => [s.name, s.kind, s.status])).toEqual([
    ["step-1", "step", "succeeded"],
    ["nap", "sleep", "completed"],
    ["step-2", "step", "succeeded"],
  ]);
});

it("ctx.waitFor suspends until the waitpoint is completed and returns its data; an expired one fails the job", async () => {
  if (live().length === 0) await stack.startWorker();
  const id = await create("stepped", { steps: 1, wait: { timeout_seconds: 600 }, marker: "wait" });
  const waiting = await waitFor(
    async () => {
      const job = await detail(id);
      return job.waiting_for === "waitpoint" ? job : undefined;
    },
    "the job to wait on its waitpoint",
    60_000,
  );
  const waitpointId = (waiting.steps as { name: string; waitpoint_id: string }[]).find((s) => s.name === "approval")!.waitpoint_id;
  const listed = (await stack.api.request.get("/waitpoints?status=waiting").set("X-API-Key", stack.apiKey)).body as { id: string; job_id: string }[];
  expect(listed).toContainEqual(expect.objectContaining({ id: waitpointId, job_id: id }));
  expect((await stack.post(`/waitpoints/${waitpointId}/complete`, { data: { approved: "yes" } })).status).toBe(200);
  const job = await stack.waitForJob(id, (j) => j.status === "done", 60_000);
  expect(job.result).toMatchObject({ waited: { approved: "yes" } });
  expect(marked("wait")).toHaveLength(1);

  const doomedPoint = (await stack.post("/waitpoints", { timeout_seconds: 600 })).body.id as string;
  const doomed = await create("stepped", { steps: 1, wait: doomedPoint }, { max_retries: 3 });
  await waitFor(async () => (await detail(doomed)).waiting_for === "waitpoint" || undefined, "the job to wait", 60_000);
  expect((await stack.post(`/waitpoints/${doomedPoint}/cancel`, {})).status).toBe(200);
  const failed = await stack.waitForJob(doomed, (j) => j.status === "failed" || j.status === "cancelled", 60_000);
  expect(failed.status).toBe("failed");
  expect(failed.error).toContain(`waitpoint ${doomedPoint} was cancelled`);
  expect(failed.retries).toBe(0);
});

it("ctx.waitFor on a waitpoint already completed returns its data at once and records the wait with its waitpoint", async () => {
  if (live().length === 0) await stack.startWorker();
  const point = (await stack.post("/waitpoints", { timeout_seconds: 600 })).body.id as string;
  expect((await stack.post(`/waitpoints/${point}/complete`, { data: { approved: "earlier" } })).status).toBe(200);
  const id = await create("stepped", { steps: 1, wait: point });
  const job = await stack.waitForJob(id, (j) => j.status === "done", 60_000);
  expect(job.result).toMatchObject({ waited: { approved: "earlier" } });
  // Linked by its step: retention keeps the waitpoint while the job is there, and a replay of the attempt reads it.
  expect((await detail(id)).steps).toContainEqual(expect.objectContaining({ name: "approval", kind: "wait", status: "completed", waitpoint_id: point }));
});

it("a repeated step name, a step result over 256 KiB or one that is not JSON fails the job permanently naming it", async () => {
  if (live().length === 0) await stack.startWorker();
  const dup = await create("stepped", { steps: 1, duplicate: true }, { max_retries: 3 });
  const failed = await stack.waitForJob(dup, (j) => j.status === "failed", 60_000);
  expect(failed.error).toContain('"step-1" is used twice');
  expect(failed.retries).toBe(0);
  const big = await create("stepped", { steps: 1, big: true }, { max_retries: 3 });
  expect((await stack.waitForJob(big, (j) => j.status === "failed", 60_000)).error).toContain('step "step-1" returned');
  const odd = await create("stepped", { steps: 1, non_json: true }, { max_retries: 3 });
  const oddJob = await stack.waitForJob(odd, (j) => j.status === "failed", 60_000);
  expect(oddJob.error).toContain('step "step-1" returned a value that is not JSON');
  expect(oddJob.retries).toBe(0);
});
