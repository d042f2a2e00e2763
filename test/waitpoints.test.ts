// Waitpoints end to end (docs/reference/lifecycle.md#waitpoints-and-durable-steps, docs/reference/robustness.md#r49, docs/reference/robustness.md#r50): the real API, Postgres, Redis and two worker processes. A job
// depending on a waitpoint waits (waiting_for: waitpoint) until a third party completes it through its capability
// URL, then sees its data as that dependency's result; 50 parallel completions have one winner; an expiry racing
// completions ends in one state with one event; expiry and cancellation are failed dependencies. The second
// organization sees none of it and cannot use any of it.
import { openSse, type SseClient } from "@conveyor/testkit";
import { startWebhookReceiver, type FakeServer } from "@conveyor/testkit/fakes";
import { addMember } from "@conveyor/api/testing";
import { startStack, type Stack } from "@conveyor/api/testing/stack";
import { waitFor } from "@conveyor/testkit";

jest.setTimeout(240_000);

let stack: Stack;
let base: string;
let theirs: SseClient;
let receiver: FakeServer;

const local = { ALLOW_PRIVATE_NETWORK: "true", WEBHOOK_ALLOW_HTTP: "true" };

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  stack = await startStack({ apiEnv: local, workerEnv: local });
  base = await stack.api.listen();
  theirs = await openSse(`${base}/events?last_event_id=0`, { "X-API-Key": stack.otherOrg.apiKey });
  await stack.startWorker();
  await stack.startWorker();
});
afterEach(() => stack?.expectOtherOrgUntouched());
afterAll(async () => {
  theirs?.close();
  await stack?.close();
  await receiver?.close();
});

it("a webhook endpoint subscribed to waitpoint.completed gets it as a CloudEvent whose subject is the waitpoint", async () => {
  const endpoint = await stack.api.request
    .post("/webhook-endpoints")
    .set("Authorization", `Bearer ${stack.owner.token}`)
    .send({ url: `${receiver.url}/hooks`, events: ["waitpoint.completed"] });
  expect(endpoint.status).toBe(201);
  const wp = await createWaitpoint({ description: "Hooked" });
  expect((await post(`/waitpoints/${wp.id}/complete`, { data: { ok: 1 } })).status).toBe(200);
  const delivered = await waitFor(
    () => receiver.requests.find((r) => JSON.parse(r.raw.toString("utf8")).subject === wp.id),
    "the waitpoint's webhook delivery",
    60_000,
  );
  expect(JSON.parse(delivered.raw.toString("utf8"))).toMatchObject({
    specversion: "1.0",
    type: "conveyor.waitpoint.completed",
    subject: wp.id,
    data: { id: wp.id, status: "completed", data: { ok: 1 }, description: "Hooked" },
  });
  expect(delivered.headers["webhook-signature"]).toMatch(/^v1,/);
  await stack.api.request.delete(`/webhook-endpoints/${endpoint.body.id}`).set("Authorization", `Bearer ${stack.owner.token}`);
});

it("the second org's event stream carries none of our waitpoints' events", async () => {
  const wp = await createWaitpoint();
  await post(`/waitpoints/${wp.id}/cancel`, {});
  await waitFor(async () => (await eventsOf(wp.id)).length > 0 || undefined, "the event", 10_000);
  expect(theirs.events.filter((e) => e.event?.startsWith("waitpoint."))).toEqual([]);
});

type Waitpoint = { id: string; status: string; data: unknown; complete_url?: string | null; expires_at: string; finished_at: string | null };

const get = async (path: string, key = stack.apiKey) => {
  const res = await stack.api.request.get(path).set("X-API-Key", key);
  return { status: res.status, body: res.body, headers: res.headers };
};
const post = async (path: string, body: unknown, key = stack.apiKey, headers: Record<string, string> = {}) => {
  const res = await stack.api.request
    .post(path)
    .set("X-API-Key", key)
    .set(headers)
    .send(body as object);
  return { status: res.status, body: res.body };
};
/** POSTs with no credential at all, as a third party holding complete_url does. */
const postAnonymous = async (url: string, body: unknown) => {
  const res = await stack.api.request.post(new URL(url).pathname).send(body as object);
  return { status: res.status, body: res.body };
};
async function createWaitpoint(body: object = {}): Promise<Waitpoint> {
  const res = await post("/waitpoints", body);
  expect(res.status).toBe(201);
  return res.body as Waitpoint;
}
const eventsOf = async (id: string) =>
  (await stack.api.database.db.pool.query<{ type: string; data: Record<string, unknown> }>("SELECT type, data FROM events WHERE job_id = $1 ORDER BY id", [id]))
    .rows;

describe("creating, reading and listing", () => {
  it("answers a waiting waitpoint with its one-time complete_url, and an idempotent repeat without it", async () => {
    const res = await post("/waitpoints", { timeout_seconds: 3600, description: "Approve invoice 118", tags: ["invoices", "q4"] }, stack.apiKey, {
      "Idempotency-Key": "approve-118",
    });
    expect(res.status).toBe(201);
    const wp = res.body as Waitpoint & { description: string; tags: string[]; created_at: string };
    expect(wp).toMatchObject({ status: "waiting", description: "Approve invoice 118", tags: ["invoices", "q4"], data: null, finished_at: null });
    expect(wp.complete_url).toMatch(/\/waitpoints\/complete\/[A-Za-z0-9_-]{43}$/);
    const lifetime = new Date(wp.expires_at).getTime() - new Date(wp.created_at).getTime();
    expect(Math.abs(lifetime - 3_600_000)).toBeLessThan(1_000);
    // Stored hashed: the token is nowhere in the row.
    const token = wp.complete_url!.split("/").at(-1)!;
    const { rows } = await stack.api.database.db.pool.query("SELECT row_to_json(w)::text AS row FROM waitpoints w WHERE id = $1", [wp.id]);
    expect(rows[0].row).not.toContain(token);

    const repeat = await post("/waitpoints", { timeout_seconds: 3600, description: "Approve invoice 118", tags: ["q4", "invoices"] }, stack.apiKey, {
      "Idempotency-Key": "approve-118",
    });
    expect(repeat.status).toBe(200);
    expect(repeat.body).toMatchObject({ id: wp.id, complete_url: null });
    const other = await post("/waitpoints", { timeout_seconds: 60 }, stack.apiKey, { "Idempotency-Key": "approve-118" });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("idempotency_conflict");

    expect((await get(`/waitpoints/${wp.id}`)).body).toMatchObject({ id: wp.id, status: "waiting" });
    const tagged = await get("/waitpoints?tag=q4&status=waiting");
    expect(tagged.body.map((w: Waitpoint) => w.id)).toEqual([wp.id]);
    // Another org's key sees nothing of it.
    expect((await get(`/waitpoints/${wp.id}`, stack.otherOrg.apiKey)).status).toBe(404);
    expect((await get("/waitpoints", stack.otherOrg.apiKey)).body).toEqual([]);
  });

  it("pages newest first with a Link header", async () => {
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await createWaitpoint({ tags: ["paged"] })).id);
    const first = await get("/waitpoints?tag=paged&limit=2");
    expect(first.body.map((w: Waitpoint) => w.id)).toEqual([made[2], made[1]]);
    const next = /<[^>]*(\/waitpoints\?[^>]+)>; rel="next"/.exec(first.headers.link as string)![1]!;
    const second = await get(next);
    expect(second.body.map((w: Waitpoint) => w.id)).toEqual([made[0]]);
    expect(second.headers.link).toBeUndefined();
  });

  it("refuses bad values naming the field, and other orgs' waitpoints like unknown ones", async () => {
    const refused = async (path: string, body: unknown, key?: string) => {
      const res = await post(path, body, key);
      expect(res.status).toBe(400);
      return res.body.error.details.map((d: { path: string }) => d.path);
    };
    expect(await refused("/waitpoints", { timeout_seconds: 59 })).toEqual(["timeout_seconds"]);
    expect(await refused("/waitpoints", { timeout_seconds: 2_592_001 })).toEqual(["timeout_seconds"]);
    expect(await refused("/waitpoints", { tags: "x" })).toEqual(["tags"]);
    const wp = await createWaitpoint();
    expect(await refused(`/waitpoints/${wp.id}/complete`, { data: "x".repeat(70 * 1024) })).toEqual(["data"]);
    expect(await refused(wp.complete_url!.replace(/^https?:\/\/[^/]+/, ""), { data: "x".repeat(70 * 1024) })).toEqual(["data"]);
    const bad = await stack.api.request
      .post(`/waitpoints/${wp.id}/complete`)
      .set("X-API-Key", stack.apiKey)
      .set("Content-Type", "application/json")
      .send('{"data": ');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_json");

    const theirs = (await post("/waitpoints", { timeout_seconds: 600 }, stack.otherOrg.apiKey)).body as Waitpoint;
    const unknown = "0193a5c4-7777-7c1d-9f3a-2b8e4d6f1a07";
    const refusal = async (dependsOn: string) => (await post("/jobs", { type: "scripted", payload: {}, depends_on: [dependsOn] })).body.error.details;
    expect(await refusal(theirs.id)).toEqual(await refusal(unknown));
    expect(await refusal(unknown)).toEqual([{ path: "depends_on.0", message: "is not a job or waitpoint of your organization" }]);
    for (const path of [`/waitpoints/${theirs.id}/complete`, `/waitpoints/${theirs.id}/cancel`]) {
      const res = await post(path, { data: 1 });
      expect(res.status).toBe(404);
    }
    expect((await get(`/waitpoints/${theirs.id}`)).status).toBe(404);
    // Untouched by our attempts; the second org cancels its own to leave nothing waiting.
    expect((await get(`/waitpoints/${theirs.id}`, stack.otherOrg.apiKey)).body.status).toBe("waiting");
    expect((await post(`/waitpoints/${theirs.id}/cancel`, {}, stack.otherOrg.apiKey)).status).toBe(200);
    // No credential: 401 on the org's endpoints.
    expect((await stack.api.request.post("/waitpoints").send({})).status).toBe(401);
    expect((await stack.api.request.post(`/waitpoints/${wp.id}/complete`).send({})).status).toBe(401);
  });
});

describe("a job depending on a waitpoint", () => {
  it("waits for it, runs once a third party completes it through complete_url, and sees its data", async () => {
    const wp = await createWaitpoint({ description: "Payer approves" });
    const job = await post("/jobs", { type: "scripted", payload: { echo_dependencies: true }, depends_on: [wp.id] });
    expect(job.status).toBe(202);
    const id = job.body.id as string;
    expect((await get(`/jobs/${id}`)).body).toMatchObject({ status: "pending", waiting_for: "waitpoint", depends_on: [wp.id] });
    const graph = (await get(`/jobs/${id}/graph`)).body;
    expect(graph.nodes).toContainEqual(expect.objectContaining({ kind: "waitpoint", id: wp.id, status: "waiting" }));
    expect(graph.edges).toEqual([{ from: wp.id, to: id }]);

    const stream = await openSse(`${base}/events?type=waitpoint.completed`, { "X-API-Key": stack.apiKey });
    try {
      expect((await postAnonymous(wp.complete_url!.replace("/complete/", "/complete/x"), { data: 1 })).status).toBe(404);
      const done = await postAnonymous(wp.complete_url!, { data: { approved: true } });
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({ id: wp.id, status: "completed", data: { approved: true } });
      // A repeat with the same body is the same waitpoint; another body is 409; a wrong token stays 404 (docs/reference/lifecycle.md#waitpoints-and-durable-steps).
      const again = await postAnonymous(wp.complete_url!, { data: { approved: true } });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(done.body);
      expect((await postAnonymous(wp.complete_url!, { data: { approved: false } })).status).toBe(409);
      expect((await postAnonymous(wp.complete_url!.replace(/.{5}$/, "AAAAA"), {})).status).toBe(404);

      const finished = await stack.waitForJob(id, (j) => j.status === "done", 60_000);
      expect((finished.result as { dependencies: unknown[] }).dependencies).toEqual([
        { id: wp.id, type: "waitpoint", status: "completed", result: { approved: true } },
      ]);
      const [event] = await stream.waitForEvents(1, 30_000);
      expect(JSON.parse(event!.data)).toMatchObject({ type: "waitpoint.completed", job_id: wp.id, data: { id: wp.id, status: "completed" } });
    } finally {
      stream.close();
    }
    expect((await eventsOf(wp.id)).map((e) => e.type)).toEqual(["waitpoint.completed"]);
  });

  it("made in the job's own batch: waits for it by ref, runs once complete_url completes it, and sees its data", async () => {
    const res = await post("/jobs/batch", {
      waitpoints: [{ ref: "approval", description: "Approve the batch" }],
      jobs: [
        { ref: "first", type: "scripted", payload: {} },
        { ref: "gated", type: "scripted", payload: { echo_dependencies: true }, depends_on: ["first", "approval"] },
      ],
    });
    expect(res.status).toBe(202);
    const [first, gated, approval] = res.body as { id: string; ref: string; complete_url?: string }[];
    expect(approval).toMatchObject({ kind: "waitpoint", ref: "approval", status: "waiting" });
    // The job with no dependency runs; the gated one waits for the waitpoint, holding nothing.
    await stack.waitForJob(first!.id, (j) => j.status === "done", 60_000);
    expect((await get(`/jobs/${gated!.id}`)).body).toMatchObject({ status: "pending", waiting_for: "waitpoint" });
    const graph = (await get(`/jobs/${gated!.id}/graph`)).body;
    expect(graph.nodes).toContainEqual(expect.objectContaining({ kind: "waitpoint", id: approval!.id, status: "waiting" }));

    expect((await postAnonymous(approval!.complete_url!, { data: { approved: "by Amina" } })).status).toBe(200);
    const done = await stack.waitForJob(gated!.id, (j) => j.status === "done", 60_000);
    const dependencies = (done.result as { dependencies: { id: string; type: string; status: string; result: unknown }[] }).dependencies;
    expect(dependencies).toContainEqual({ id: approval!.id, type: "waitpoint", status: "completed", result: { approved: "by Amina" } });
    expect(dependencies).toContainEqual(expect.objectContaining({ id: first!.id, type: "scripted", status: "done" }));
    expect((await eventsOf(approval!.id)).map((e) => e.type)).toEqual(["waitpoint.completed"]);
  });

  it("is cancelled (dependency_failed) when the waitpoint expires, or runs anyway with on_dependency_failure run", async () => {
    const wp = await createWaitpoint({ timeout_seconds: 60 });
    const doomed = (await post("/jobs", { type: "scripted", payload: {}, depends_on: [wp.id] })).body.id as string;
    const runs = (await post("/jobs", { type: "scripted", payload: { echo_dependencies: true }, depends_on: [wp.id], on_dependency_failure: "run" })).body
      .id as string;
    // Its time passes (rather than waiting a minute): the leader's expiry loop ends it within a second or so.
    await stack.api.database.db.pool.query("UPDATE waitpoints SET expires_at = now() WHERE id = $1", [wp.id]);
    const cancelled = await stack.waitForJob(doomed, (j) => j.status === "cancelled", 30_000);
    expect(cancelled.error).toBe(`dependency_failed: waitpoint ${wp.id}, which this job depends on, expired.`);
    const ran = await stack.waitForJob(runs, (j) => j.status === "done", 60_000);
    expect((ran.result as { dependencies: unknown[] }).dependencies).toEqual([{ id: wp.id, type: "waitpoint", status: "expired", result: null }]);
    expect((await get(`/waitpoints/${wp.id}`)).body.status).toBe("expired");
    expect((await eventsOf(wp.id)).map((e) => e.type)).toEqual(["waitpoint.expired"]);
    expect((await post(`/waitpoints/${wp.id}/complete`, { data: 1 })).status).toBe(409);
  });

  it("is cancelled when the waitpoint is cancelled; a job created on an ended waitpoint is settled at once", async () => {
    const wp = await createWaitpoint();
    const id = (await post("/jobs", { type: "scripted", payload: {}, depends_on: [wp.id] })).body.id as string;
    const cancel = await post(`/waitpoints/${wp.id}/cancel`, {});
    expect(cancel.status).toBe(200);
    expect(cancel.body.status).toBe("cancelled");
    expect((await stack.waitForJob(id, (j) => j.status === "cancelled")).error).toBe(
      `dependency_failed: waitpoint ${wp.id}, which this job depends on, was cancelled.`,
    );
    expect((await post(`/waitpoints/${wp.id}/cancel`, {})).status).toBe(409);
    const complete = await post(`/waitpoints/${wp.id}/complete`, { data: 1 });
    expect(complete.status).toBe(409);
    expect(complete.body.error.code).toBe("conflict");
    const late = await post("/jobs", { type: "scripted", payload: {}, depends_on: [wp.id] });
    expect(late.body.status).toBe("cancelled");

    const done = await createWaitpoint();
    await post(`/waitpoints/${done.id}/complete`, { data: [1, 2] });
    const after = await post("/jobs", { type: "scripted", payload: {}, depends_on: [done.id] });
    expect(after.body.status).toBe("pending");
    await stack.waitForJob(after.body.id, (j) => j.status === "done", 60_000);
  });
});

describe("the first completion wins", () => {
  it("50 parallel completions with different data: one 200, 49 409s; a repeat of the winner's data is 200", async () => {
    const wp = await createWaitpoint();
    const id = (await post("/jobs", { type: "scripted", payload: { echo_dependencies: true }, depends_on: [wp.id] })).body.id as string;
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => post(`/waitpoints/${wp.id}/complete`, { data: { i } })));
    const winners = answers.filter((a) => a.status === 200);
    expect(winners).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(49);
    const data = winners[0]!.body.data as { i: number };
    expect((await post(`/waitpoints/${wp.id}/complete`, { data })).status).toBe(200);
    const job = await stack.waitForJob(id, (j) => j.status === "done", 60_000);
    expect((job.result as { dependencies: { result: unknown }[] }).dependencies[0]!.result).toEqual(data);
    expect((await eventsOf(wp.id)).map((e) => e.type)).toEqual(["waitpoint.completed"]);
    // The audit log names who completed it (an API key here).
    const audit = await stack.api.request.get("/audit-log?action=waitpoint.complete").set("Authorization", `Bearer ${stack.owner.token}`);
    expect(audit.body.items ?? audit.body).toEqual(
      expect.arrayContaining([expect.objectContaining({ action: "waitpoint.complete", target: expect.objectContaining({ type: "waitpoint", id: wp.id }) })]),
    );
  });

  it("50 parallel completions with the same data all answer 200 with the completed waitpoint, and it ends once", async () => {
    const wp = await createWaitpoint();
    const answers = await Promise.all(Array.from({ length: 50 }, () => post(`/waitpoints/${wp.id}/complete`, { data: { approved: true, n: [1, 2] } })));
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 50 }, () => 200));
    for (const a of answers) expect(a.body).toMatchObject({ id: wp.id, status: "completed", data: { approved: true, n: [1, 2] } });
    // Every answer is the one ending: the same finished_at, one event, one audit entry (only the winner writes one).
    expect(new Set(answers.map((a) => a.body.finished_at)).size).toBe(1);
    expect((await eventsOf(wp.id)).map((e) => e.type)).toEqual(["waitpoint.completed"]);
    const { rows } = await stack.api.database.db.pool.query("SELECT count(*)::int AS n FROM audit_log WHERE action = 'waitpoint.complete' AND target_id = $1", [
      wp.id,
    ]);
    expect(rows[0].n).toBe(1);
    // Cancelling it now is a conflict that reports it completed, whoever asks.
    const cancels = await Promise.all(Array.from({ length: 10 }, () => post(`/waitpoints/${wp.id}/cancel`, {})));
    expect(cancels.map((c) => c.status)).toEqual(Array.from({ length: 10 }, () => 409));
    expect(cancels[0]!.body.error.message).toMatch(/already completed/);
  });

  it("parallel cancellations: one 200, the others 409 saying it was cancelled", async () => {
    const wp = await createWaitpoint();
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(`/waitpoints/${wp.id}/cancel`, {})));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused.map((a) => a.status)).toEqual(Array.from({ length: 19 }, () => 409));
    for (const a of refused) expect(a.body.error.message).toMatch(/been cancelled/);
    expect((await eventsOf(wp.id)).map((e) => e.type)).toEqual(["waitpoint.cancelled"]);
  });

  it("an expiry racing completions ends in one state, with one event", async () => {
    const ends = new Set<string>();
    // Expiring 0 to 600 ms from now while completions arrive from 100 ms on: some rounds end expired (by the loop or
    // by a late completion), the others completed.
    for (let round = 0; round < 6; round++) {
      const wp = await createWaitpoint();
      await stack.api.database.db.pool.query("UPDATE waitpoints SET expires_at = now() + $2 * interval '1 millisecond' WHERE id = $1", [wp.id, round * 120]);
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          new Promise((r) => setTimeout(r, 100 + i * 20)).then(() => post(`/waitpoints/${wp.id}/complete`, { data: { i } })),
        ),
      );
      await waitFor(async () => (await get(`/waitpoints/${wp.id}`)).body.status !== "waiting" || undefined, "the waitpoint to end", 10_000);
      const final = (await get(`/waitpoints/${wp.id}`)).body as Waitpoint;
      const events = await eventsOf(wp.id);
      expect(events).toHaveLength(1);
      expect(events[0]!.type).toBe(`waitpoint.${final.status}`);
      const won = answers.filter((a) => a.status === 200);
      if (final.status === "completed") expect(won).toHaveLength(1);
      else expect(won).toHaveLength(0);
      expect(answers.filter((a) => a.status !== 200).every((a) => a.status === 409)).toBe(true);
      ends.add(final.status);
    }
    expect([...ends].sort()).toEqual(["completed", "expired"]);
  });

  it("members complete from the console's credentials; the audit log names the person", async () => {
    const member = await addMember(stack.api.database.db, stack.api.deps.config, stack.owner.orgId, "member");
    const wp = await createWaitpoint({ description: "Ship it?" });
    const res = await stack.api.request.post(`/waitpoints/${wp.id}/complete`).set("Authorization", `Bearer ${member.token}`).send({ data: "yes" });
    expect(res.status).toBe(200);
    const { rows } = await stack.api.database.db.pool.query(
      "SELECT actor_type, actor_id FROM audit_log WHERE action = 'waitpoint.complete' AND target_id = $1",
      [wp.id],
    );
    expect(rows).toEqual([{ actor_type: "user", actor_id: member.userId }]);
  });
});
