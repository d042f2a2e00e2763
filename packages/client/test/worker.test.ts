// createWorker (docs/reference/lifecycle.md#your-own-workers) against a real API over HTTP: a worker that needs no Redis or Postgres access runs an
// organization's own job type — results, a durable step replayed across a waitpoint, progress and log lines, a retry,
// a permanent failure — and stop() hands back what it still runs. Another organization's jobs of a type of the same
// name are never leased to it.
import { createConveyorClient, createWorker, PermanentJobError, type ConveyorWorker } from "@conveyor/client";
import { createOrg, startTestApi, type TestApi, type TestMember } from "@conveyor/api/testing";

let api: TestApi;
let base: string;
let owner: TestMember;
let other: TestMember;
let serviceKey: string;
let workerKey: string;
const workers: ConveyorWorker[] = [];

const asOwner = (member: TestMember) => ({ Authorization: `Bearer ${member.token}` });

beforeAll(async () => {
  api = await startTestApi();
  owner = await createOrg(api.database.db, api.deps.config);
  other = await createOrg(api.database.db, api.deps.config);
  for (const member of [owner, other]) {
    await api.request
      .post("/job-types")
      .set(asOwner(member))
      .send({ name: "thumb", payload_schema: { type: "object" } })
      .expect(201);
  }
  serviceKey = (await api.request.post("/api-keys").set(asOwner(owner)).send({ name: "service" })).body.key;
  workerKey = (await api.request.post("/api-keys").set(asOwner(owner)).send({ name: "ts worker", role: "worker" })).body.key;
  base = await api.listen();
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await api.close();
});

function start(handler: Parameters<ConveyorWorker["task"]>[1], options: { shutdownMs?: number } = {}): ConveyorWorker {
  const worker = createWorker({ baseUrl: base, apiKey: workerKey, concurrency: 4, pollSeconds: 1, ...options }).task("thumb", handler);
  workers.push(worker);
  void worker.run();
  return worker;
}

async function waitFor<T>(check: () => Promise<T | undefined | false>, what: string, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const conveyor = () => createConveyorClient({ baseUrl: base, apiKey: serviceKey });
const finalJob = (id: string) =>
  waitFor(async () => {
    const { data } = await conveyor().GET("/jobs/{id}", { params: { path: { id } } });
    return data && ["done", "failed", "cancelled"].includes(data.status) ? data : undefined;
  }, `job ${id} to finish`);

it("runs jobs with results, a step replayed across a waitpoint, progress, logs, retries and permanent failures", async () => {
  const stepRuns: string[] = [];
  const worker = start(async (payload, ctx) => {
    const p = payload as { n?: number; wait?: boolean; fail?: "once" | "permanent" };
    if (p.fail === "permanent") throw new PermanentJobError("bad input");
    if (p.fail === "once" && ctx.attempt === 1) throw new Error("first attempt fails");
    const doubled = await ctx.step("double", () => {
      stepRuns.push(ctx.jobId);
      return (p.n ?? 0) * 2;
    });
    ctx.progress(0.5, "halfway");
    ctx.log("almost there");
    const approval = p.wait ? await ctx.waitFor("approval", { timeout_seconds: 600 }) : null;
    return { doubled, approval };
  });
  const client = conveyor();
  const plain = (await client.enqueue("thumb", { n: 21 })).data!.id;
  const retried = (await client.enqueue("thumb", { n: 1, fail: "once" }, { max_retries: 1 })).data!.id;
  const broken = (await client.enqueue("thumb", { fail: "permanent" }, { max_retries: 3 })).data!.id;
  const waiting = (await client.enqueue("thumb", { n: 5, wait: true })).data!.id;
  // Another organization's job of its own "thumb" type: never leased to this worker.
  const theirs = await api.request.post("/jobs").set(asOwner(other)).send({ type: "thumb", payload: {} });

  expect(await finalJob(plain)).toMatchObject({ status: "done", result: { doubled: 42, approval: null } });
  expect(await finalJob(retried)).toMatchObject({ status: "done", retries: 1 });
  expect(await finalJob(broken)).toMatchObject({ status: "failed", retries: 0 });
  const job = await waitFor(async () => {
    const { data } = await client.GET("/jobs/{id}", { params: { path: { id: waiting } } });
    return data?.waiting_for === "waitpoint" ? data : undefined;
  }, "the job to wait for its waitpoint");
  const waitpointId = (job as unknown as { steps: { name: string; waitpoint_id: string }[] }).steps.find((s) => s.name === "approval")!.waitpoint_id;
  await client.POST("/waitpoints/{id}/complete", { params: { path: { id: waitpointId } }, body: { data: { ok: true } } });
  const done = await finalJob(waiting);
  expect(done).toMatchObject({ status: "done", result: { doubled: 10, approval: { ok: true } }, retries: 0 });
  expect(stepRuns.filter((id) => id === waiting)).toHaveLength(1);
  expect((done as unknown as { progress: { fraction: number } }).progress.fraction).toBe(0.5);
  const logs = await client.GET("/jobs/{id}/logs", { params: { path: { id: plain } } });
  expect(logs.data!.map((l) => l.message)).toContain("almost there");
  const workersSeen = await client.GET("/workers", {});
  expect(workersSeen.data!.some((w) => w.kind === "protocol" && w.id === worker.id)).toBe(true);
  expect((await api.request.get(`/jobs/${theirs.body.id}`).set(asOwner(other))).body.status).toBe("pending");
  await worker.stop();
  // Stopped, it said so: the organization's workers no longer list it.
  expect((await client.GET("/workers", {})).data!.some((w) => w.kind === "protocol" && w.id === worker.id)).toBe(false);
});

it("stop() hands back a job still running after the shutdown timeout, without spending a retry", async () => {
  let started = false;
  const worker = start(
    async (_payload, ctx) => {
      started = true;
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
    },
    { shutdownMs: 200 },
  );
  const id = (await conveyor().enqueue("thumb", { slow: true })).data!.id;
  await waitFor(async () => started, "the handler to start");
  await worker.stop();
  const { data } = await conveyor().GET("/jobs/{id}", { params: { path: { id } } });
  expect(data).toMatchObject({ status: "pending", retries: 0 });
});
