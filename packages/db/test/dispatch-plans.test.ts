// The dispatcher's reads of one type (which levels and organizations have due jobs, the due candidates of each, which
// types have any) must walk job_queue_waiting_idx, which is ordered as they read, whatever the statistics say. They
// run as generic plans on the dispatcher's connection, planned once when the table may be all but empty and never
// analyzed (a deployment's first burst, every bench run): the planner then rated the deployment-wide due index
// (job_queue_due_idx, every waiting row by due time) as cheap and, reading all due rows of every type and sorting
// them, each round cost as many rows as the backlog holds. That index serves the reads across types (the next due
// time, the backlog count), which name its predicate in their own words (WAITING_ANY_TYPE). The worker protocol's
// lease probe, which asks the same "has this type due jobs" of one organization, must probe one row per type too.
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";
import pg from "pg";
import {
  closeHandOverConnection,
  dueCandidates,
  findDueWork,
  handOver,
  handOverConnection,
  leaseJobs,
  insertJobs,
  msUntilNextDue,
  newId,
  readDueBacklog,
  typesWithDueJobs,
} from "../src";

let database: TestDatabase;
let orgId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  orgId = newId();
  await database.db.pool.query("INSERT INTO organizations (id, name) VALUES ($1, 'Dispatch plans org')", [orgId]);
});
afterAll(() => database.drop());

/** Index scans and entries read of job_queue's indexes so far, as the statistics say once `client`'s own are flushed. */
async function indexScans(client: pg.PoolClient): Promise<Record<string, number>> {
  await client.query("SELECT pg_stat_force_next_flush()");
  // A new statement in a new transaction: the flush happens at the end of the previous one.
  await client.query("SELECT 1");
  await client.query("SELECT pg_stat_clear_snapshot()");
  const { rows } = await client.query<{ name: string; scans: string; read: string }>(
    "SELECT indexrelname AS name, idx_scan AS scans, idx_tup_read AS read FROM pg_stat_user_indexes WHERE relname = 'job_queue'",
  );
  return Object.fromEntries(
    rows.flatMap((r) => [
      [r.name, Number(r.scans)],
      [`${r.name} read`, Number(r.read)],
    ]),
  );
}

it("reads one type's due work by the waiting index and marks it by key, never by the deployment-wide due index", async () => {
  const connection = (await handOverConnection(database.db.pool))!;
  try {
    // The first burst is in, never analyzed, when the dispatcher's first round plans its statements.
    const createdAt = new Date(Date.now() - 1_000);
    const jobs = Array.from({ length: 2_000 }, () => ({ id: newId(), orgId, type: "email", payloadJson: "{}", maxRetries: 0, createdAt }));
    await insertJobs(database.db.pool, jobs);
    const candidates = { type: "email", priority: 5, orgs: [orgId], shares: [100], fullKeys: [], keysInFlight: [], spentLimits: [] };
    await findDueWork(connection, "email", null, 0);
    await typesWithDueJobs(connection);
    const taken = await dueCandidates(connection, candidates);
    await handOver(connection, [{ id: newId(), jobIds: taken.slice(0, 10).map((c) => c.jobId) }]);

    const before = await indexScans(connection);
    const work = await findDueWork(connection, "email", null, 0);
    expect(work.work).toEqual([{ priority: 5, orgs: [orgId] }]);
    expect(await typesWithDueJobs(connection)).toEqual(["email"]);
    const next = await dueCandidates(connection, candidates);
    expect(next).toHaveLength(100);
    // The marks probe the primary key for the jobs they name.
    expect((await handOver(connection, [{ id: newId(), jobIds: next.slice(0, 10).map((c) => c.jobId) }])).size).toBe(10);
    const after = await indexScans(connection);

    expect(after.job_queue_due_idx).toBe(before.job_queue_due_idx);
    expect(after.job_queue_waiting_idx).toBeGreaterThan(before.job_queue_waiting_idx!);
    // What they read of it: the 100 candidates and a few probes, not the 2,000 due rows (a hash join over them did).
    expect(after["job_queue_waiting_idx read"]! - before["job_queue_waiting_idx read"]!).toBeLessThan(200);
  } finally {
    await closeHandOverConnection(connection);
  }
});

it("still reads the next due time across types by the due index, and counts the due backlog", async () => {
  const client = await database.db.pool.connect();
  try {
    const before = await indexScans(client);
    expect(await msUntilNextDue(client)).toBeNull();
    const after = await indexScans(client);
    expect((await readDueBacklog(database.db.pool, 10_000, 5_000)).due).toBe(2_000 - 20);
    expect(after.job_queue_due_idx).toBeGreaterThan(before.job_queue_due_idx!);
  } finally {
    client.release();
  }
});

it("probes one due row per type for a lease, not every due job of the organization", async () => {
  // One connection, so that its statistics can be flushed and read after the lease's probe.
  const pool = new pg.Pool({ connectionString: database.url, max: 1 });
  const client = await pool.connect();
  try {
    const before = await indexScans(client);
    client.release();
    // No sms job is due: the probe finds nothing and the lease starts nothing, beside the organization's 1,980 due emails.
    const attempt = await leaseJobs(pool, { orgId, types: ["sms"], max: 10, workerId: newId(), leaseMs: 30_000 });
    expect(attempt).toEqual({ jobs: [], contended: false });
    const again = await pool.connect();
    try {
      const after = await indexScans(again);
      // The waiting index's entries read (the due index's counter may still take the previous test's backlog count).
      expect(after["job_queue_waiting_idx read"]! - before["job_queue_waiting_idx read"]!).toBeLessThan(200);
    } finally {
      again.release();
    }
  } finally {
    await pool.end();
  }
});
