// GET /jobs/failures (issue 23): failed jobs grouped by type and normalised error, with counts, first and last seen and
// a sample; its filters and bound; the group as a selector of GET /jobs and POST /jobs/bulk (replay the group's failed
// jobs, cancel its jobs waiting to retry); time filters over whole and partial days (failure_counts_daily) counting
// exactly what GET /jobs counts, after retries, replays and retention — and another organization whose failures never show.
import { deleteFinishedJobs, newId, writeOutcomes } from "@conveyor/db";
import { createOrg, type TestApi, type TestMember, startTwoOrgs } from "@conveyor/api/testing";
import { responseSchemas } from "../src/declarations/responses";
import { expectError } from "./support/expect-error";

let api: TestApi;
let alice: TestMember;
let bob: TestMember; // another org
let aliceKey: string;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ api, alice, bob, aliceKey, close } = await startTwoOrgs({ jobTypes: ["echo_test", "other_test"] }));
});
afterAll(() => close());

const as = (member: TestMember) => ({ Authorization: `Bearer ${member.token}` });
const db = () => api.database.db.pool;

/**
 * A job made through POST /jobs whose attempt then ends through the job machine, as a worker's does: failed with
 * `error`, or back to pending to retry in an hour after that error. With `createdAt`, the job was created then (days
 * ago, say) and its attempt ends now.
 */
async function failed(member: TestMember, type: string, error: string, status: "failed" | "pending" = "failed", createdAt?: Date): Promise<string> {
  // Each job a second after the one before (the test API's clock stands still otherwise).
  api.clock.advance(1000);
  const res = await api.request
    .post("/jobs")
    .set(as(member))
    .send({ type, payload: { n: 1 }, max_retries: 2 });
  expect(res.status).toBe(202);
  const id = res.body.id as string;
  if (createdAt) await db().query("UPDATE jobs SET created_at = $2 WHERE id = $1", [id, createdAt]);
  await attemptEnds(id, status, error);
  return id;
}

/** The attempt of job `id` (pending, made or back to retry) ends with `status` after `error`, through the job machine. */
async function attemptEnds(id: string, status: "failed" | "pending", error: string): Promise<void> {
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

describe("time filters over whole and partial days", () => {
  // An org of its own, with failures created over five UTC days ten days ago, failing now (so a count by failure day
  // would put them all today): the whole days are summed from failure_counts_daily, the partial ones read from jobs.
  let carol: TestMember;
  const DAY = 86_400_000;
  const base = Math.floor(Date.now() / DAY) * DAY - 10 * DAY;
  const at = (day: number, hours: number) => new Date(base + day * DAY + hours * 3_600_000);
  const quota = (n: number) => `Quota exceeded for account ${n}`;
  const template = (name: string) => `Unknown template "${name}"`;
  let retried: string;
  let stillRetrying: string;
  let toReplay: string;

  beforeAll(async () => {
    carol = await createOrg(api.database.db, api.deps.config);
    await failed(carol, "echo_test", quota(1), "failed", at(0, 22));
    await failed(carol, "other_test", quota(2), "failed", at(0, 23));
    await failed(carol, "echo_test", quota(3), "failed", at(1, 3));
    await failed(carol, "echo_test", quota(4), "failed", at(1, 12));
    await failed(carol, "echo_test", template("a"), "failed", at(1, 24 - 1 / 3_600_000)); // the day's last millisecond
    await failed(carol, "echo_test", quota(5), "failed", at(2, 0)); // the next day's first
    await failed(carol, "echo_test", quota(6), "failed", at(2, 8));
    await failed(carol, "echo_test", template("b"), "failed", at(2, 10));
    await failed(carol, "other_test", quota(7), "failed", at(2, 12));
    await failed(carol, "other_test", quota(8), "failed", at(3, 0));
    toReplay = await failed(carol, "echo_test", quota(9), "failed", at(3, 6));
    await failed(carol, "echo_test", template("c"), "failed", at(4, 1));
    // Created on day 1, retried, then failed for good: counted on day 1 once, when it failed.
    retried = await failed(carol, "echo_test", quota(10), "pending", at(1, 5));
    await attemptEnds(retried, "failed", quota(11));
    // Waiting to retry: not a failure (yet), but its group's `retrying`.
    stillRetrying = await failed(carol, "echo_test", quota(12), "pending", at(2, 9));
    // Another org's failures of the same kinds on the same days are never counted.
    await failed(bob, "echo_test", quota(13), "failed", at(1, 3));
    await failed(bob, "echo_test", quota(14), "failed", at(2, 8));
  });

  const ranges: [string, Date | null, Date | null][] = [
    ["whole days", at(1, 0), at(3, 0)],
    ["partial days at both ends", at(0, 21), at(3, 7)],
    ["within one day", at(1, 2), at(1, 13)],
    ["across one midnight only", at(1, 12), at(2, 9)],
    ["the last and the first millisecond of two days", at(1, 24 - 1 / 3_600_000), new Date(at(2, 0).getTime() + 1)],
    ["after only, mid-day", at(1, 5), null],
    ["after only, at midnight", at(2, 0), null],
    ["before only, mid-day", null, at(2, 12)],
    ["before only, at midnight", null, at(3, 0)],
    ["everything", new Date("2000-01-01T00:00:00Z"), null],
  ];
  const queryOf = (after: Date | null, before: Date | null, extra = "") =>
    [after && `created_after=${encodeURIComponent(after.toISOString())}`, before && `created_before=${encodeURIComponent(before.toISOString())}`, extra]
      .filter(Boolean)
      .join("&");
  const listed = async (query: string) => {
    const res = await api.request.get(`/jobs?limit=1000&${query}`).set(as(carol));
    expect(res.status).toBe(200);
    return res.body as { id: string }[];
  };

  type Group = { failure_group: string; count: number; retrying: number; first_seen_at: string; last_seen_at: string; sample_job_id: string };
  /**
   * GET /jobs/failures with the range counts, group by group, the failed jobs GET /jobs lists with the same range and
   * the group as a filter — and no failed job is left out of a group; with `exact`, first and last seen and the
   * sample are those of the jobs too. Answers the groups.
   */
  async function expectAgrees(after: Date | null, before: Date | null, options: { type?: string; exact?: boolean } = {}): Promise<Group[]> {
    const query = queryOf(after, before, options.type ? `type=${options.type}` : "");
    const res = await failures(carol, `?limit=200&${query}`);
    expect(res.status).toBe(200);
    const groups = res.body.groups as Group[];
    for (const g of groups) {
      const jobs = await listed(`status=failed&failure_group=${g.failure_group}&${query}`);
      expect({ group: g.failure_group, count: g.count }).toEqual({ group: g.failure_group, count: jobs.length });
      expect(g.retrying).toBe((await listed(`status=pending,processing&failure_group=${g.failure_group}&${query}`)).length);
      if (options.exact) {
        const { rows } = await db().query<{ first: string; last: string; sample: string }>(
          `SELECT conveyor_iso(min(finished_at)) AS first, conveyor_iso(max(finished_at)) AS last,
                  (array_agg(id ORDER BY finished_at DESC, id DESC))[1] AS sample
             FROM jobs WHERE id = ANY($1::uuid[])`,
          [jobs.map((j) => j.id)],
        );
        expect([g.first_seen_at, g.last_seen_at, g.sample_job_id]).toEqual([rows[0]!.first, rows[0]!.last, rows[0]!.sample]);
      }
    }
    const total = groups.reduce((sum, g) => sum + g.count, 0);
    expect(total).toBe((await listed(`status=failed&${query}`)).length);
    return groups;
  }

  it.each(ranges)("counts what GET /jobs lists: %s", async (_name, after, before) => {
    const groups = await expectAgrees(after, before, { exact: true });
    expect(groups.length).toBeGreaterThan(0);
  });

  it("counts nothing in an empty range", async () => {
    expect((await failures(carol, `?${queryOf(at(2, 0), at(1, 0))}`)).body.groups).toEqual([]);
    expect((await failures(carol, `?${queryOf(at(1, 5), at(1, 5))}`)).body.groups).toEqual([]);
  });

  it("narrows to a type, and another org's failures of the same kinds on the same days are never counted", async () => {
    const groups = await expectAgrees(at(0, 21), at(3, 7), { type: "other_test", exact: true });
    expect(groups).toEqual([expect.objectContaining({ count: 3 })]);
    const theirs = await failures(bob, `?${queryOf(at(1, 0), at(3, 0))}`);
    expect(theirs.body.groups).toEqual([expect.objectContaining({ count: 2 })]);
  });

  it("keeps one row a day per group, by the day the jobs were created, as the backfill would count them", async () => {
    const days = async () =>
      (
        await db().query<{ day: string; failure_group: string; failed: number }>(
          `SELECT to_char(day, 'YYYY-MM-DD') AS day, failure_group, failed FROM failure_counts_daily WHERE org_id = $1 ORDER BY 1, 2`,
          [carol.orgId],
        )
      ).rows;
    const { rows: fromJobs } = await db().query(
      `SELECT to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day, failure_group, count(*)::int AS failed
         FROM jobs WHERE org_id = $1 AND status = 'failed' AND failure_group IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2`,
      [carol.orgId],
    );
    expect(await days()).toEqual(fromJobs);
    expect(new Set((await days()).map((d) => d.day)).size).toBe(5);
    // The waiting job is still in line, counted nowhere.
    expect((await db().query("SELECT status FROM jobs WHERE id = $1", [stillRetrying])).rows[0].status).toBe("pending");
  });

  it("counts the same after a replay, and counts the replay on the day it was created once it fails", async () => {
    const replay = await api.request.post(`/jobs/${toReplay}/replay`).set(as(carol));
    expect(replay.status).toBe(202);
    for (const [, after, before] of ranges) await expectAgrees(after, before);
    await attemptEnds(replay.body.id as string, "failed", quota(15));
    const today = new Date(Math.floor(api.clock.now().getTime() / DAY) * DAY);
    for (const [after, before] of [
      [at(1, 5), null],
      [today, null],
      [new Date(api.clock.now().getTime() - 60_000), null],
      [at(2, 0), new Date(today.getTime() + DAY)],
    ] as const) {
      const groups = await expectAgrees(after, before, { exact: true });
      expect(groups.some((g) => g.sample_job_id === replay.body.id)).toBe(true);
    }
  });

  it("counts what is left after retention deletes old failures, and drops the days none is left of", async () => {
    // Jobs created before day 2, 09:00 finished a minute after they were created, long ago: retention takes them.
    const cutoff = at(2, 9);
    await db().query("UPDATE jobs SET finished_at = created_at + interval '1 minute' WHERE org_id = $1 AND status = 'failed' AND created_at < $2", [
      carol.orgId,
      cutoff,
    ]);
    while ((await deleteFinishedJobs(db(), { before: new Date(cutoff.getTime() + 60_000), limit: 3 })) > 0);
    expect(
      (await db().query("SELECT count(*)::int AS n FROM jobs WHERE org_id = $1 AND created_at < $2 AND status = 'failed'", [carol.orgId, cutoff])).rows[0].n,
    ).toBe(0);
    for (const [, after, before] of ranges) await expectAgrees(after, before);
    const { rows } = await db().query<{ day: string; failed: number }>(
      "SELECT to_char(day, 'YYYY-MM-DD') AS day, failed FROM failure_counts_daily WHERE org_id = $1 ORDER BY day",
      [carol.orgId],
    );
    // Days 0 and 1 are gone; day 2 keeps the failures created after 09:00 (one of its groups is gone, one is fewer).
    expect(rows.every((r) => r.day >= at(2, 0).toISOString().slice(0, 10) && r.failed > 0)).toBe(true);
    expect(
      rows
        .filter((r) => r.day === at(2, 0).toISOString().slice(0, 10))
        .map((r) => r.failed)
        .sort(),
    ).toEqual([1, 1]);
    // Bob's failures of those days, which finished now, are still counted.
    expect((await failures(bob, `?${queryOf(at(1, 0), at(3, 0))}`)).body.groups).toEqual([expect.objectContaining({ count: 2 })]);
  });
});
