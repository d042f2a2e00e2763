// Who sees the deployment (docs/reference/time.md#alerts, issue 45): on a shared deployment (WORKERS_VISIBLE_TO_ORGS unset) GET /workers
// shows an organization the deployment's workers only as capacity for the types it uses — live processes serving the
// type, their slots, its own jobs running there — and no host name, pid or version; a type no worker serves shows 0
// workers. Through real worker processes; another organization sees none of our jobs and none of our types.
import os from "node:os";
import { mkdtempSync, writeFileSync } from "node:fs";
import path from "node:path";
import { waitFor } from "@conveyor/testkit";
import { addMember, createApiKey, createOrg } from "@conveyor/api/testing";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

let stack: Stack;
let gate: string;
beforeAll(async () => {
  stack = await startStack({ workerEnv: { WORKER_TYPES: "scripted,word_count", WORKER_HEARTBEAT_MS: "300", WORKER_CONCURRENCY: "3" } });
  await stack.registerPluginTypes();
  gate = path.join(mkdtempSync(path.join(os.tmpdir(), "conveyor-visibility-")), "release");
}, 60_000);
afterEach(() => stack.expectOtherOrgUntouched());
afterAll(async () => {
  writeFileSync(gate, "");
  await stack.close();
});

type Item = Record<string, unknown> & { kind: string; type?: string; workers?: number; slots?: number; jobs?: { id: string }[] };
const list = async (headers: Record<string, string>) => {
  const res = await stack.api.request.get("/workers").set(headers);
  expect(res.status).toBe(200);
  return { items: res.body as Item[], text: res.text };
};

it("shows a tenant the shared workers only as capacity for the types it uses, with its own running jobs, and no host, pid or version", async () => {
  const { db } = stack.api.database;
  const { config } = stack.api.deps;
  const workers = [await stack.startWorker(), await stack.startWorker()];
  const ours = (await stack.post("/jobs", { type: "scripted", payload: { until_file: gate } })).body.id as string;
  // A type no worker here serves: its capacity row says so.
  expect((await stack.post("/jobs", { type: "webhook", payload: { url: "https://hooks.example.com/x", payload: {} } })).status).toBe(202);
  await stack.waitForJob(ours, (job) => job.status === "processing");

  const mine = await waitFor(
    async () => {
      const { items, text } = await list({ "X-API-Key": stack.apiKey });
      const scripted = items.find((i) => i.type === "scripted");
      return scripted?.workers === 2 && scripted.jobs?.length === 1 ? { items, text } : null;
    },
    "our running job in the capacity view",
    15_000,
    100,
  );
  expect(mine.items).toEqual([
    { kind: "capacity", type: "scripted", workers: 2, slots: 6, jobs: [{ id: ours, type: "scripted", started_at: expect.any(String) }] },
    { kind: "capacity", type: "webhook", workers: 0, slots: 0, jobs: [] },
  ]);
  for (const secret of [os.hostname(), ...workers.map((w) => `"pid":${w.pid}`), "node_version", "host"]) expect(mine.text).not.toContain(secret);

  // Another organization's member: it has used no type, so it sees nothing of the deployment's machines.
  const third = await createOrg(db, config, "Other Tenant");
  const member = await addMember(db, config, third.orgId, "member");
  const theirs = await list({ Authorization: `Bearer ${member.token}` });
  expect(theirs.items).toEqual([]);
  // Once it uses word_count, it sees that type's capacity, and none of our jobs or types.
  const { key } = await createApiKey(db, third);
  expect(
    (
      await stack.api.request
        .post("/jobs")
        .set("X-API-Key", key)
        .send({ type: "word_count", payload: { text: "a b" } })
    ).status,
  ).toBe(202);
  const after = await list({ Authorization: `Bearer ${member.token}` });
  expect(after.items).toEqual([{ kind: "capacity", type: "word_count", workers: 2, slots: 6, jobs: [] }]);
  expect(after.text).not.toContain(os.hostname());
  expect(after.text).not.toContain(ours);

  writeFileSync(gate, "");
  await stack.waitForJob(ours, (job) => job.status === "done");
  for (const w of workers) await w.stop("SIGTERM");
});
