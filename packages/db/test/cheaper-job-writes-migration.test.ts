// The migration that made job writes cheaper (docs/reference/lifecycle.md#storage-and-leases, issue 43: the jobs
// table without its foreign key to organizations, conveyor_next_event_id in PL/pgSQL) carries what is stored: run on a
// database of the shape before it — the key and the SQL function in place — holding jobs in every state with their
// events, every read answers as before. After it, the transitions go on numbering events as the old function did:
// a transaction's ids are its transaction id << 20 plus the events it wrote already, across its statements.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";
import { claimJobs, inTransaction, newId, writeOutcomes } from "../src";
import { jobThrough, readsOf, type Move } from "./support/job-through";

const MIGRATIONS = path.resolve(__dirname, "../../../prisma/migrations");
const MIGRATION = path.join(MIGRATIONS, "20261207003622_cheaper_job_writes/migration.sql");

let database: TestDatabase;
let orgId: string;
const sql = (text: string, values: unknown[] = []) => database.db.pool.query(text, values);

/** The shape before the migration: the foreign key (as the first migration made it) and the SQL function (as the migration that made it wrote it). */
async function restoreOldShape(): Promise<void> {
  const events = await readFile(path.join(MIGRATIONS, "20261123045315_steering_time_events_console/migration.sql"), "utf8");
  const fn = /CREATE FUNCTION conveyor_next_event_id\(\)[\s\S]*?\n\$\$;/.exec(events)?.[0];
  if (!fn) throw new Error("the previous definition of conveyor_next_event_id was not found");
  await sql(fn.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"));
  await sql(`ALTER TABLE "jobs" ADD CONSTRAINT "jobs_org_id_fkey" FOREIGN KEY ("org_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE`);
}

const functionLanguage = async () =>
  (await sql("SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.proname = 'conveyor_next_event_id'")).rows[0]?.lanname;
const foreignKey = async () => (await sql("SELECT 1 FROM pg_constraint WHERE conname = 'jobs_org_id_fkey'")).rowCount;

const job = (moves: Move[]) => jobThrough(database.db.pool, orgId, moves);

/** The ids of the events each of `statements` (run in one transaction) wrote, and the transaction's id. */
async function eventIdsInOneTransaction(statements: number): Promise<{ xid: bigint; ids: bigint[][] }> {
  return inTransaction(database.db.pool, async (tx) => {
    const xid = BigInt((await tx.query<{ xid: string }>("SELECT pg_current_xact_id()::text AS xid")).rows[0]!.xid);
    const ids: bigint[][] = [];
    for (let i = 0; i < statements; i++) {
      const { rows } = await tx.query<{ id: string }>(
        `WITH event_base AS MATERIALIZED (SELECT conveyor_next_event_id() AS base)
         INSERT INTO events (id, org_id, job_id, type, time, data)
         SELECT e.base + g.n - 1, $1, $2, 'job.progress', now(), '{}' FROM event_base e CROSS JOIN generate_series(1, 2) AS g(n)
         RETURNING id::text`,
        [orgId, newId()],
      );
      ids.push(rows.map((r) => BigInt(r.id)).sort((a, b) => (a < b ? -1 : 1)));
    }
    return { xid, ids };
  });
}

beforeAll(async () => {
  database = await createTestDatabase();
  orgId = newId();
  await sql("INSERT INTO organizations (id, name) VALUES ($1, 'Storage migration org')", [orgId]);
  await restoreOldShape();
});
afterAll(() => database.drop());

it("keeps every read as it was, and numbers events afterwards as the SQL function did", async () => {
  expect(await functionLanguage()).toBe("sql");
  expect(await foreignKey()).toBe(1);
  const jobs = {
    pending: await job([]),
    processing: await job(["start"]),
    retrying: await job(["start", "retry"]),
    done: await job(["start", "done"]),
    failed: await job(["start", "retry", "start", "fail"]),
  };
  const old = await eventIdsInOneTransaction(3);

  const reads = () => readsOf(database.db.pool, orgId, Object.values(jobs));
  const before = await reads();
  expect(before.jobs.map((j) => j?.status)).toEqual(["pending", "processing", "pending", "done", "failed"]);
  // created 5, started 5, retrying 2, succeeded 1, failed 1; and the 6 written in one transaction above.
  expect(before.events.length).toBe(20);

  await sql(await readFile(MIGRATION, "utf8"));
  expect(await functionLanguage()).toBe("plpgsql");
  expect(await foreignKey()).toBe(0);
  expect(await reads()).toEqual(before);

  // Each statement of a transaction continues after the events the transaction wrote already, as before.
  const now = await eventIdsInOneTransaction(3);
  for (const { xid, ids } of [old, now]) {
    const base = xid << 20n;
    expect(ids).toEqual([
      [base, base + 1n],
      [base + 2n, base + 3n],
      [base + 4n, base + 5n],
    ]);
  }

  // The transitions after the migration: the pending job runs to done, the retrying one starts again; their events
  // follow the old ones and every read of the jobs the migration found still answers as before.
  await claimJobs(database.db.pool, [
    { id: jobs.pending, fence: "after-1" },
    { id: jobs.retrying, fence: "after-2" },
  ]);
  await writeOutcomes(database.db.pool, [], [{ id: jobs.pending, fence: "after-1", status: "done", retries: 0, result: "{}", error: null, runAt: null }]);
  const after = await reads();
  expect(after.jobs.map((j) => j?.status)).toEqual(["done", "processing", "processing", "done", "failed"]);
  expect(after.jobs.slice(1, 2)).toEqual(before.jobs.slice(1, 2));
  expect(after.jobs.slice(3)).toEqual(before.jobs.slice(3));
  const ids = after.events.map((e) => BigInt(e.id));
  expect(ids.slice(0, before.events.length)).toEqual(before.events.map((e) => BigInt(e.id)));
  // (After the six the transaction above wrote after the migration.)
  expect(after.events.slice(before.events.length).map((e) => e.type)).toEqual([
    ...Array(6).fill("job.progress"),
    "job.started",
    "job.started",
    "job.succeeded",
  ]);
  expect([...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(ids);
});
