// GET /queues's live figures (docs/reference/flow-control.md#flow-control, the console's Queues page): each type's starts in the last minute and the p95
// wait from due to start over 15 minutes, from real starts by a real worker. A paused queue makes the wait known to be
// at least the pause; another organization's starts are never counted.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { waitFor } from "@conveyor/testkit";
import { createOrg } from "@conveyor/api/testing";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

jest.setTimeout(120_000);

let stack: Stack;
const owner = () => ({ Authorization: `Bearer ${stack.owner.token}` });

beforeAll(async () => {
  stack = await startStack();
  await stack.startWorker();
});
afterAll(() => stack?.close());

type QueueView = { type: string; due: number; running: number; waiting_on_limits: number; started_last_minute: number; p95_wait_ms: number | null };
const queue = async (type: string, headers: Record<string, string> = { "X-API-Key": stack.apiKey }): Promise<QueueView> => {
  const res = await stack.api.request.get("/queues").set(headers);
  expect(res.status).toBe(200);
  return (res.body as QueueView[]).find((q) => q.type === type)!;
};

it("counts the starts of the last minute and the p95 wait from due to start, per type and organization", async () => {
  expect(await queue("word_count")).toMatchObject({ started_last_minute: 0, p95_wait_ms: null });
  expect((await stack.api.request.patch("/queues/word_count").set(owner()).send({ paused: true })).status).toBe(200);
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) ids.push((await stack.post("/jobs", { type: "word_count", payload: { text: `held ${i}` } })).body.id as string);
  const pausedAt = Date.now();
  // Held for at least this long before any of them can start.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  expect(await queue("word_count")).toMatchObject({ waiting_on_limits: 4, started_last_minute: 0, p95_wait_ms: null });
  expect((await stack.api.request.patch("/queues/word_count").set(owner()).send({ paused: false })).status).toBe(200);
  const heldFor = Date.now() - pausedAt;
  for (const id of ids) await stack.waitForJob(id, (job) => job.status === "done");

  const after = await queue("word_count");
  expect(after.started_last_minute).toBe(4);
  expect(after.p95_wait_ms).toBeGreaterThanOrEqual(Math.min(heldFor, 1500));
  // Nothing of another type, and nothing of this organization in another's figures.
  expect(await queue("send_email")).toMatchObject({ started_last_minute: 0, p95_wait_ms: null });
  const other = await createOrg(stack.api.database.db, stack.api.deps.config);
  expect(await queue("word_count", { Authorization: `Bearer ${other.token}` })).toMatchObject({ started_last_minute: 0, p95_wait_ms: null });
});

it("counts as running only jobs a worker has started: jobs handed over in an envelope and not started yet are due", async () => {
  const gate = path.join(mkdtempSync(path.join(os.tmpdir(), "conveyor-queue-gate-")), "open");
  // The stack's worker has 5 slots: 5 jobs hold them, 3 more are handed over and wait in BullMQ.
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) ids.push((await stack.post("/jobs", { type: "scripted", payload: { until_file: gate } })).body.id as string);
  const figures = await waitFor(async () => {
    const q = await queue("scripted");
    return q.running === 5 && q.due === 3 ? q : null;
  }, "5 running and 3 handed over");
  expect(figures.waiting_on_limits).toBe(0);
  // Due counts a job whether or not the dispatcher has handed it over yet; the three beyond the slots are, soon.
  await waitFor(async () => {
    const handed = await stack.api.database.db.pool.query("SELECT count(*)::int AS n FROM job_queue WHERE dispatched_at IS NOT NULL");
    return handed.rows[0].n === 8 ? true : null;
  }, "all 8 handed over");
  expect(await queue("scripted")).toMatchObject({ running: 5, due: 3 });
  writeFileSync(gate, "");
  for (const id of ids) await stack.waitForJob(id, (job) => job.status === "done");
  expect(await queue("scripted")).toMatchObject({ running: 0, due: 0 });
});
