// GET /jobs/failures (issue 23): failed jobs grouped by type and normalised error, with counts, first and last seen and
// a sample; its filters and bound; the group as a selector of GET /jobs and POST /jobs/bulk (replay the group's failed
// jobs, cancel its jobs waiting to retry) — and another organization whose failures never show.
import { newId, writeOutcomes } from "@conveyor/db";
import { createApiKey, createOrg, createSecondOrg, startTestApi, type SecondOrg, type TestApi, type TestMember } from "@conveyor/testkit/api";
import { responseSchemas } from "../src/openapi/responses";
import { expectError } from "./support/expect-error";

let api: TestApi;
let alice: TestMember;
let bob: TestMember; // another org
let second: SecondOrg;
let aliceKey: string;

beforeAll(async () => {
  api = await startTestApi();
  alice = await createOrg(api.database.db, api.deps.config);
  bob = await createOrg(api.database.db, api.deps.config);
  aliceKey = (await createApiKey(api.database.db, alice)).key;
  second = await createSecondOrg(api.database.db);
  await api.database.db.pool.query("INSERT INTO job_types (name) VALUES ('echo_test'), ('other_test')");
  await second.watch(api.get);
});
afterAll(async () => {
  await second.expectUntouched({ "X-API-Key": aliceKey });
  await api.close();
});

const as = (member: TestMember) => ({ Authorization: `Bearer ${member.token}` });
const db = () => api.database.db.pool;

/**
 * A job made through POST /jobs whose attempt then ends through the job machine, as a worker's does: failed with
 * `error`, or back to pending to retry in an hour after that error.
 */
async function failed(member: TestMember, type: string, error: string, status: "failed" | "pending" = "failed"): Promise<string> {
  // Each job a second after the one before (the test API's clock stands still otherwise).
  api.clock.advance(1000);
  const res = await api.request
    .post("/jobs")
    .set(as(member))
    .send({ type, payload: { n: 1 }, max_retries: 2 });
  expect(res.status).toBe(202);
  const id = res.body.id as string;
  // As a worker's claim leaves it.
  await db().query("UPDATE jobs SET status = 'processing', fence = 'test-attempt' WHERE id = $1", [id]);
  const applied = await writeOutcomes(
    api.database.db.pool,
    [],
    [
      {
        id,
        fence: "test-attempt",
        status,
        retries: status === "failed" ? 2 : 1,
        result: null,
        error,
        runAt: status === "pending" ? new Date(Date.now() + 3_600_000) : null,
      },
    ],
  );
  expect(applied.get(id)).toBe(status);
  return id;
}

async function failures(member: TestMember, query = "") {
  const res = await api.request.get(`/jobs/failures${query}`).set(as(member));
  if (res.status === 200) expect(responseSchemas.FailureGroups.validate(res.body).error).toBeUndefined();
  return res;
}

describe("GET /jobs/failures", () => {
  let timeouts: string[];
  let template: string;
  let otherType: string;
  beforeAll(async () => {
    // The same message of another type is another group.
    otherType = await failed(alice, "other_test", "Provider answered 500 after 9 ms for order 0193a5d0-11c2-7e4f-8a6b-3c9d2e7f4b04");
    template = await failed(alice, "echo_test", 'Unknown template "invoice-v2"');
    timeouts = [
      await failed(alice, "echo_test", "Provider answered 503 after 1200 ms for order 0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01"),
      await failed(alice, "echo_test", "Provider answered 504 after 30000 ms for order 0193a5d0-11c2-7e4f-8a6b-3c9d2e7f4b02"),
      await failed(alice, "echo_test", "Provider answered 503 after 15 ms for order 0193a5d0-11c2-7e4f-8a6b-3c9d2e7f4b03"),
    ];
    await failed(bob, "echo_test", "Provider answered 503 after 1 ms for order 0193a5d0-11c2-7e4f-8a6b-3c9d2e7f4b05");
  });

  it("groups the org's failed jobs by type and normalised message, most recently seen first, with counts, first and last seen and the latest as sample", async () => {
    const res = await failures(alice);
    expect(res.status).toBe(200);
    expect(res.body.has_more).toBe(false);
    expect(res.body.groups).toEqual([
      {
        failure_group: expect.stringMatching(/^[0-9a-f]{16}$/),
        type: "echo_test",
        message: "Provider answered <n> after <n> ms for order <id>",
        count: 3,
        retrying: 0,
        first_seen_at: expect.any(String),
        last_seen_at: expect.any(String),
        sample_job_id: timeouts[2],
        sample_error: "Provider answered 503 after 15 ms for order 0193a5d0-11c2-7e4f-8a6b-3c9d2e7f4b03",
      },
      expect.objectContaining({ type: "echo_test", message: 'Unknown template "<value>"', count: 1, sample_job_id: template }),
      expect.objectContaining({ type: "other_test", message: "Provider answered <n> after <n> ms for order <id>", count: 1, sample_job_id: otherType }),
    ]);
    const [first] = res.body.groups;
    const { rows } = await db().query<{ first: string; last: string }>(
      "SELECT conveyor_iso(min(finished_at)) AS first, conveyor_iso(max(finished_at)) AS last FROM jobs WHERE id = ANY($1::uuid[])",
      [timeouts],
    );
    expect([first.first_seen_at, first.last_seen_at]).toEqual([rows[0]!.first, rows[0]!.last]);
    expect(new Set(res.body.groups.map((g: { failure_group: string }) => g.failure_group)).size).toBe(3);
  });

  it("takes the list's type and time filters, and an API key", async () => {
    const byType = await api.request.get("/jobs/failures?type=other_test").set("X-API-Key", aliceKey);
    expect(byType.status).toBe(200);
    expect(byType.body.groups.map((g: { sample_job_id: string }) => g.sample_job_id)).toEqual([otherType]);
    // Created after the second timeout: only the newest one (created last).
    const res = await db().query<{ created_at: Date }>("SELECT created_at FROM jobs WHERE id = $1", [timeouts[1]]);
    const after = new Date(res.rows[0]!.created_at.getTime() + 500).toISOString();
    const recent = await failures(alice, `?created_after=${encodeURIComponent(after)}`);
    expect(recent.body.groups).toEqual([expect.objectContaining({ count: 1, sample_job_id: timeouts[2] })]);
    const before = await failures(alice, `?created_before=${encodeURIComponent(after)}`);
    expect(before.body.groups).toEqual([
      expect.objectContaining({ count: 2, sample_job_id: timeouts[1] }),
      expect.objectContaining({ sample_job_id: template }),
      expect.objectContaining({ sample_job_id: otherType }),
    ]);
  });

  it("counts the same whether it reads the failure counts (no time filter) or the failed jobs themselves (a time filter)", async () => {
    const counted = (await failures(alice)).body.groups;
    const read = (await failures(alice, "?created_after=2000-01-01")).body.groups;
    expect(read).toEqual(counted);
  });

  it("answers at most limit groups and says more remain", async () => {
    const res = await failures(alice, "?limit=2");
    expect(res.body.groups).toHaveLength(2);
    expect(res.body.has_more).toBe(true);
    expect((await failures(alice, "?limit=3")).body.has_more).toBe(false);
  });

  it.each([
    ["?limit=0", "query.limit"],
    ["?limit=201", "query.limit"],
    ["?type=Not%20a%20type", "query.type"],
    ["?created_after=yesterday", "query.created_after"],
    ["?status=failed", "query.status"],
    ["?failure_group=0123456789abcdef", "query.failure_group"],
  ])("refuses %s with 400 validation_failed naming %s", async (query, path) => {
    const res = await failures(alice, query);
    expectError(res, 400, "validation_failed");
    expect(res.body.error.details).toEqual([expect.objectContaining({ path })]);
  });

  it("needs a credential", async () => {
    expectError(await api.request.get("/jobs/failures"), 401, "unauthorized");
  });
});

describe("failure_group as a selector", () => {
  let groupId: string;
  let failedIds: string[];
  let retrying: string;
  let unrelated: string;
  beforeAll(async () => {
    failedIds = [
      await failed(alice, "echo_test", "Mailbox ann@example.com is full (code 552)"),
      await failed(alice, "echo_test", "Mailbox bo@example.org is full (code 452)"),
    ];
    retrying = await failed(alice, "echo_test", "Mailbox cy@example.net is full (code 552)", "pending");
    unrelated = await failed(alice, "echo_test", "Mailbox does not exist");
    const res = await failures(alice);
    groupId = res.body.groups.find((g: { message: string }) => g.message === "Mailbox <email> is full (code <n>)").failure_group;
    expect(res.body.groups.find((g: { failure_group: string }) => g.failure_group === groupId)).toMatchObject({ count: 2, retrying: 1 });
  });

  it("lists the group's jobs on GET /jobs, failed and waiting to retry, with the filter kept in the next page's Link", async () => {
    const all = await api.request.get(`/jobs?failure_group=${groupId}`).set(as(alice));
    expect(all.status).toBe(200);
    expect(all.body.map((j: { id: string }) => j.id).sort()).toEqual([...failedIds, retrying].sort());
    const onlyFailed = await api.request.get(`/jobs?failure_group=${groupId}&status=failed&limit=1`).set(as(alice));
    expect(onlyFailed.body.map((j: { id: string }) => j.id)).toEqual([failedIds[1]]);
    expect(onlyFailed.headers.link).toContain(`failure_group=${groupId}`);
    const next = /<[^>]*\/jobs\?([^>]*)>/.exec(String(onlyFailed.headers.link))![1]!;
    expect((await api.request.get(`/jobs?${next}`).set(as(alice))).body.map((j: { id: string }) => j.id)).toEqual([failedIds[0]]);
    // Another org's jobs of the same kind are not its.
    expect((await api.request.get(`/jobs?failure_group=${groupId}`).set(as(bob))).body).toEqual([]);
  });

  it("replays the group's failed jobs with one bulk call, and cancels those waiting to retry with another", async () => {
    const replay = await api.request
      .post("/jobs/bulk")
      .set(as(alice))
      .send({ action: "replay", filter: { failure_group: groupId } });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ action: "replay", matched: 2, affected: 2, has_more: false });
    const { rows: replays } = await db().query<{ replay_of: string }>("SELECT replay_of FROM jobs WHERE replay_of = ANY($1::uuid[])", [
      [...failedIds, unrelated],
    ]);
    expect(replays.map((r) => r.replay_of).sort()).toEqual([...failedIds].sort());

    const cancel = await api.request
      .post("/jobs/bulk")
      .set(as(alice))
      .send({ action: "cancel", filter: { failure_group: groupId } });
    expect(cancel.body).toEqual({ action: "cancel", matched: 1, affected: 1, has_more: false });
    expect((await db().query("SELECT status FROM jobs WHERE id = $1", [retrying])).rows[0].status).toBe("cancelled");
    expect((await db().query("SELECT status FROM jobs WHERE id = $1", [unrelated])).rows[0].status).toBe("failed");
  });

  it("refuses a malformed group with 400 validation_failed, on the list and in a bulk filter", async () => {
    expectError(await api.request.get("/jobs?failure_group=xyz").set(as(alice)), 400, "validation_failed");
    const res = await api.request
      .post("/jobs/bulk")
      .set(as(alice))
      .send({ action: "replay", filter: { failure_group: newId() } });
    expectError(res, 400, "validation_failed");
    expect(res.body.error.details).toEqual([expect.objectContaining({ path: "filter.failure_group" })]);
  });
});

describe("GET /jobs?include=error", () => {
  it("adds each job's last error to its list item (the first 300 characters), keeps it in the next page's Link, and leaves items without it as they were", async () => {
    const long = `Receiver answered 500: ${"x".repeat(400)}`;
    const failing = await failed(alice, "echo_test", long);
    const plain = await api.request.get("/jobs?limit=1").set(as(alice));
    expect(plain.body[0].id).toBe(failing);
    expect(plain.body[0]).not.toHaveProperty("error");

    const res = await api.request.get("/jobs?limit=1&include=error").set(as(alice));
    expect(res.status).toBe(200);
    expect(res.body[0]).toEqual({ ...plain.body[0], error: long.slice(0, 300) });
    expect(responseSchemas.JobListItem.validate(res.body[0]).error).toBeUndefined();
    expect(res.headers.link).toContain("include=error");
    const next = /<[^>]*\/jobs\?([^>]*)>/.exec(String(res.headers.link))![1]!;
    const second = await api.request.get(`/jobs?${next}`).set(as(alice));
    expect(second.body[0]).toHaveProperty("error");
    // A job without an error: null. And the whole list, streamed, carries it too.
    await api.request
      .post("/jobs")
      .set(as(alice))
      .send({ type: "echo_test", payload: { n: 2 } });
    const streamed = await api.request.get("/jobs?include=error").set(as(alice));
    expect(streamed.body[0].error).toBeNull();
    expect(streamed.body.find((j: { id: string }) => j.id === failing).error).toBe(long.slice(0, 300));
    expectError(await api.request.get("/jobs?include=payload").set(as(alice)), 400, "validation_failed");
  });
});
