// Failures grouped by error (issue 23): conveyor_normalise_error, the one normaliser (an immutable SQL function, since
// Postgres computes jobs.failure_group itself), table-driven; a job failed through the job machine gets its group; and
// both transitions that fail a job count it by group and by the UTC day it was created, which retention takes back.
import { claimJobs, deleteFinishedJobs, insertJobs, newId, writeOutcomes } from "@conveyor/db";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";

let database: TestDatabase;
let orgId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  orgId = newId();
  await database.db.prisma.organization.create({ data: { id: orgId, name: "Failures" } });
});
afterAll(() => database.drop());

const normalise = async (message: string) => (await database.db.pool.query<{ n: string }>("SELECT conveyor_normalise_error($1) AS n", [message])).rows[0]!.n;
const group = async (type: string, message: string) =>
  (await database.db.pool.query<{ g: string }>("SELECT conveyor_failure_group($1, $2) AS g", [type, message])).rows[0]!.g;

describe("conveyor_normalise_error", () => {
  it.each([
    ["Provider answered 503 after 1200 ms", "Provider answered <n> after <n> ms"],
    ["Job 0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01 not found", "Job <id> not found"],
    ["Job 0193A5C4-7B2E-7C1D-9F3A-2B8E4D6F1A01 not found", "Job <id> not found"],
    ['Unknown template "invoice-v2"', 'Unknown template "<value>"'],
    ["Unknown field `total_2`", "Unknown field `<value>`"],
    ["cannot reach 'api.example.com' for the job's order", "cannot reach '<value>' for the job's order"],
    ["can't send: mailbox jane.doe+x@example.co.uk is full", "can't send: mailbox <email> is full"],
    ["message re_8Gh2kLm0 refused, trace 3f9a0c1d77ab", "message <id> refused, trace <id>"],
    ["connect ECONNREFUSED 10.0.0.1:443", "connect ECONNREFUSED <n>:<n>"],
    ["attempt_timeout: the attempt ran longer than 900000 ms", "attempt_timeout: the attempt ran longer than <n> ms"],
    ["  several\n\tlines   of  text ", "several lines of text"],
    ["Total 19.90 exceeds limit 5", "Total <n> exceeds limit <n>"],
  ])("%j → %j", async (message, expected) => {
    expect(await normalise(message)).toBe(expected);
  });

  it("keeps at most 500 characters", async () => {
    expect(await normalise("word ".repeat(400))).toHaveLength(500);
  });

  it("puts the same error with other values in one group, and another type or message in another", async () => {
    const a = await group("webhook", "The receiver at hooks.example.com answered HTTP 410 for order 1234");
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(await group("webhook", "The receiver at hooks.example.com answered HTTP 404 for order 99")).toBe(a);
    expect(await group("send_email", "The receiver at hooks.example.com answered HTTP 410 for order 1234")).not.toBe(a);
    expect(await group("webhook", "The receiver at hooks.example.com timed out")).not.toBe(a);
  });
});

it("gives a job the job machine fails its failure group, keeps it while it retries, and none to a job that succeeds", async () => {
  const [failing, retrying, succeeding, internal] = [newId(), newId(), newId(), newId()];
  const created = new Date();
  await insertJobs(database.db.pool, [
    { id: failing, orgId, type: "webhook", payloadJson: "{}", maxRetries: 0, createdAt: created },
    { id: retrying, orgId, type: "webhook", payloadJson: "{}", maxRetries: 3, createdAt: created },
    { id: succeeding, orgId, type: "webhook", payloadJson: "{}", maxRetries: 0, createdAt: created },
    { id: internal, orgId, type: "_delivery_test", payloadJson: "{}", maxRetries: 0, createdAt: created },
  ]);
  // As a worker's claim leaves them: processing under a fence.
  await database.db.pool.query("UPDATE jobs SET status = 'processing', fence = 'f1' WHERE org_id = $1", [orgId]);
  const outcome = (id: string, status: "failed" | "pending" | "done", error: string | null) => ({
    id,
    fence: "f1",
    status,
    retries: status === "pending" ? 1 : 0,
    result: status === "done" ? "{}" : null,
    error,
    runAt: status === "pending" ? new Date(Date.now() + 60_000) : null,
  });
  await writeOutcomes(
    database.db.pool,
    [],
    [
      outcome(failing, "failed", "Receiver answered HTTP 500 for order 7"),
      outcome(retrying, "pending", "Receiver answered HTTP 502 for order 8"),
      outcome(succeeding, "done", null),
      outcome(internal, "failed", "Receiver answered HTTP 500 for order 7"),
    ],
  );
  const { rows } = await database.db.pool.query<{ id: string; status: string; failure_group: string | null }>(
    "SELECT id, status, failure_group FROM jobs WHERE org_id = $1",
    [orgId],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const expected = await group("webhook", "Receiver answered HTTP 500 for order 7");
  expect(byId.get(failing)).toMatchObject({ status: "failed", failure_group: expected });
  expect(byId.get(retrying)).toMatchObject({ status: "pending", failure_group: expected });
  expect(byId.get(succeeding)).toMatchObject({ status: "done", failure_group: null });
  expect(byId.get(internal)).toMatchObject({ status: "failed", failure_group: null });
});

it("counts each failure in failure_counts as the job machine records it, and retention takes deleted jobs off the count", async () => {
  const counts = async () =>
    (await database.db.pool.query<{ failed: number; sample_job_id: string }>("SELECT failed, sample_job_id FROM failure_counts WHERE org_id = $1", [orgId]))
      .rows;
  // The test above failed one job of the org (its internal job is not counted, its retrying job not yet).
  expect(await counts()).toEqual([{ failed: 1, sample_job_id: expect.any(String) }]);
  const { rows } = await database.db.pool.query<{ id: string }>("SELECT id FROM jobs WHERE org_id = $1 AND status = 'pending'", [orgId]);
  const retrying = rows[0]!.id;
  await database.db.pool.query("UPDATE jobs SET status = 'processing', fence = 'f2' WHERE id = $1", [retrying]);
  await writeOutcomes(
    database.db.pool,
    [],
    [{ id: retrying, fence: "f2", status: "failed", retries: 1, result: null, error: "Receiver answered HTTP 503 for order 9", runAt: null }],
  );
  expect(await counts()).toEqual([{ failed: 2, sample_job_id: retrying }]);

  expect(await deleteFinishedJobs(database.db.pool, { before: new Date(Date.now() + 60_000), limit: 100 })).toBeGreaterThanOrEqual(3);
  expect(await counts()).toEqual([{ failed: 0, sample_job_id: retrying }]);
});

it("counts a failure on the UTC day its job was created, from a worker's outcome and from a take-over giving up, and retention drops the days it empties", async () => {
  const org = newId();
  await database.db.prisma.organization.create({ data: { id: org, name: "Days" } });
  const days = async () =>
    (
      await database.db.pool.query<{ day: string; failed: number }>(
        "SELECT to_char(day, 'YYYY-MM-DD') AS day, failed FROM failure_counts_daily WHERE org_id = $1 ORDER BY day",
        [org],
      )
    ).rows;
  // Created just before midnight UTC three days ago, and at noon two days ago; both fail now.
  const midnight = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 2 * 86_400_000;
  const [late, noon] = [newId(), newId()];
  await insertJobs(database.db.pool, [
    { id: late, orgId: org, type: "webhook", payloadJson: "{}", maxRetries: 0, createdAt: new Date(midnight - 1) },
    { id: noon, orgId: org, type: "webhook", payloadJson: "{}", maxRetries: 0, createdAt: new Date(midnight + 12 * 3_600_000) },
  ]);
  const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  // A worker's outcome.
  await database.db.pool.query("UPDATE jobs SET status = 'processing', fence = 'f1' WHERE id = $1", [late]);
  await writeOutcomes(
    database.db.pool,
    [],
    [{ id: late, fence: "f1", status: "failed", retries: 0, result: null, error: "Receiver answered 500", runAt: null }],
  );
  expect(await days()).toEqual([{ day: dayOf(midnight - 1), failed: 1 }]);
  // A take-over giving up on an attempt lost three times.
  for (const fence of ["A", "B", "C", "D"]) await claimJobs(database.db.pool, [{ id: noon, fence }]);
  expect((await database.db.pool.query("SELECT status FROM jobs WHERE id = $1", [noon])).rows[0].status).toBe("failed");
  expect(await days()).toEqual([
    { day: dayOf(midnight - 1), failed: 1 },
    { day: dayOf(midnight), failed: 1 },
  ]);
  // Retention: the first job finished long ago (as if), so it goes, and its day with it; the other's day stays.
  await database.db.pool.query("UPDATE jobs SET finished_at = $2 WHERE id = $1", [late, new Date(midnight)]);
  expect(await deleteFinishedJobs(database.db.pool, { before: new Date(midnight + 1), limit: 100 })).toBe(1);
  expect(await days()).toEqual([{ day: dayOf(midnight), failed: 1 }]);
});
