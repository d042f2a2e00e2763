// A job running under a live worker-protocol lease (docs/reference/lifecycle.md#your-own-workers) has a living holder, as a job a live built-in
// worker runs has (docs/reference/lifecycle.md#storage-and-leases): its lease token is its fence, and the lease row names it. A stray second delivery of
// its id starts nothing; only once the lease has lapsed is the attempt taken over (an interruption).
import type pg from "pg";
import { claimJobs, insertJobs, leaseJobs, newId } from "@conveyor/db";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";

let database: TestDatabase;
let pool: pg.Pool;
let orgId: string;
const TYPE = "own_type";

beforeAll(async () => {
  database = await createTestDatabase();
  pool = database.db.pool;
  orgId = newId();
  await database.db.prisma.organization.create({ data: { id: orgId, name: "Own workers" } });
  await pool.query(`INSERT INTO org_job_types (org_id, name, payload_schema) VALUES ($1, $2, '{"type": "object"}')`, [orgId, TYPE]);
});
afterAll(() => database.drop());

const state = async (id: string) =>
  (await pool.query<{ status: string; fence: string; interruptions: number }>("SELECT status, fence, interruptions FROM jobs WHERE id = $1", [id])).rows[0];

it("a live lease is a living holder: another claim of the job starts nothing until the lease lapses", async () => {
  const id = newId();
  await insertJobs(pool, [{ id, orgId, type: TYPE, payloadJson: "{}", maxRetries: 0, createdAt: new Date() }]);
  const { jobs } = await leaseJobs(pool, { orgId, types: [TYPE], max: 1, workerId: newId(), leaseMs: 30_000 });
  expect(jobs.map((j) => j.id)).toEqual([id]);
  const token = jobs[0]!.leaseToken;
  // A second delivery of the id (as a built-in worker's claim would be): refused, the lease's attempt untouched.
  const stray = `${newId()}:${newId()}`;
  expect(await claimJobs(pool, [{ id, fence: stray }])).toEqual([]);
  expect(await state(id)).toEqual({ status: "processing", fence: token, interruptions: 0 });
  // Lapsed: the holder is gone, and the attempt is taken over as an interruption.
  await pool.query("UPDATE worker_leases SET expires_at = now() - interval '1 second' WHERE job_id = $1", [id]);
  expect((await claimJobs(pool, [{ id, fence: stray }])).map((c) => ("retryAt" in c ? null : c.previousStatus))).toEqual(["processing"]);
  expect(await state(id)).toEqual({ status: "processing", fence: stray, interruptions: 1 });
});
