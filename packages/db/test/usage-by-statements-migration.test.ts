// The migration that moved usage counting from the jobs UPDATE trigger into the statements (docs/reference/lifecycle.md#storage-and-leases, issue 43)
// carries what is stored: run on a database of the shape before it — the trigger in place — holding jobs in every
// state, with their events, logs, steps, a waitpoint and the usage the trigger counted, every read answers as before.
// After it, the claim, the take-over of a lapsed holder and the outcome count each attempt once (no trigger adds a
// second count) and exactly as the trigger did: attempts started, attempt milliseconds and pending jobs.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";
import { claimJobs, findJob, findJobAttempts, findJobLogs, newId, readEventTexts, readUsage, writeOutcomes } from "../src";

const MIGRATIONS = path.resolve(__dirname, "../../../prisma/migrations");
const MIGRATION = path.join(MIGRATIONS, "20261206210000_usage_counted_by_statements/migration.sql");

let database: TestDatabase;
let orgId: string;
const today = new Date().toISOString().slice(0, 10);

/**
 * The triggers as the migrations before this one left them: their functions (quota_counters) and their triggers
 * (usage_quotas) — the update trigger this migration drops, and the insert trigger that counted the jobs created until
 * 20261207181000_jobs_created_counted_by_statement (the old statements below insert jobs by hand).
 */
async function restoreTrigger(): Promise<void> {
  const quota = await readFile(path.join(MIGRATIONS, "20261128093000_quota_counters/migration.sql"), "utf8");
  const usage = await readFile(path.join(MIGRATIONS, "20261128061720_usage_quotas/migration.sql"), "utf8");
  for (const name of ["conveyor_usage_jobs_inserted", "conveyor_usage_jobs_updated"]) {
    const fn = new RegExp(`CREATE OR REPLACE FUNCTION ${name}\\(\\)[\\s\\S]*?\\n\\$\\$;`).exec(quota)?.[0];
    const trigger = new RegExp(`CREATE TRIGGER ${name}[\\s\\S]*?;`).exec(usage)?.[0];
    if (!fn || !trigger) throw new Error(`the previous definitions of ${name} were not found`);
    await database.db.pool.query(fn);
    await database.db.pool.query(trigger);
  }
}

const sql = (text: string, values: unknown[] = []) => database.db.pool.query(text, values);

/** A job written as the statements before this change wrote it: inserted, then moved by plain UPDATEs (the trigger counts). */
async function oldJob(moves: string[], extra: { fence?: string } = {}): Promise<string> {
  const id = newId();
  await sql(
    `INSERT INTO jobs (id, org_id, type, status, payload, max_retries, created_at, updated_at) VALUES ($1, $2, 'email', 'pending', '{"to":"a@b.c"}', 2, now(), now())`,
    [id, orgId],
  );
  await sql("INSERT INTO job_queue (job_id, type, org_id, priority, due_at) VALUES ($1, 'email', $2, 5, now())", [id, orgId]);
  await sql(
    "INSERT INTO events (id, org_id, job_id, type, time, data) SELECT conveyor_next_event_id(), org_id, id, 'job.created', now(), conveyor_job_data(j) FROM jobs j WHERE id = $1",
    [id],
  );
  for (const move of moves) {
    if (move === "start") {
      await sql("UPDATE jobs SET status = 'processing', fence = $2, started_at = now() - interval '250 milliseconds', updated_at = now() WHERE id = $1", [
        id,
        extra.fence ?? "old-fence",
      ]);
      await sql("UPDATE job_queue SET dispatched_at = now() WHERE job_id = $1", [id]);
      await sql(
        "INSERT INTO events (id, org_id, job_id, type, time, data) SELECT conveyor_next_event_id(), org_id, id, 'job.started', now(), conveyor_job_data(j) FROM jobs j WHERE id = $1",
        [id],
      );
    } else if (move === "retry") {
      await sql(
        "UPDATE jobs SET status = 'pending', retries = retries + 1, error = 'boom', fence = NULL, run_at = now() + interval '1 hour', updated_at = now() WHERE id = $1",
        [id],
      );
      await sql("UPDATE job_queue SET dispatched_at = NULL, due_at = now() + interval '1 hour' WHERE job_id = $1", [id]);
      await sql(
        "INSERT INTO events (id, org_id, job_id, type, time, data) SELECT conveyor_next_event_id(), org_id, id, 'job.retrying', now(), conveyor_job_data(j) FROM jobs j WHERE id = $1",
        [id],
      );
    } else {
      const [status, event, column] =
        move === "done" ? ["done", "job.succeeded", "result"] : move === "fail" ? ["failed", "job.failed", "error"] : ["cancelled", "job.cancelled", "error"];
      await sql(
        `UPDATE jobs SET status = $2::job_status, ${column} = ${column === "result" ? `'{"sent":true}'::jsonb` : "'it broke'"}, fence = NULL, finished_at = now(), updated_at = now() WHERE id = $1`,
        [id, status],
      );
      await sql("DELETE FROM job_queue WHERE job_id = $1", [id]);
      await sql(
        `INSERT INTO events (id, org_id, job_id, type, time, data) SELECT conveyor_next_event_id(), org_id, id, $2, now(), conveyor_job_data(j) FROM jobs j WHERE id = $1`,
        [id, event],
      );
    }
  }
  return id;
}

type Counters = { attempts: number; ms: number; pending: number };
async function counters(): Promise<Counters> {
  const { rows } = await sql(
    `SELECT (SELECT coalesce(sum(attempts_started), 0)::int FROM usage_counts WHERE org_id = $1) AS attempts,
            (SELECT coalesce(sum(attempt_ms), 0)::int FROM usage_counts WHERE org_id = $1) AS ms,
            (SELECT coalesce(sum(pending_jobs), 0)::int FROM stored_payload_bytes WHERE org_id = $1) AS pending`,
    [orgId],
  );
  return rows[0] as Counters;
}

beforeAll(async () => {
  database = await createTestDatabase();
  orgId = newId();
  await sql("INSERT INTO organizations (id, name) VALUES ($1, 'Storage migration org')", [orgId]);
  await restoreTrigger();
});
afterAll(() => database.drop());

it("keeps every read as it was, and afterwards counts each attempt once, as the trigger did", async () => {
  const jobs = {
    pending: await oldJob([]),
    processing: await oldJob(["start"]),
    retrying: await oldJob(["start", "retry"]),
    done: await oldJob(["start", "done"]),
    failed: await oldJob(["start", "retry", "start", "fail"]),
    cancelled: await oldJob(["cancel"]),
  };
  // A step and a waitpoint of the retrying job (its handler slept and waited).
  const waitpoint = newId();
  await sql(
    "INSERT INTO waitpoints (id, org_id, status, tags, token_hash, expires_at, job_id, created_at) VALUES ($1, $2, 'waiting', '{}', decode(md5(random()::text), 'hex'), now() + interval '1 day', $3, now())",
    [waitpoint, orgId, jobs.retrying],
  );
  await sql(
    "INSERT INTO job_steps (job_id, name, kind, status, attempt, result, started_at, finished_at) VALUES ($1, 'fetch', 'step', 'completed', 1, '{\"n\":1}', now(), now())",
    [jobs.retrying],
  );
  await sql("INSERT INTO job_steps (job_id, name, kind, status, attempt, waitpoint_id, started_at) VALUES ($1, 'approval', 'wait', 'waiting', 1, $2, now())", [
    jobs.retrying,
    waitpoint,
  ]);
  const counted = await counters();
  // The trigger counted the old history: 5 attempts started (processing, retrying, done, and failed twice).
  expect(counted.attempts).toBe(5);
  expect(counted.pending).toBe(2);

  const reads = async () => ({
    jobs: await Promise.all(Object.values(jobs).map((id) => findJob(database.db.pool, orgId, id))),
    logs: await Promise.all(Object.values(jobs).map((id) => findJobLogs(database.db.pool, orgId, id))),
    attempts: await Promise.all(Object.values(jobs).map((id) => findJobAttempts(database.db.pool, orgId, id))),
    events: (await readEventTexts(database.db.pool, { orgId, after: 0n, limit: 1000 })).events,
    usageByDay: await readUsage(database.db.pool, { orgId, from: today, to: today, groupBy: "day" }),
    usageByType: await readUsage(database.db.pool, { orgId, from: today, to: today, groupBy: "type" }),
    counters: await counters(),
  });
  const before = await reads();
  expect(before.jobs.map((j) => j?.status)).toEqual(["pending", "processing", "pending", "done", "failed", "cancelled"]);
  expect(before.events.length).toBe(16);

  await sql(await readFile(MIGRATION, "utf8"));
  const trigger = await sql("SELECT 1 FROM pg_trigger WHERE tgname = 'conveyor_usage_jobs_updated'");
  expect(trigger.rowCount).toBe(0);
  expect(await reads()).toEqual(before);

  // The statements count now: a claim of the pending job, a take-over of the processing one (its fence names no live
  // worker: its holder is gone), each once; then both outcomes end their attempts with their milliseconds.
  const [claimed, takenOver] = await claimJobs(database.db.pool, [
    { id: jobs.pending, fence: "new-1" },
    { id: jobs.processing, fence: "new-2" },
  ]).then((r) => [r.find((c) => c.id === jobs.pending), r.find((c) => c.id === jobs.processing)]);
  expect(claimed).toMatchObject({ previousStatus: "pending" });
  expect(takenOver).toMatchObject({ previousStatus: "processing", interruptions: 1 });
  const afterClaims = await counters();
  expect(afterClaims.attempts).toBe(counted.attempts + 2);
  expect(afterClaims.pending).toBe(counted.pending - 1);
  // The lost attempt started 250 ms before it was taken over (and the statement ran a moment after).
  expect(afterClaims.ms - counted.ms).toBeGreaterThanOrEqual(250);
  expect(afterClaims.ms - counted.ms).toBeLessThan(60_000);

  const { rows: started } = await sql("SELECT id, started_at FROM jobs WHERE id = ANY($1::uuid[])", [[jobs.pending, jobs.processing]]);
  const applied = await writeOutcomes(
    database.db.pool,
    [],
    [
      { id: jobs.pending, fence: "new-1", status: "done", retries: 0, result: "{}", error: null, runAt: null },
      { id: jobs.processing, fence: "new-2", status: "pending", retries: 1, result: null, error: "again", runAt: new Date(Date.now() + 60_000) },
    ],
  );
  expect([...applied.values()].sort()).toEqual(["done", "pending"]);
  const { rows: now } = await sql("SELECT (extract(epoch FROM now()) * 1000)::bigint AS ms");
  const ended = await counters();
  expect(ended.attempts).toBe(afterClaims.attempts);
  expect(ended.pending).toBe(afterClaims.pending + 1);
  const most = started.reduce((sum, r: { started_at: Date }) => sum + (Number(now[0].ms) - r.started_at.getTime()), 0);
  expect(ended.ms - afterClaims.ms).toBeGreaterThanOrEqual(0);
  expect(ended.ms - afterClaims.ms).toBeLessThanOrEqual(most + 2);
});
