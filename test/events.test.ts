// Every status change writes exactly one event, in the same statement (docs/reference/events.md#events): created, started, retrying,
// succeeded, failed, cancelled — through the real API, Redis, Postgres and worker processes, read back as a
// client reads them (GET /jobs/{id}/events with eventsource-parser) and compared with the rows in Postgres.
// The second organization's own stream, open all along, never shows one of these jobs.
import { FINAL_EVENT_TYPES } from "@conveyor/contracts";
import { openSse, type SseClient } from "@conveyor/testkit";
import { startStack, type JobView, type Stack } from "@conveyor/api/testing/stack";

type EventJson = { id: number; type: string; time: string; job_id: string; data: Record<string, unknown> };

let stack: Stack;
let base: string;
let theirs: SseClient;
const ours: string[] = [];

beforeAll(async () => {
  stack = await startStack();
  base = await stack.api.listen();
  theirs = await openSse(`${base}/events?last_event_id=0`, { "X-API-Key": stack.otherOrg.apiKey });
  await stack.startWorker();
}, 60_000);
afterEach(() => stack.expectOtherOrgUntouched());
afterAll(async () => {
  theirs.close();
  await stack.close();
});

async function create(body: object): Promise<string> {
  const res = await stack.post("/jobs", body);
  expect(res.status).toBe(202);
  ours.push(res.body.id);
  return res.body.id as string;
}

/** The job's whole stream, read until the server closes it after the final event. */
async function streamed(id: string): Promise<EventJson[]> {
  const client = await openSse(`${base}/jobs/${id}/events`, { "X-API-Key": stack.apiKey });
  expect(client.status).toBe(200);
  await Promise.race([client.ended, new Promise((_, reject) => setTimeout(() => reject(new Error(`the stream of ${id} did not end`)), 30_000))]);
  return client.events.map((e) => {
    const json = JSON.parse(e.data) as EventJson;
    expect([e.id, e.event]).toEqual([String(json.id), json.type]);
    return json;
  });
}

async function stored(id: string): Promise<{ id: string; type: string }[]> {
  const { rows } = await stack.api.database.db.pool.query<{ id: string; type: string }>(
    "SELECT id::text, type FROM events WHERE job_id = $1 ORDER BY events.id",
    [id],
  );
  return rows;
}

/** The job as GET /jobs/{id} shows it, without its payload: what the final event's data must be. */
function withoutPayload(job: JobView): Record<string, unknown> {
  // An event holds the job as it was; `waiting_for` (a live answer), the job's place in a graph, its replays and its
  // durable steps are GET /jobs/{id}'s.
  const {
    payload: _payload,
    waiting_for: _waiting,
    depends_on: _dependsOn,
    dependents: _dependents,
    on_dependency_failure: _onFailure,
    replayed_as: _replayedAs,
    steps: _steps,
    ...rest
  } = job as JobView & Record<string, unknown>;
  return rest;
}

async function expectEvents(id: string, types: string[]): Promise<EventJson[]> {
  const events = await streamed(id);
  expect(events.map((e) => e.type)).toEqual(types);
  // Exactly these rows exist: one per transition, none written twice, none missing.
  expect((await stored(id)).map((e) => [Number(e.id), e.type])).toEqual(events.map((e) => [e.id, e.type]));
  for (const event of events) {
    expect(event.job_id).toBe(id);
    expect(event.data).not.toHaveProperty("payload");
    expect(event.data.id).toBe(id);
    expect(event.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }
  const final = events[events.length - 1]!;
  expect(FINAL_EVENT_TYPES).toContain(final.type);
  expect(final.data).toEqual(withoutPayload(await stack.job(id)));
  return events;
}

describe("job events", () => {
  it("created → started → succeeded, each with the job as it was", async () => {
    const id = await create({ type: "word_count", payload: { text: "one two two" } });
    const [created, started, succeeded] = await expectEvents(id, ["job.created", "job.started", "job.succeeded"]);
    expect(created!.data).toMatchObject({ status: "pending", retries: 0, result: null, error: null });
    expect(started!.data).toMatchObject({ status: "processing", retries: 0 });
    expect(succeeded!.data).toMatchObject({ status: "done", result: { words: 3 }, error: null });
  });

  it("a retry writes job.retrying with the error and when it runs again, then a new job.started", async () => {
    const id = await create({ type: "scripted", payload: { fail_until: 1 }, max_retries: 2 });
    const events = await expectEvents(id, ["job.created", "job.started", "job.retrying", "job.started", "job.succeeded"]);
    expect(events[2]!.data).toMatchObject({ status: "pending", retries: 1, error: "scripted failure on attempt 1", run_at: expect.any(String) });
    expect(events[3]!.data).toMatchObject({ status: "processing", retries: 1 });
  });

  it("a permanent failure writes job.failed; so does running out of retries", async () => {
    const permanent = await create({ type: "scripted", payload: { permanent: true }, max_retries: 3 });
    const exhausted = await create({ type: "scripted", payload: { fail_until: 5 }, max_retries: 1 });
    const [, , failed] = await expectEvents(permanent, ["job.created", "job.started", "job.failed"]);
    expect(failed!.data).toMatchObject({ status: "failed", retries: 0, error: "scripted permanent failure" });
    await expectEvents(exhausted, ["job.created", "job.started", "job.retrying", "job.started", "job.failed"]);
  });

  it("cancelling a waiting job writes job.cancelled; cancelling a running one, job.started then job.cancelled", async () => {
    const delayed = await create({ type: "scripted", payload: {}, run_at: new Date(Date.now() + 60_000).toISOString() });
    expect((await stack.post(`/jobs/${delayed}/cancel`, {})).status).toBe(200);
    await expectEvents(delayed, ["job.created", "job.cancelled"]);

    const running = await create({ type: "scripted", payload: { sleep_ms: 20_000 } });
    await stack.waitForJob(running, (j) => j.status === "processing");
    expect((await stack.post(`/jobs/${running}/cancel`, {})).status).toBe(200);
    const events = await expectEvents(running, ["job.created", "job.started", "job.cancelled"]);
    expect(events[2]!.data).toMatchObject({ status: "cancelled", cancel_requested_at: expect.any(String) });
  });

  it("never shows one of these jobs in the second organization's stream", () => {
    // Open since the start on the same API process, it was offered every batch the job streams above were served
    // from; the second org wrote no event of its own, so it must have received nothing at all.
    expect(ours.length).toBeGreaterThanOrEqual(6);
    expect(theirs.isEnded()).toBe(false);
    expect(theirs.events).toEqual([]);
  });
});
