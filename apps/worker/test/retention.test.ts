// Retention (docs/reference/lifecycle.md#steering) against real Postgres with a fixed clock: exactly the jobs that finished more than
// JOB_RETENTION_DAYS ago go, with their logs, events, artifacts, callbacks and idempotency keys, in batches;
// live jobs and recent ones stay, whatever their age or organization.
import { newId } from "@conveyor/db";
import { Retention } from "../src/maintenance/retention";
import { daysAgo, logger, NOW, retentionDatabase } from "./support/retention";

const { orgs, pool } = retentionDatabase("jobs, job_queue, events, job_search");

/** A job with everything that hangs off one: log lines, search values, events, an artifact, a callback and an idempotency key. */
async function insertJob(orgId: string, status: string, fields: { createdDaysAgo: number; finishedDaysAgo?: number }): Promise<string> {
  const id = newId();
  await pool().query(
    `INSERT INTO jobs (id, org_id, type, status, payload, created_at, updated_at, finished_at)
     VALUES ($1, $2, 'webhook', $3::job_status, '{}', $4, $4, $5)`,
    [id, orgId, status, daysAgo(fields.createdDaysAgo), fields.finishedDaysAgo === undefined ? null : daysAgo(fields.finishedDaysAgo)],
  );
  if (status === "pending" || status === "processing") {
    await pool().query("INSERT INTO job_queue (job_id, type, org_id, priority, due_at) VALUES ($1, 'webhook', $2, 5, now())", [id, orgId]);
  }
  await pool().query("INSERT INTO job_logs (job_id, attempt, level, message) VALUES ($1, 1, 'info', 'started'), ($1, 1, 'info', 'ended')", [id]);
  await pool().query("INSERT INTO job_search (job_id, org_id, search_values) VALUES ($1, $2, ARRAY['INV-1'])", [id, orgId]);
  await pool().query(
    `INSERT INTO events (id, org_id, job_id, type, data) SELECT conveyor_next_event_id() + n, $2, $1, 'job.created', '{}' FROM generate_series(0, 1) AS n`,
    [id, orgId],
  );
  await pool().query("INSERT INTO job_artifacts (job_id, content_type, filename, size, data) VALUES ($1, 'application/pdf', 'a.pdf', 4, '\\x25504446')", [id]);
  await pool().query("INSERT INTO job_steps (job_id, name, kind, status, attempt, started_at) VALUES ($1, 'push 1', 'step', 'succeeded', 1, now())", [id]);
  await pool().query("INSERT INTO idempotency_keys (org_id, key, job_id, request_hash, expires_at) VALUES ($2, $1::text, $1::uuid, '\\x00', now())", [
    id,
    orgId,
  ]);
  return id;
}

/** Rows left per table for `ids`. */
async function leftOf(ids: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ["jobs", "job_queue", "job_logs", "job_search", "events", "job_artifacts", "job_steps", "idempotency_keys"]) {
    const column = table === "jobs" ? "id" : "job_id";
    const { rows } = await pool().query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ANY($1::uuid[])`, [ids]);
    counts[table] = Number(rows[0]!.n);
  }
  return counts;
}

const retention = (days = 30, batch = { initial: 2, min: 1, max: 2 }) => new Retention({ pool: pool(), logger, days, batch, now: () => NOW });

describe("retention", () => {
  it("deletes exactly the jobs that finished more than JOB_RETENTION_DAYS ago, with their logs, events, artifacts, steps and keys", async () => {
    const expired = [
      await insertJob(orgs.a, "done", { createdDaysAgo: 40, finishedDaysAgo: 31 }),
      await insertJob(orgs.a, "failed", { createdDaysAgo: 90, finishedDaysAgo: 89 }),
      await insertJob(orgs.a, "cancelled", { createdDaysAgo: 30.5, finishedDaysAgo: 30.01 }),
      await insertJob(orgs.b, "done", { createdDaysAgo: 35, finishedDaysAgo: 35 }),
      await insertJob(orgs.b, "failed", { createdDaysAgo: 400, finishedDaysAgo: 365 }),
    ];
    const kept = [
      // Created long ago, finished recently: retention counts from finished_at.
      await insertJob(orgs.a, "done", { createdDaysAgo: 60, finishedDaysAgo: 29 }),
      await insertJob(orgs.a, "failed", { createdDaysAgo: 31, finishedDaysAgo: 0 }),
      await insertJob(orgs.b, "cancelled", { createdDaysAgo: 30, finishedDaysAgo: 29.99 }),
      // Exactly at the cut-off: not older than 30 days.
      await insertJob(orgs.a, "done", { createdDaysAgo: 30, finishedDaysAgo: 30 }),
      // Live jobs, however old, are never deleted.
      await insertJob(orgs.a, "pending", { createdDaysAgo: 120 }),
      await insertJob(orgs.b, "processing", { createdDaysAgo: 45 }),
    ];
    const all = { jobs: 1, job_queue: 0, job_logs: 2, job_search: 1, events: 2, job_artifacts: 1, job_steps: 1, idempotency_keys: 1 };
    expect(await leftOf(kept.slice(0, 4))).toEqual(Object.fromEntries(Object.entries(all).map(([t, n]) => [t, n * 4])));

    // Batches of two: three statements for five jobs (min 2 too: a batch slowed by a loaded machine would halve it).
    const deleted: number[] = [];
    const task = new Retention({ pool: pool(), logger, days: 30, batch: { initial: 2, min: 2, max: 2 }, now: () => NOW, onDeleted: (n) => deleted.push(n) });
    expect(await task.sweep()).toBe(5);
    expect(deleted).toEqual([2, 2, 1]);

    expect(await leftOf(expired)).toEqual({
      jobs: 0,
      job_queue: 0,
      job_logs: 0,
      job_search: 0,
      events: 0,
      job_artifacts: 0,
      job_steps: 0,
      idempotency_keys: 0,
    });
    expect(await leftOf(kept)).toEqual({
      jobs: 6,
      job_queue: 2,
      job_logs: 12,
      job_search: 6,
      events: 12,
      job_artifacts: 6,
      job_steps: 6,
      idempotency_keys: 6,
    });
    expect(await retention().sweep()).toBe(0);
  });

  it("keeps everything with JOB_RETENTION_DAYS=0, and does not even start", async () => {
    const old = await insertJob(orgs.a, "done", { createdDaysAgo: 3000, finishedDaysAgo: 3000 });
    const task = retention(0);
    expect(await task.sweep()).toBe(0);
    task.start();
    await task.stop();
    expect((await leftOf([old])).jobs).toBe(1);
  });

  it("sweeps at once when it starts leading, and stops between batches when told to", async () => {
    const expired = await Promise.all(Array.from({ length: 6 }, () => insertJob(orgs.a, "done", { createdDaysAgo: 50, finishedDaysAgo: 40 })));
    const deleted: number[] = [];
    const task = new Retention({ pool: pool(), logger, days: 30, batch: { initial: 1, min: 1, max: 1 }, now: () => NOW, onDeleted: (n) => deleted.push(n) });
    task.start();
    // stop() waits for the batch in flight and ends the sweep there.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await task.stop();
    const left = (await leftOf(expired)).jobs!;
    expect(left).toBeGreaterThan(0);
    expect(deleted.reduce((a, b) => a + b, 0)).toBe(6 - left);
    expect(await retention().sweep()).toBe(left);
  });
});
