// The fence, at the SQL level: only the attempt that owns a job can record its outcome, and nothing moves
// a job out of done or failed.
import { randomUUID } from "node:crypto";
import { claimJobs, findJobLogs, newId, registerWorker, saveJobArtifact, writeOutcomes, type Outcome } from "@conveyor/db";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";

let database: TestDatabase;
let orgId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  orgId = newId();
  await database.db.prisma.organization.create({ data: { id: orgId, name: "Fenced" } });
});
afterAll(() => database.drop());

async function newJob(status = "pending") {
  const id = newId();
  await database.db.pool.query("INSERT INTO jobs (id, org_id, type, status, payload, max_retries) VALUES ($1, $2, 'webhook', $3::job_status, '{\"a\":1}', 2)", [
    id,
    orgId,
    status,
  ]);
  return id;
}
const done = (id: string, fence: string, result: object = { ok: fence }): Outcome => ({
  id,
  fence,
  status: "done",
  retries: 0,
  result: JSON.stringify(result),
  error: null,
  runAt: null,
});
const row = async (id: string) =>
  (await database.db.pool.query("SELECT status, fence, retries, interruptions, result, error FROM jobs WHERE id = $1", [id])).rows[0];
/** The job's log as GET /jobs/{id}/logs shows it: stored lines and the lines its events imply. */
const logs = async (id: string) => ((await findJobLogs(database.db.pool, orgId, id)) ?? []).map(({ attempt, level, message }) => ({ attempt, level, message }));

describe("claims", () => {
  it("claims a pending job for a fence, returns its payload and logs the start", async () => {
    const id = await newJob();
    const [claimed] = await claimJobs(database.db.pool, [{ id, fence: "A" }]);
    expect(claimed).toMatchObject({ id, orgId, type: "webhook", payload: '{"a": 1}', retries: 0, maxRetries: 2, interruptions: 0, previousStatus: "pending" });
    expect(await row(id)).toMatchObject({ status: "processing", fence: "A" });
    expect(await logs(id)).toEqual([{ attempt: 1, level: "info", message: "Attempt 1 of 3 started." }]);
  });

  it("lets a new delivery take over a processing job, counting the interruption", async () => {
    const id = await newJob();
    await claimJobs(database.db.pool, [{ id, fence: "A" }]);
    const [takeover] = await claimJobs(database.db.pool, [{ id, fence: "B" }]);
    expect(takeover).toMatchObject({ previousStatus: "processing", interruptions: 1 });
    expect(await row(id)).toMatchObject({ fence: "B", interruptions: 1 });
    expect((await logs(id)).map((l) => l.message)).toEqual([
      "Attempt 1 of 3 started.",
      expect.stringMatching(/^Attempt 1 was interrupted/),
      "Attempt 1 of 3 started.",
    ]);
  });

  describe("a running job's holder (docs/reference/lifecycle.md#storage-and-leases, docs/reference/robustness.md#r56)", () => {
    const holder = async (heartbeatMs = 60_000) => {
      const id = newId();
      await registerWorker(database.db.pool, { id, host: "h", pid: 1, version: "t", nodeVersion: "t", types: ["webhook"], concurrency: 1, heartbeatMs });
      return id;
    };

    it("does not take a job over from a worker whose heartbeat lives: the second delivery starts nothing", async () => {
      const id = await newJob();
      const worker = await holder();
      await claimJobs(database.db.pool, [{ id, fence: `${worker}:webhook:1` }]);
      expect(await claimJobs(database.db.pool, [{ id, fence: `${await holder()}:webhook:7` }])).toEqual([]);
      expect(await claimJobs(database.db.pool, [{ id, fence: `${worker}:webhook:2` }])).toEqual([]);
      expect(await row(id)).toMatchObject({ status: "processing", fence: `${worker}:webhook:1`, interruptions: 0 });
      expect((await logs(id)).map((l) => l.message)).toEqual(["Attempt 1 of 3 started."]);
    });

    it("takes it over once the holder's heartbeat is older than three of its intervals, or its row is gone", async () => {
      const [first, second] = [await newJob(), await newJob()];
      const [silent, reaped] = [await holder(100), await holder()];
      await claimJobs(database.db.pool, [
        { id: first, fence: `${silent}:webhook:1` },
        { id: second, fence: `${reaped}:webhook:1` },
      ]);
      await database.db.pool.query("UPDATE workers SET heartbeat_at = now() - interval '301 milliseconds' WHERE id = $1", [silent]);
      await database.db.pool.query("DELETE FROM workers WHERE id = $1", [reaped]);
      const taken = await claimJobs(database.db.pool, [
        { id: first, fence: `${await holder()}:webhook:1` },
        { id: second, fence: `${await holder()}:webhook:1` },
      ]);
      expect(taken.map((t) => ("interruptions" in t ? t.interruptions : null))).toEqual([1, 1]);
    });

    it("answers the holding attempt's own claim again, unchanged (its first answer was lost)", async () => {
      const id = await newJob();
      const fence = `${await holder()}:webhook:1`;
      await claimJobs(database.db.pool, [{ id, fence }]);
      const [again] = await claimJobs(database.db.pool, [{ id, fence }]);
      expect(again).toMatchObject({ id, previousStatus: "pending", interruptions: 0, payload: '{"a": 1}' });
      expect(await row(id)).toMatchObject({ status: "processing", fence, interruptions: 0 });
      expect((await logs(id)).map((l) => l.message)).toEqual(["Attempt 1 of 3 started."]);
    });
  });

  it("does not claim done, failed or unknown jobs", async () => {
    const ids = [await newJob("done"), await newJob("failed"), newId()];
    expect(
      await claimJobs(
        database.db.pool,
        ids.map((id) => ({ id, fence: "A" })),
      ),
    ).toEqual([]);
  });

  it("counts every take-over, shows each as an interruption and a new start, and fails the job lost once too often", async () => {
    const id = await newJob();
    for (const fence of ["A", "B"]) await claimJobs(database.db.pool, [{ id, fence }]);
    const [third] = await claimJobs(database.db.pool, [{ id, fence: "C" }]);
    expect(third).toMatchObject({ interruptions: 2 });
    expect(await claimJobs(database.db.pool, [{ id, fence: "D" }])).toEqual([]);
    const reason = "Attempt 1 was interrupted 3 times; giving up, as the job probably crashes its worker.";
    expect(await row(id)).toMatchObject({ status: "failed", fence: null, interruptions: 3, error: reason });
    const messages = (await logs(id)).map((l) => l.message.replace(/ was interrupted: .*/, " was interrupted"));
    expect(messages).toEqual(["Attempt 1 of 3 started.", ...Array<string[]>(2).fill(["Attempt 1 was interrupted", "Attempt 1 of 3 started."]).flat(), reason]);
  });

  it("cancels instead of taking over a job someone asked to cancel, and never returns it", async () => {
    const id = await newJob();
    await claimJobs(database.db.pool, [{ id, fence: "A" }]);
    await database.db.pool.query("UPDATE jobs SET cancel_requested_at = now() WHERE id = $1", [id]);
    expect(await claimJobs(database.db.pool, [{ id, fence: "B" }])).toEqual([]);
    expect(await row(id)).toMatchObject({ status: "cancelled", fence: null, interruptions: 0 });
    expect((await logs(id)).map((l) => l.message)).toEqual([
      "Attempt 1 of 3 started.",
      "Attempt 1 was interrupted after a cancellation was requested: the job is cancelled.",
    ]);
  });
});

describe("outcomes under the fence", () => {
  it("refuses the outcome of a stale attempt and applies the owner's", async () => {
    const id = await newJob();
    await claimJobs(database.db.pool, [{ id, fence: "A" }]);
    await claimJobs(database.db.pool, [{ id, fence: "B" }]);
    expect(await writeOutcomes(database.db.pool, [], [done(id, "A")])).toEqual(new Map());
    expect(await writeOutcomes(database.db.pool, [], [done(id, "B")])).toEqual(new Map([[id, "done"]]));
    expect(await row(id)).toMatchObject({ status: "done", fence: null, result: { ok: "B" } });
  });

  it("applies the owner's outcome when a stale attempt's outcome of the same job comes first in one batch", async () => {
    const id = await newJob();
    const other = await newJob();
    await claimJobs(database.db.pool, [{ id, fence: "A" }]);
    await claimJobs(database.db.pool, [
      { id, fence: "B" },
      { id: other, fence: "C" },
    ]);
    const applied = await writeOutcomes(database.db.pool, [], [done(id, "A"), done(other, "C"), done(id, "B")]);
    expect(applied).toEqual(
      new Map([
        [id, "done"],
        [other, "done"],
      ]),
    );
    expect(await row(id)).toMatchObject({ status: "done", fence: null, result: { ok: "B" } });
    expect(await row(other)).toMatchObject({ status: "done", result: { ok: "C" } });
  });

  it("never moves a job out of done or failed, even for the attempt that finished it", async () => {
    const id = await newJob();
    await claimJobs(database.db.pool, [{ id, fence: "A" }]);
    await writeOutcomes(database.db.pool, [], [done(id, "A")]);
    const retry: Outcome = { id, fence: "A", status: "pending", retries: 1, result: null, error: "late", runAt: new Date() };
    expect(await writeOutcomes(database.db.pool, [], [retry])).toEqual(new Map());
    expect(await row(id)).toMatchObject({ status: "done", retries: 0, error: null });
  });

  it("of three racing deliveries (as many as a job may lose), records exactly one outcome", async () => {
    const id = await newJob();
    const fences = Array.from({ length: 3 }, () => randomUUID());
    await Promise.all(fences.map((fence) => claimJobs(database.db.pool, [{ id, fence }])));
    const applied = await Promise.all(fences.map((fence) => writeOutcomes(database.db.pool, [], [done(id, fence)])));
    expect(applied.filter((s) => s.has(id))).toHaveLength(1);
  });

  it("writes the attempt's log lines with the outcome, in order, even when the outcome is refused", async () => {
    const id = await newJob();
    await claimJobs(database.db.pool, [{ id, fence: "A" }]);
    const lines = ["one", "two", "three"].map((message) => ({ jobId: id, attempt: 1, level: "info" as const, message, timestamp: new Date() }));
    await writeOutcomes(database.db.pool, lines, [done(id, "stale")]);
    expect((await logs(id)).slice(1).map((l) => l.message)).toEqual(["one", "two", "three"]);
    expect((await row(id)).status).toBe("processing");
  });

  it("shows a success line only when the outcome is applied, after the attempt's own lines", async () => {
    const id = await newJob();
    await claimJobs(database.db.pool, [{ id, fence: "A" }]);
    await writeOutcomes(database.db.pool, [], [done(id, "stale")]);
    const line = { jobId: id, attempt: 1, level: "info" as const, message: "handler line", timestamp: new Date() };
    await writeOutcomes(database.db.pool, [line], [done(id, "A")]);
    expect((await logs(id)).map((l) => l.message)).toEqual([
      "Attempt 1 of 3 started.",
      "handler line",
      expect.stringMatching(/^Attempt 1 succeeded in \d+ ms\.$/),
    ]);
  });

  it("keeps the result a callback wrote while the job ran, merging the handler's into it", async () => {
    const id = await newJob();
    await claimJobs(database.db.pool, [{ id, fence: "A" }]);
    await database.db.pool.query(`UPDATE jobs SET result = '{"callback": {"result_code": 0}}' WHERE id = $1`, [id]);
    await writeOutcomes(database.db.pool, [], [done(id, "A", { CheckoutRequestID: "ws_CO_1" })]);
    expect((await row(id)).result).toEqual({ callback: { result_code: 0 }, CheckoutRequestID: "ws_CO_1" });
  });

  it("stores an artifact only for the owning attempt", async () => {
    const id = await newJob();
    await claimJobs(database.db.pool, [{ id, fence: "A" }]);
    const file = { jobId: id, contentType: "application/pdf", filename: "a.pdf", data: Buffer.from("%PDF") };
    expect(await saveJobArtifact(database.db.pool, { ...file, fence: "B" })).toBe(false);
    expect(await saveJobArtifact(database.db.pool, { ...file, fence: "A" })).toBe(true);
  });
});
