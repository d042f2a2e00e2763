// Replay and bulk actions (docs/reference/lifecycle.md#steering) through the API against real Postgres and Redis: what each creates or changes,
// matched/affected/has_more at the 10,000 bound, bad input, every role — and another organization whose jobs no
// bulk action, cancel or replay can reach (404, never 403).
import { newId } from "@conveyor/db";
import { addMember, createOrg, type SecondOrg, type TestApi, type TestMember, startTwoOrgs } from "@conveyor/api/testing";
import { responseSchemas } from "../src/declarations/responses";

let api: TestApi;
let alice: TestMember;
let bob: TestMember; // another org
let second: SecondOrg;
let aliceKey: string;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ api, alice, bob, aliceKey, second, close } = await startTwoOrgs({ jobTypes: ["echo_test"] }));
});
afterAll(() => close());

const as = (member: TestMember) => ({ Authorization: `Bearer ${member.token}` });
const db = () => api.database.db.pool;

/** A job made through POST /jobs, then put in `status` as a worker would have left it. */
async function job(member: TestMember, status: string, body: object = { type: "echo_test", payload: { n: 1 } }): Promise<string> {
  const res = await api.request.post("/jobs").set(as(member)).send(body);
  expect(res.status).toBe(202);
  await setStatus(res.body.id, status);
  return res.body.id as string;
}

async function setStatus(id: string, status: string): Promise<void> {
  if (status === "pending") return;
  await db().query(
    `UPDATE jobs SET status = $2::job_status, finished_at = CASE WHEN $2 IN ('done', 'failed', 'cancelled') THEN now() END,
            result = CASE WHEN $2 = 'done' THEN '{"ok": true}'::jsonb END, error = CASE WHEN $2 = 'failed' THEN 'it broke' END
      WHERE id = $1`,
    [id, status],
  );
  if (status === "processing") await db().query("UPDATE job_queue SET dispatched_at = now() WHERE job_id = $1", [id]);
  else if (status !== "pending") await db().query("DELETE FROM job_queue WHERE job_id = $1", [id]);
}

/** `count` jobs of `orgId` in `status`, inserted in one statement (ids in creation order); their ids, oldest first. */
async function seed(orgId: string, count: number, status: "pending" | "failed"): Promise<string[]> {
  const ids = Array.from({ length: count }, () => newId());
  await db().query(
    `WITH added AS (
       INSERT INTO jobs (id, org_id, type, status, payload, max_retries, priority, finished_at)
       SELECT id, $2, 'echo_test', $3::job_status, jsonb_build_object('n', n), 2, 7, CASE WHEN $3 = 'failed' THEN now() END
         FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, n)
     )
     INSERT INTO job_search (job_id, org_id, search_values) SELECT id, $2, ARRAY[n::text] FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, n)`,
    [ids, orgId, status],
  );
  if (status === "pending")
    await db().query("INSERT INTO job_queue (job_id, type, org_id, priority, due_at) SELECT unnest($1::uuid[]), 'echo_test', $2, 7, now()", [ids, orgId]);
  return ids;
}

async function statusOf(id: string): Promise<{ status: string; cancel_requested_at: Date | null }> {
  const { rows } = await db().query("SELECT status, cancel_requested_at FROM jobs WHERE id = $1", [id]);
  return rows[0];
}
const countJobs = async (orgId: string) => Number((await db().query("SELECT count(*) FROM jobs WHERE org_id = $1", [orgId])).rows[0].count);
const replaysOf = async (id: string) => (await db().query<{ id: string }>("SELECT id FROM jobs WHERE replay_of = $1 ORDER BY id", [id])).rows.map((r) => r.id);

async function bulk(member: TestMember | Record<string, string>, body: unknown) {
  const headers = "token" in member ? as(member as TestMember) : (member as Record<string, string>);
  const res = await api.request
    .post("/jobs/bulk")
    .set(headers)
    .send(body as object);
  if (res.status === 200) expect(responseSchemas.BulkResult.validate(res.body).error).toBeUndefined();
  return res;
}

describe("POST /jobs/{id}/replay", () => {
  it("creates a pending job with the same type, payload, max_retries and priority whose replay_of names the original, which stays untouched", async () => {
    const created = await api.request
      .post("/jobs")
      .set(as(alice))
      .send({
        type: "echo_test",
        payload: { order: "R-1", items: [{ sku: 7 }] },
        max_retries: 3,
        priority: 8,
        run_at: new Date(Date.now() + 60_000).toISOString(),
      });
    const original = created.body.id as string;
    await setStatus(original, "failed");
    await db().query("UPDATE jobs SET retries = 3, schedule_id = $2 WHERE id = $1", [original, newId()]);
    const before = await api.request.get(`/jobs/${original}`).set(as(alice));

    const res = await api.request.post(`/jobs/${original}/replay`).set(as(alice));
    expect(res.status).toBe(202);
    expect(responseSchemas.JobAccepted.validate(res.body).error).toBeUndefined();
    expect(res.body).toEqual({ id: expect.any(String), status: "pending" });
    expect(res.body.id).not.toBe(original);

    const replay = await api.request.get(`/jobs/${res.body.id}`).set(as(alice));
    expect(replay.body).toMatchObject({
      type: "echo_test",
      status: "pending",
      payload: { order: "R-1", items: [{ sku: 7 }] },
      retries: 0,
      max_retries: 3,
      priority: 8,
      replay_of: original,
      run_at: null,
      schedule_id: null,
      cancel_requested_at: null,
      result: null,
      error: null,
    });
    // Untouched, but for its replay history.
    expect((await api.request.get(`/jobs/${original}`).set(as(alice))).body).toEqual({ ...before.body, replayed_as: [res.body.id] });
    // Created like any job: in the dispatcher's queue, announced, findable by its payload.
    expect((await db().query("SELECT priority FROM job_queue WHERE job_id = $1", [res.body.id])).rows).toEqual([{ priority: 8 }]);
    expect((await db().query("SELECT type FROM events WHERE job_id = $1", [res.body.id])).rows).toEqual([{ type: "job.created" }]);
    expect((await api.request.get("/jobs?q=R-1").set(as(alice))).body.map((j: { id: string }) => j.id)).toEqual([res.body.id, original]);
  });

  it("replays done, failed and cancelled jobs, as often as asked", async () => {
    for (const status of ["done", "failed", "cancelled"]) {
      const id = await job(alice, status);
      const first = await api.request.post(`/jobs/${id}/replay`).set(as(alice));
      const again = await api.request.post(`/jobs/${id}/replay`).set(as(alice));
      expect([first.status, again.status]).toEqual([202, 202]);
      expect(await replaysOf(id)).toEqual([first.body.id, again.body.id]);
    }
  });

  it("answers 409 job_not_finished for a pending or processing job, and creates nothing", async () => {
    for (const status of ["pending", "processing"]) {
      const id = await job(alice, status);
      const res = await api.request.post(`/jobs/${id}/replay`).set(as(alice));
      expect(res.status).toBe(409);
      expect(responseSchemas.Error.validate(res.body).error).toBeUndefined();
      expect(res.body.error).toEqual({ code: "job_not_finished", message: expect.stringContaining(status) });
      expect(await replaysOf(id)).toEqual([]);
    }
  });

  it("answers 404 (never 403) for another org's job, an unknown id and a malformed id, and creates nothing", async () => {
    const bobs = await job(bob, "done");
    const counts = [await countJobs(alice.orgId), await countJobs(bob.orgId)];
    for (const id of [bobs, second.jobId, newId(), "not-a-uuid"]) {
      const res = await api.request.post(`/jobs/${id}/replay`).set({ "X-API-Key": aliceKey });
      expect({ id, status: res.status, code: res.body.error?.code }).toEqual({ id, status: 404, code: "not_found" });
    }
    expect([await countJobs(alice.orgId), await countJobs(bob.orgId)]).toEqual(counts);
    expect(await replaysOf(bobs)).toEqual([]);
  });
});

describe("POST /jobs/{id}/cancel across organizations", () => {
  it("answers 404 for another org's job and leaves it alone; 409 job_finished for a final job of one's own", async () => {
    const bobs = await job(bob, "pending");
    for (const id of [bobs, second.jobId]) expect((await api.request.post(`/jobs/${id}/cancel`).set(as(alice))).status).toBe(404);
    expect((await statusOf(bobs)).status).toBe("pending");
    const done = await job(alice, "done");
    const res = await api.request.post(`/jobs/${done}/cancel`).set(as(alice));
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("job_finished");
  });
});

describe("POST /jobs/bulk with ids", () => {
  it("cancels the org's pending and processing jobs among them; another org's ids and unknown ids are not matched", async () => {
    const [pending, processing, done] = [await job(alice, "pending"), await job(alice, "processing"), await job(alice, "done")];
    const bobs = await job(bob, "pending");
    const res = await bulk(alice, { action: "cancel", ids: [pending, processing, done, bobs, newId(), pending.toUpperCase()] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ action: "cancel", matched: 3, affected: 2, has_more: false });
    expect(await statusOf(pending)).toEqual({ status: "cancelled", cancel_requested_at: null });
    expect(await statusOf(processing)).toEqual({ status: "processing", cancel_requested_at: expect.any(Date) });
    expect((await statusOf(done)).status).toBe("done");
    expect(await statusOf(bobs)).toEqual({ status: "pending", cancel_requested_at: null });
    const logs = await api.request.get(`/jobs/${pending}/logs`).set(as(alice));
    expect(logs.body.map((l: { message: string }) => l.message)).toEqual([`Cancelled by ${alice.email} before it started.`]);

    // Again: the processing job's request is already there, so nothing changes.
    expect((await bulk(alice, { action: "cancel", ids: [pending, processing, done] })).body).toEqual({
      action: "cancel",
      matched: 3,
      affected: 0,
      has_more: false,
    });
  });

  it("replays the org's final jobs among them, skipping live ones and other orgs' jobs", async () => {
    const [done, failed, cancelled, pending] = [
      await job(alice, "done"),
      await job(alice, "failed"),
      await job(alice, "cancelled"),
      await job(alice, "pending"),
    ];
    const bobs = await job(bob, "done");
    const bobCount = await countJobs(bob.orgId);
    const res = await bulk({ "X-API-Key": aliceKey }, { action: "replay", ids: [done, failed, cancelled, pending, bobs, second.jobId] });
    expect(res.body).toEqual({ action: "replay", matched: 4, affected: 3, has_more: false });
    for (const id of [done, failed, cancelled]) expect(await replaysOf(id)).toHaveLength(1);
    expect(await replaysOf(pending)).toEqual([]);
    expect(await replaysOf(bobs)).toEqual([]);
    expect(await replaysOf(second.jobId)).toEqual([]);
    expect(await countJobs(bob.orgId)).toBe(bobCount);
    const [replay] = await replaysOf(done);
    expect((await api.request.get(`/jobs/${replay}`).set(as(alice))).body).toMatchObject({ status: "pending", replay_of: done, payload: { n: 1 } });
  });
});

describe("POST /jobs/bulk with a filter", () => {
  it("cancels the matching pending and processing jobs, and nothing else, nor another org's", async () => {
    const carol = await createOrg(api.database.db, api.deps.config);
    const echo = (n: number) => ({ type: "echo_test", payload: { batch: "B-7", n } });
    const live = [await job(carol, "pending", echo(1)), await job(carol, "pending", echo(2)), await job(carol, "processing", echo(3))];
    const done = await job(carol, "done", echo(4));
    const otherType = await job(carol, "pending", { type: "chat_notify", payload: { channel: "#ops", text: "B-7" } });
    const bobs = await job(bob, "pending", echo(5));

    const res = await bulk(carol, { action: "cancel", filter: { type: "echo_test", q: "B-7" } });
    expect(res.body).toEqual({ action: "cancel", matched: 3, affected: 3, has_more: false });
    expect(await Promise.all(live.map(async (id) => (await statusOf(id)).status))).toEqual(["cancelled", "cancelled", "processing"]);
    expect((await statusOf(live[2]!)).cancel_requested_at).not.toBeNull();
    expect((await statusOf(done)).status).toBe("done");
    expect((await statusOf(otherType)).status).toBe("pending");
    expect((await statusOf(bobs)).status).toBe("pending");
    // Nothing left to cancel: the processing job was asked already.
    expect((await bulk(carol, { action: "cancel", filter: { type: "echo_test", q: "B-7" } })).body).toEqual({
      action: "cancel",
      matched: 0,
      affected: 0,
      has_more: false,
    });
    // A status the action does not apply to matches nothing.
    expect((await bulk(carol, { action: "cancel", filter: { status: "done" } })).body).toEqual({ action: "cancel", matched: 0, affected: 0, has_more: false });
  });

  it("replays matching final jobs once: calling again finds only those not replayed yet", async () => {
    const dan = await createOrg(api.database.db, api.deps.config);
    const failed = [await job(dan, "failed"), await job(dan, "failed")];
    const done = await job(dan, "done");
    await job(dan, "pending");
    const res = await bulk(dan, { action: "replay", filter: { status: "failed,pending" } });
    expect(res.body).toEqual({ action: "replay", matched: 2, affected: 2, has_more: false });
    expect(await Promise.all(failed.map(async (id) => (await replaysOf(id)).length))).toEqual([1, 1]);
    expect((await bulk(dan, { action: "replay", filter: { status: "failed" } })).body).toEqual({ action: "replay", matched: 0, affected: 0, has_more: false });
    // `{}` is every job: only the done one is left to replay; the replays themselves are pending.
    expect((await bulk(dan, { action: "replay", filter: {} })).body).toEqual({ action: "replay", matched: 1, affected: 1, has_more: false });
    expect(await replaysOf(done)).toHaveLength(1);
    expect(await countJobs(dan.orgId)).toBe(4 + 3);
  });

  it("cancels at most 10,000 jobs per call, oldest first, and says when more remain", async () => {
    const erin = await createOrg(api.database.db, api.deps.config);
    const ids = await seed(erin.orgId, 10_001, "pending");
    const bobs = await seed(bob.orgId, 3, "pending");
    const first = await bulk(erin, { action: "cancel", filter: { status: "pending" } });
    expect(first.body).toEqual({ action: "cancel", matched: 10_000, affected: 10_000, has_more: true });
    const { rows } = await db().query<{ status: string; n: string }>("SELECT status, count(*) AS n FROM jobs WHERE org_id = $1 GROUP BY status", [erin.orgId]);
    expect(Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]))).toEqual({ cancelled: 10_000, pending: 1 });
    expect((await statusOf(ids[10_000]!)).status).toBe("pending");
    expect(Number((await db().query("SELECT count(*) FROM job_queue WHERE org_id = $1", [erin.orgId])).rows[0].count)).toBe(1);

    expect((await bulk(erin, { action: "cancel", filter: {} })).body).toEqual({ action: "cancel", matched: 1, affected: 1, has_more: false });
    expect((await bulk(erin, { action: "cancel", filter: {} })).body).toEqual({ action: "cancel", matched: 0, affected: 0, has_more: false });
    for (const id of bobs) expect((await statusOf(id)).status).toBe("pending");
  });

  it("replays at most 10,000 jobs per call, oldest first, and never the same job twice across calls", async () => {
    const fay = await createOrg(api.database.db, api.deps.config);
    const ids = await seed(fay.orgId, 10_001, "failed");
    const first = await bulk(fay, { action: "replay", filter: { status: "failed" } });
    expect(first.body).toEqual({ action: "replay", matched: 10_000, affected: 10_000, has_more: true });
    const replayed = await db().query<{ replay_of: string; priority: number; max_retries: number }>(
      "SELECT replay_of, priority, max_retries FROM jobs WHERE org_id = $1 AND replay_of IS NOT NULL ORDER BY replay_of",
      [fay.orgId],
    );
    expect(replayed.rows.map((r) => r.replay_of)).toEqual(ids.slice(0, 10_000));
    expect(replayed.rows.every((r) => r.priority === 7 && r.max_retries === 2)).toBe(true);
    expect((await bulk(fay, { action: "replay", filter: { status: "failed" } })).body).toEqual({ action: "replay", matched: 1, affected: 1, has_more: false });
    expect(await replaysOf(ids[10_000]!)).toHaveLength(1);
    expect((await bulk(fay, { action: "replay", filter: { status: "failed" } })).body).toEqual({ action: "replay", matched: 0, affected: 0, has_more: false });
    expect(await countJobs(fay.orgId)).toBe(2 * 10_001);
  }, 120_000);
});

describe("POST /jobs/bulk refuses bad input with 400 in docs/reference/http.md#errors's shape", () => {
  const id = "0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01";
  it.each([
    ["neither filter nor ids", { action: "cancel" }, "body"],
    ["both filter and ids", { action: "cancel", filter: {}, ids: [id] }, "body"],
    ["more than 1,000 ids", { action: "cancel", ids: Array.from({ length: 1001 }, () => newId()) }, "ids"],
    ["no ids at all", { action: "replay", ids: [] }, "ids"],
    ["a malformed id", { action: "cancel", ids: [id, "nope"] }, "ids.1"],
    ["an unknown action", { action: "delete", ids: [id] }, "action"],
    ["no action", { ids: [id] }, "action"],
    ["an unknown filter", { action: "cancel", filter: { color: "red" } }, "filter.color"],
    ["a malformed date", { action: "replay", filter: { created_after: "2026-13-01" } }, "filter.created_after"],
    ["q over 256 characters", { action: "replay", filter: { q: "x".repeat(257) } }, "filter.q"],
    ["an unknown status", { action: "replay", filter: { status: "completed" } }, "filter.status"],
    ["a filter that is not an object", { action: "replay", filter: "status=failed" }, "filter"],
    ["an unknown field", { action: "cancel", ids: [id], dry_run: true }, "dry_run"],
  ])("%s", async (_, body, path) => {
    const before = await countJobs(alice.orgId);
    const res = await bulk(alice, body);
    expect(res.status).toBe(400);
    expect(responseSchemas.Error.validate(res.body).error).toBeUndefined();
    expect(res.body.error).toEqual({ code: "validation_failed", message: expect.any(String), details: [expect.objectContaining({ path })] });
    expect(await countJobs(alice.orgId)).toBe(before);
  });
});

describe("roles", () => {
  it("lets owners, admins, members and API keys cancel, replay and act in bulk", async () => {
    const admin = await addMember(api.database.db, api.deps.config, alice.orgId, "admin");
    const member = await addMember(api.database.db, api.deps.config, alice.orgId, "member");
    for (const headers of [as(alice), as(admin), as(member), { "X-API-Key": aliceKey }]) {
      const pending = await job(alice, "pending");
      expect((await api.request.post(`/jobs/${pending}/cancel`).set(headers)).status).toBe(200);
      expect((await api.request.post(`/jobs/${pending}/replay`).set(headers)).status).toBe(202);
      const more = await job(alice, "pending");
      expect((await bulk(headers, { action: "cancel", ids: [more] })).body).toEqual({ action: "cancel", matched: 1, affected: 1, has_more: false });
      expect((await bulk(headers, { action: "replay", ids: [more] })).body).toEqual({ action: "replay", matched: 1, affected: 1, has_more: false });
    }
  });

  it("refuses a request without a credential with 401", async () => {
    expect((await api.request.post("/jobs/bulk").send({ action: "cancel", filter: {} })).status).toBe(401);
    expect((await api.request.post(`/jobs/${newId()}/replay`)).status).toBe(401);
  });
});
