// The worker protocol (docs/reference/lifecycle.md#your-own-workers, docs/reference/robustness.md#r59) through the API against real Postgres: worker keys and what they may
// not do, leases granted as the built-in workers' starts are (limits included), the long-poll, every call fenced by
// its token (a lapsed lease taken over as an interruption, its old token answering 409), steps, sleeps and
// waitpoints — and another organization, whose types a worker key cannot lease and which does not see the worker.
import { randomUUID } from "node:crypto";
import { type SecondOrg, type TestApi, type TestMember, addMember, startTwoOrgs } from "@conveyor/api/testing";
import { waitFor } from "@conveyor/testkit";
import { responseSchemas } from "../src/declarations/responses";

let api: TestApi;
let alice: TestMember;
let bob: TestMember;
let aliceKey: string;
let second: SecondOrg;
let close: () => Promise<void>;
let workerKey: string;

const as = (member: TestMember) => ({ Authorization: `Bearer ${member.token}` });
const worker = () => ({ "X-API-Key": workerKey });
const db = () => api.database.db.pool;

beforeAll(async () => {
  ({ api, alice, bob, aliceKey, second, close } = await startTwoOrgs());
  for (const name of ["resize", "keyed", "steps_demo", "flaky", "served", "stoppable"]) {
    await api.request
      .post("/job-types")
      .set(as(alice))
      .send({ name, payload_schema: { type: "object" } })
      .expect(201);
  }
  await api.request
    .post("/job-types")
    .set(as(bob))
    .send({ name: "bobs_type", payload_schema: { type: "object" } })
    .expect(201);
  const created = await api.request.post("/api-keys").set(as(alice)).send({ name: "python workers", role: "worker" });
  expect(created.status).toBe(201);
  expect(created.body.role).toBe("worker");
  workerKey = created.body.key;
});
afterAll(() => close());

async function enqueue(body: object): Promise<string> {
  const res = await api.request.post("/jobs").set({ "X-API-Key": aliceKey }).send(body);
  expect(res.status).toBe(202);
  return res.body.id as string;
}

async function lease(body: object): Promise<{ id: string; lease_token: string; attempt: number; steps: { name: string; kind: string; status: string }[] }[]> {
  const res = await api.request.post("/worker/lease").set(worker()).send(body);
  expect(res.status).toBe(200);
  for (const job of res.body) expect(responseSchemas.LeasedJob.validate(job).error).toBeUndefined();
  return res.body;
}

const job = async (id: string) => (await api.request.get(`/jobs/${id}`).set(as(alice))).body;
/** Lease calls waiting on the API (its gauge). */
const longPolls = async () => Number(/^conveyor_worker_long_polls (\d+)/m.exec((await api.request.get("/metrics")).text)?.[1] ?? 0);

describe("worker keys", () => {
  it("are made by owners and admins only, and do nothing but the worker protocol", async () => {
    const member = await addMember(api.database.db, api.deps.config, alice.orgId, "member");
    await api.request.post("/api-keys").set(as(member)).send({ name: "nope", role: "worker" }).expect(403);
    await api.request.get("/jobs").set(worker()).expect(403);
    await api.request.post("/jobs").set(worker()).send({ type: "resize", payload: {} }).expect(403);
    await api.request.get("/job-types").set(worker()).expect(403);
    // A member's key, a user token: not the worker protocol.
    await api.request
      .post("/worker/lease")
      .set({ "X-API-Key": aliceKey })
      .send({ types: ["resize"] })
      .expect(403);
    await api.request
      .post("/worker/lease")
      .set(as(alice))
      .send({ types: ["resize"] })
      .expect(403);
    await api.request
      .post("/worker/lease")
      .send({ types: ["resize"] })
      .expect(401);
    // Sent as a bearer token, as other languages' HTTP clients like to.
    await api.request
      .post("/worker/lease")
      .set({ Authorization: `Bearer ${workerKey}` })
      .send({ types: ["resize"] })
      .expect(200);
  });

  it("cannot lease another organization's types, nor unknown ones", async () => {
    const res = await api.request
      .post("/worker/lease")
      .set(worker())
      .send({ types: ["bobs_type"] });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_failed");
    await api.request
      .post("/worker/lease")
      .set(worker())
      .send({ types: ["send_email"] })
      .expect(400);
  });
});

describe("leases", () => {
  it("leases a job, completes it under its token, and refuses the token afterwards with 409", async () => {
    const id = await enqueue({ type: "resize", payload: { url: "u" } });
    const [leased] = await lease({ types: ["resize"], max: 5 });
    expect(leased).toMatchObject({ id, type: "resize", payload: { url: "u" }, attempt: 1, steps: [], dependencies: [] });
    expect((await job(id)).status).toBe("processing");
    const beat = await api.request
      .post(`/worker/jobs/${id}/heartbeat`)
      .set(worker())
      .send({ lease_token: leased!.lease_token, progress: { fraction: 0.5, message: "half" }, logs: [{ level: "info", message: "hello" }] });
    expect(beat.status).toBe(200);
    expect(beat.body.cancel_requested).toBe(false);
    const done = await api.request
      .post(`/worker/jobs/${id}/complete`)
      .set(worker())
      .send({ lease_token: leased!.lease_token, result: { ok: true } });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ status: "done" });
    const after = await job(id);
    expect(after).toMatchObject({ status: "done", result: { ok: true } });
    expect(after.progress).toMatchObject({ fraction: 0.5, message: "half" });
    const logs = (await api.request.get(`/jobs/${id}/logs`).set(as(alice))).body as { message: string }[];
    expect(logs.map((l) => l.message)).toContain("hello");
    for (const call of ["complete", "heartbeat", "fail"]) {
      const again = await api.request
        .post(`/worker/jobs/${id}/${call}`)
        .set(worker())
        .send({ lease_token: leased!.lease_token, ...(call === "fail" ? { error: "x" } : {}) });
      expect([call, again.status, again.body.error.code]).toEqual([call, 409, "lease_lost"]);
    }
    await api.request.post(`/worker/jobs/${id}/complete`).set(worker()).send({ lease_token: "lt_forged" }).expect(409);
  });

  it("long-polls: a job posted while a lease call waits is answered at once", async () => {
    const started = Date.now();
    const polled = api.request
      .post("/worker/lease")
      .set(worker())
      .send({ types: ["resize"], wait_seconds: 10 });
    const waiting = polled.then((r) => r);
    await new Promise((r) => setTimeout(r, 300));
    expect(api.deps).toBeDefined();
    const id = await enqueue({ type: "resize", payload: {} });
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body.map((j: { id: string }) => j.id)).toEqual([id]);
    expect(Date.now() - started).toBeLessThan(3_000);
    await api.request.post(`/worker/jobs/${id}/complete`).set(worker()).send({ lease_token: res.body[0].lease_token }).expect(200);
    const empty = await api.request
      .post("/worker/lease")
      .set(worker())
      .send({ types: ["resize"], wait_seconds: 1 });
    expect(empty.body).toEqual([]);
  });

  it("takes over a lapsed lease as an interruption; the old token then answers 409 and changes nothing", async () => {
    const id = await enqueue({ type: "resize", payload: {} });
    const [first] = await lease({ types: ["resize"], lease_seconds: 1 });
    expect(first!.id).toBe(id);
    // Lapsed (1 s) and past the take-over grace (2 s): the next lease call takes it over.
    await new Promise((r) => setTimeout(r, 3_300));
    await api.request.post(`/worker/jobs/${id}/heartbeat`).set(worker()).send({ lease_token: first!.lease_token }).expect(409);
    const [second] = await lease({ types: ["resize"], wait_seconds: 2 });
    expect(second!.id).toBe(id);
    expect(second!.lease_token).not.toBe(first!.lease_token);
    expect(second!.attempt).toBe(1);
    const { rows } = await db().query("SELECT interruptions, status FROM jobs WHERE id = $1", [id]);
    expect(rows[0]).toEqual({ interruptions: 1, status: "processing" });
    await api.request
      .post(`/worker/jobs/${id}/complete`)
      .set(worker())
      .send({ lease_token: first!.lease_token, result: { stale: true } })
      .expect(409);
    await api.request
      .post(`/worker/jobs/${id}/complete`)
      .set(worker())
      .send({ lease_token: second!.lease_token, result: { fresh: true } })
      .expect(200);
    expect((await job(id)).result).toEqual({ fresh: true });
  });

  it("grants leases within the same limits as the built-in workers: a concurrency key of limit 1 starts one job at a time", async () => {
    const a = await enqueue({ type: "keyed", payload: { n: 1 }, concurrency_key: "phone:1" });
    const b = await enqueue({ type: "keyed", payload: { n: 2 }, concurrency_key: "phone:1" });
    const leased = await lease({ types: ["keyed"], max: 10 });
    expect(leased.map((j) => j.id)).toEqual([a]);
    expect(await lease({ types: ["keyed"], max: 10 })).toEqual([]);
    await api.request.post(`/worker/jobs/${a}/complete`).set(worker()).send({ lease_token: leased[0]!.lease_token }).expect(200);
    const next = await lease({ types: ["keyed"], max: 10, wait_seconds: 2 });
    expect(next.map((j) => j.id)).toEqual([b]);
    await api.request.post(`/worker/jobs/${b}/complete`).set(worker()).send({ lease_token: next[0]!.lease_token }).expect(200);
    // A paused queue starts nothing.
    await api.request.patch("/queues/keyed").set(as(alice)).send({ paused: true }).expect(200);
    const c = await enqueue({ type: "keyed", payload: { n: 3 } });
    expect(await lease({ types: ["keyed"], max: 10 })).toEqual([]);
    await api.request.patch("/queues/keyed").set(as(alice)).send({ paused: false }).expect(200);
    const resumed = await lease({ types: ["keyed"], max: 10, wait_seconds: 2 });
    expect(resumed.map((j) => j.id)).toEqual([c]);
    await api.request.post(`/worker/jobs/${c}/complete`).set(worker()).send({ lease_token: resumed[0]!.lease_token }).expect(200);
  });

  it("takes a released job back to pending without spending a retry", async () => {
    const id = await enqueue({ type: "flaky", payload: {}, max_retries: 1 });
    const [leased] = await lease({ types: ["flaky"] });
    const released = await api.request.post(`/worker/jobs/${id}/release`).set(worker()).send({ lease_token: leased!.lease_token });
    expect(released.body).toEqual({ status: "pending" });
    expect(await job(id)).toMatchObject({ status: "pending", retries: 0 });
    const [again] = await lease({ types: ["flaky"], wait_seconds: 2 });
    expect(again).toMatchObject({ id, attempt: 1 });
    await api.request.post(`/worker/jobs/${id}/complete`).set(worker()).send({ lease_token: again!.lease_token }).expect(200);
  });

  it("retries a failed attempt while retries are left, and fails at once when not retryable", async () => {
    const id = await enqueue({ type: "flaky", payload: {}, max_retries: 2 });
    const [first] = await lease({ types: ["flaky"] });
    const failed = await api.request.post(`/worker/jobs/${id}/fail`).set(worker()).send({ lease_token: first!.lease_token, error: "upstream timed out" });
    expect(failed.body).toEqual({ status: "pending" });
    expect(await job(id)).toMatchObject({ status: "pending", retries: 1, error: "upstream timed out" });
    await db().query("UPDATE job_queue SET due_at = now() WHERE job_id = $1", [id]);
    const [again] = await lease({ types: ["flaky"], wait_seconds: 2 });
    expect(again).toMatchObject({ id, attempt: 2 });
    const permanent = await api.request
      .post(`/worker/jobs/${id}/fail`)
      .set(worker())
      .send({ lease_token: again!.lease_token, error: "bad input", retryable: false });
    expect(permanent.body).toEqual({ status: "failed" });
    expect(await job(id)).toMatchObject({ status: "failed", retries: 1 });
  });
});

describe("waiting_for of an organization's own type", () => {
  it("says no_worker until a protocol worker of the organization serves the type, then capacity", async () => {
    const first = await enqueue({ type: "served", payload: {} });
    expect((await job(first)).waiting_for).toBe("no_worker");
    const workerId = randomUUID();
    const [leased] = await lease({ types: ["served"], worker_id: workerId });
    expect(leased!.id).toBe(first);
    // The built-in workers never serve the type: its worker is the one that just leased.
    const second = await enqueue({ type: "served", payload: {} });
    expect((await job(second)).waiting_for).toBe("capacity");
    await api.request.post(`/worker/jobs/${first}/complete`).set(worker()).send({ lease_token: leased!.lease_token }).expect(200);
    const [next] = await lease({ types: ["served"], worker_id: workerId, wait_seconds: 2 });
    await api.request.post(`/worker/jobs/${second}/complete`).set(worker()).send({ lease_token: next!.lease_token }).expect(200);
  });
});

describe("POST /worker/outcomes", () => {
  it("records several outcomes in one call, each as its own endpoint would, and answers a lost lease per report", async () => {
    const ids = [
      await enqueue({ type: "flaky", payload: { n: 1 }, max_retries: 2 }),
      await enqueue({ type: "flaky", payload: { n: 2 }, max_retries: 2 }),
      await enqueue({ type: "flaky", payload: { n: 3 }, max_retries: 2 }),
      await enqueue({ type: "flaky", payload: { n: 4 }, max_retries: 2 }),
    ];
    const leased = await lease({ types: ["flaky"], max: 10 });
    expect(leased.map((j) => j.id).sort()).toEqual([...ids].sort());
    const tokenOf = (id: string) => leased.find((j) => j.id === id)!.lease_token;
    const res = await api.request
      .post("/worker/outcomes")
      .set(worker())
      .send({
        outcomes: [
          { job_id: ids[0], lease_token: tokenOf(ids[0]!), outcome: "complete", result: { n: 1 } },
          { job_id: ids[1], lease_token: tokenOf(ids[1]!), outcome: "fail", error: "upstream timed out" },
          { job_id: ids[2], lease_token: tokenOf(ids[2]!), outcome: "fail", error: "bad input", retryable: false },
          { job_id: ids[3], lease_token: "lt_forged", outcome: "complete" },
        ],
      });
    expect(res.status).toBe(200);
    expect(responseSchemas.OutcomeResults.validate(res.body).error).toBeUndefined();
    expect(res.body.results).toEqual([
      { job_id: ids[0], status: "done", lease_lost: false },
      { job_id: ids[1], status: "pending", lease_lost: false },
      { job_id: ids[2], status: "failed", lease_lost: false },
      { job_id: ids[3], status: null, lease_lost: true },
    ]);
    expect(await job(ids[0]!)).toMatchObject({ status: "done", result: { n: 1 } });
    expect(await job(ids[1]!)).toMatchObject({ status: "pending", retries: 1, error: "upstream timed out" });
    expect(await job(ids[2]!)).toMatchObject({ status: "failed", retries: 0 });
    expect(await job(ids[3]!)).toMatchObject({ status: "processing" });
    // A report made twice is refused the second time, as /complete's 409.
    const again = await api.request
      .post("/worker/outcomes")
      .set(worker())
      .send({
        outcomes: [
          { job_id: ids[0], lease_token: tokenOf(ids[0]!), outcome: "complete" },
          { job_id: ids[3], lease_token: tokenOf(ids[3]!), outcome: "release" },
        ],
      });
    expect(again.body.results).toEqual([
      { job_id: ids[0], status: null, lease_lost: true },
      { job_id: ids[3], status: "pending", lease_lost: false },
    ]);
    // A member's credentials cannot report.
    await api.request
      .post("/worker/outcomes")
      .set(as(alice))
      .send({ outcomes: [{ job_id: ids[3], lease_token: "x", outcome: "complete" }] })
      .expect(403);
  });
});

describe("steps, sleeps and waitpoints", () => {
  it("checkpoints a step, sleeps without spending a retry, waits for a waitpoint, and replays them on the next attempts", async () => {
    const id = await enqueue({ type: "steps_demo", payload: {} });
    const [one] = await lease({ types: ["steps_demo"] });
    const call = (path: string, body: object) => api.request.post(`/worker/jobs/${id}/${path}`).set(worker()).send(body);
    const step = await call("steps/upload", { lease_token: one!.lease_token, result: { key: "a.png" } });
    expect(step.body).toEqual({ name: "upload", recorded: true, result: { key: "a.png" } });
    expect((await call("steps/upload", { lease_token: one!.lease_token, result: { key: "other" } })).body).toEqual({
      name: "upload",
      recorded: false,
      result: { key: "a.png" },
    });
    const slept = await call("sleep", { lease_token: one!.lease_token, name: "nap", duration_ms: 400 });
    expect(slept.body.outcome).toBe("suspended");
    expect(await job(id)).toMatchObject({ status: "pending", retries: 0 });
    await call("heartbeat", { lease_token: one!.lease_token }).expect(409);

    const [two] = await lease({ types: ["steps_demo"], wait_seconds: 5 });
    expect(two!.id).toBe(id);
    expect(two!.steps.map((s) => [s.name, s.kind])).toEqual([
      ["upload", "step"],
      ["nap", "sleep"],
    ]);
    expect((await call("sleep", { lease_token: two!.lease_token, name: "nap", duration_ms: 400 })).body.outcome).toBe("ended");
    const waited = await call("wait-for", { lease_token: two!.lease_token, name: "approval", timeout_seconds: 600 });
    expect(waited.body.outcome).toBe("suspended");
    const waitpointId = waited.body.waitpoint_id as string;
    expect((await job(id)).waiting_for).toBe("waitpoint");
    await api.request
      .post(`/waitpoints/${waitpointId}/complete`)
      .set({ "X-API-Key": aliceKey })
      .send({ data: { approved: true } })
      .expect(200);

    const [three] = await lease({ types: ["steps_demo"], wait_seconds: 5 });
    expect(three!.id).toBe(id);
    const replayed = await call("wait-for", { lease_token: three!.lease_token, name: "approval" });
    expect(replayed.body).toMatchObject({ outcome: "ended", status: "completed", data: { approved: true } });
    await call("complete", { lease_token: three!.lease_token, result: { done: true } }).expect(200);
    const finished = await job(id);
    expect(finished).toMatchObject({ status: "done", retries: 0 });
    expect(finished.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual(
      expect.arrayContaining([
        ["upload", "succeeded"],
        ["nap", "completed"],
        ["approval", "completed"],
      ]),
    );
  });
});

describe("GET /workers", () => {
  it("shows the organization its own protocol workers, and no other organization", async () => {
    const workerId = randomUUID();
    await api.request
      .post("/worker/lease")
      .set(worker())
      .send({ types: ["resize"], worker_id: workerId, worker_name: "py-1", worker_version: "conveyor-python/0.1.0", concurrency: 50 })
      .expect(200);
    const mine = (await api.request.get("/workers").set(as(alice))).body as { id: string; kind?: string; concurrency: number; state: string }[];
    expect(mine.find((w) => w.id === workerId)).toMatchObject({ kind: "protocol", concurrency: 50, state: "running" });
    // Its own types are served by its own workers only: the deployment's capacity rows (types the organization used) leave them out.
    const capacityTypes = (mine as unknown as { kind: string; type?: string }[]).filter((w) => w.kind === "capacity").map((w) => w.type);
    expect(capacityTypes).not.toContain("resize");
    for (const w of mine) expect(responseSchemas.WorkerListItem.validate(w).error).toBeUndefined();
    const theirs = (await api.request.get("/workers").set(as(bob))).body as { id: string }[];
    expect(theirs.find((w) => w.id === workerId)).toBeUndefined();
    expect(second).toBeDefined();
  });

  it("forgets a worker that says it stopped: it leaves the list, and its type's jobs wait for no_worker again", async () => {
    const workerId = randomUUID();
    await lease({ types: ["stoppable"], worker_id: workerId, wait_seconds: 0 });
    const waiting = await enqueue({ type: "stoppable", payload: {}, run_at: new Date(Date.now() + 3_600_000).toISOString() });
    const listed = async () => ((await api.request.get("/workers").set(as(alice))).body as { id: string }[]).some((w) => w.id === workerId);
    expect(await listed()).toBe(true);
    // Another organization's worker key cannot stop it (nothing of theirs is called that), and stopping is idempotent.
    const bobsKey = (await api.request.post("/api-keys").set(as(bob)).send({ name: "bob workers", role: "worker" })).body.key as string;
    await api.request.post("/worker/stop").set({ "X-API-Key": bobsKey }).send({ worker_id: workerId }).expect(204);
    expect(await listed()).toBe(true);
    await api.request.post("/worker/stop").set(worker()).send({ worker_id: workerId }).expect(204);
    await api.request.post("/worker/stop").set(worker()).send({ worker_id: workerId }).expect(204);
    expect(await listed()).toBe(false);
    await api.request.post(`/jobs/${waiting}/run-now`).set(as(alice)).expect(200);
    expect((await job(waiting)).waiting_for).toBe("no_worker");
    // A user token is not a worker key; a malformed id is a validation error.
    expect((await api.request.post("/worker/stop").set(as(alice)).send({ worker_id: workerId })).status).toBe(403);
    expect((await api.request.post("/worker/stop").set(worker()).send({ worker_id: "nope" })).body.error.code).toBe("validation_failed");
    await api.request.post(`/jobs/${waiting}/cancel`).set(as(alice)).expect(200);
  });

  it("ends a stopping worker's long-poll at once, and its later lease calls lease nothing", async () => {
    const workerId = randomUUID();
    const polling = api.request
      .post("/worker/lease")
      .set(worker())
      .send({ types: ["stoppable"], worker_id: workerId, max: 5, wait_seconds: 30 });
    const answered = polling.then((res) => ({ status: res.status, body: res.body as unknown[] }));
    await waitFor(async () => (await longPolls()) >= 1 || undefined, "the long-poll to wait");
    // Another organization's key naming the same id ends nothing.
    const bobsKey = (await api.request.post("/api-keys").set(as(bob)).send({ name: "bob stops", role: "worker" })).body.key as string;
    await api.request.post("/worker/stop").set({ "X-API-Key": bobsKey }).send({ worker_id: workerId }).expect(204);
    expect(await longPolls()).toBeGreaterThanOrEqual(1);
    await api.request.post("/worker/stop").set(worker()).send({ worker_id: workerId }).expect(204);
    // The poll answers now (it would otherwise wait its 30 s, past this test's timeout), with nothing leased.
    expect(await answered).toEqual({ status: 200, body: [] });
    // A call that was on its way leases nothing, though a job is due, and does not list the worker again.
    const due = await enqueue({ type: "stoppable", payload: {} });
    expect(await lease({ types: ["stoppable"], worker_id: workerId, wait_seconds: 0 })).toEqual([]);
    const listed = ((await api.request.get("/workers").set(as(alice))).body as { id: string }[]).some((w) => w.id === workerId);
    expect(listed).toBe(false);
    // Another worker leases it.
    expect((await lease({ types: ["stoppable"], worker_id: randomUUID(), wait_seconds: 0 })).map((j) => j.id)).toEqual([due]);
    await api.request.post(`/jobs/${due}/cancel`).set(as(alice)).expect(200);
  }, 20_000);
});
