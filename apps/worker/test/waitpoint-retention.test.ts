// Waitpoint retention (docs/reference/lifecycle.md#steering, docs/reference/lifecycle.md#waitpoints-and-durable-steps) against real Postgres with a fixed clock: exactly the waitpoints that ended more
// than JOB_RETENTION_DAYS ago go, with their events; a waiting one never goes, and one a job still there depends on
// (depends_on or a ctx.waitFor step) stays until that job's own retention has deleted it, whatever the organization.
import { randomBytes } from "node:crypto";
import { newId } from "@conveyor/db";
import { Retention } from "../src/maintenance/retention";
import { WaitpointRetention } from "../src/maintenance/waitpoint-retention";
import { daysAgo, logger, NOW, retentionDatabase } from "./support/retention";

const { orgs, pool } = retentionDatabase("jobs, job_queue, events, job_dependencies, job_steps, waitpoints");

/** A waitpoint with its events (one per status change it went through: none while waiting, its end's otherwise). */
async function insertWaitpoint(orgId: string, status: string, fields: { createdDaysAgo: number; finishedDaysAgo?: number }): Promise<string> {
  const id = newId();
  const finished = fields.finishedDaysAgo === undefined ? null : daysAgo(fields.finishedDaysAgo);
  await pool().query(
    `INSERT INTO waitpoints (id, org_id, status, token_hash, expires_at, finished_at, finished_by, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $5)`,
    [id, orgId, status, randomBytes(32), daysAgo(fields.createdDaysAgo), finished, finished ? "system" : null],
  );
  if (status !== "waiting") {
    await pool().query(`INSERT INTO events (id, org_id, job_id, type, data) VALUES (conveyor_next_event_id(), $2, $1, $3, '{}')`, [
      id,
      orgId,
      `waitpoint.${status}`,
    ]);
  }
  return id;
}

/** A job of `status` (finished `finishedDaysAgo` when final) that depends on `waitpointId`, by depends_on or by a ctx.waitFor step. */
async function insertDependent(orgId: string, waitpointId: string, how: "depends_on" | "step", status: string, finishedDaysAgo?: number): Promise<string> {
  const id = newId();
  const finished = finishedDaysAgo === undefined ? null : daysAgo(finishedDaysAgo);
  await pool().query(
    `INSERT INTO jobs (id, org_id, type, status, payload, created_at, updated_at, finished_at)
     VALUES ($1, $2, 'scripted', $3::job_status, '{}', $4, $4, $4)`,
    [id, orgId, status, finished ?? daysAgo(0)],
  );
  if (finished === null) await pool().query("UPDATE jobs SET finished_at = NULL WHERE id = $1", [id]);
  if (how === "depends_on") {
    await pool().query("INSERT INTO job_dependencies (job_id, depends_on_id, org_id) VALUES ($1, $2, $3)", [id, waitpointId, orgId]);
  } else {
    await pool().query(
      `INSERT INTO job_steps (job_id, name, kind, status, attempt, waitpoint_id, started_at) VALUES ($1, 'approval', 'wait', 'completed', 1, $2, now())`,
      [id, waitpointId],
    );
  }
  return id;
}

/** Which of `ids` are still there, and how many events they still have. */
async function left(ids: string[]): Promise<{ waitpoints: string[]; events: number }> {
  const w = await pool().query<{ id: string }>("SELECT id FROM waitpoints WHERE id = ANY($1::uuid[]) ORDER BY id", [ids]);
  const e = await pool().query<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE job_id = ANY($1::uuid[])", [ids]);
  return { waitpoints: w.rows.map((r) => r.id), events: e.rows[0]!.n };
}

const sorted = (ids: string[]) => [...ids].sort();

describe("waitpoint retention", () => {
  it("deletes exactly the waitpoints that ended more than JOB_RETENTION_DAYS ago and no job depends on, with their events", async () => {
    const expired = [
      await insertWaitpoint(orgs.a, "completed", { createdDaysAgo: 40, finishedDaysAgo: 31 }),
      await insertWaitpoint(orgs.a, "expired", { createdDaysAgo: 90, finishedDaysAgo: 60 }),
      await insertWaitpoint(orgs.b, "cancelled", { createdDaysAgo: 31, finishedDaysAgo: 30.01 }),
    ];
    const kept = [
      // Ended recently, however long ago it was made.
      await insertWaitpoint(orgs.a, "completed", { createdDaysAgo: 60, finishedDaysAgo: 29 }),
      // Exactly at the cut-off: not older than 30 days.
      await insertWaitpoint(orgs.b, "expired", { createdDaysAgo: 31, finishedDaysAgo: 30 }),
      // Waiting, however old (its expiry ends it first).
      await insertWaitpoint(orgs.a, "waiting", { createdDaysAgo: 400 }),
    ];
    const deleted: number[] = [];
    const task = new WaitpointRetention({
      pool: pool(),
      logger,
      days: 30,
      batch: { initial: 2, min: 2, max: 2 },
      now: () => NOW,
      onDeleted: (n) => deleted.push(n),
    });
    expect(await task.sweep()).toBe(3);
    expect(deleted).toEqual([2, 1]);
    expect(await left(expired)).toEqual({ waitpoints: [], events: 0 });
    expect(await left(kept)).toEqual({ waitpoints: sorted(kept), events: 2 });
    expect(await task.sweep()).toBe(0);
  });

  it("keeps a waitpoint while a job that depends on it is there, and lets it go once job retention deleted that job", async () => {
    const byPending = await insertWaitpoint(orgs.a, "cancelled", { createdDaysAgo: 50, finishedDaysAgo: 45 });
    const byRecent = await insertWaitpoint(orgs.b, "completed", { createdDaysAgo: 50, finishedDaysAgo: 45 });
    const byOld = await insertWaitpoint(orgs.a, "completed", { createdDaysAgo: 50, finishedDaysAgo: 45 });
    const byStep = await insertWaitpoint(orgs.b, "completed", { createdDaysAgo: 50, finishedDaysAgo: 45 });
    const pending = await insertDependent(orgs.a, byPending, "depends_on", "pending");
    const recent = await insertDependent(orgs.b, byRecent, "depends_on", "done", 10);
    const old = await insertDependent(orgs.a, byOld, "depends_on", "done", 40);
    const stepped = await insertDependent(orgs.b, byStep, "step", "done", 40);

    const waitpoints = new WaitpointRetention({ pool: pool(), logger, days: 30, now: () => NOW });
    expect(await waitpoints.sweep()).toBe(0);
    expect(await left([byPending, byRecent, byOld, byStep])).toEqual({ waitpoints: sorted([byPending, byRecent, byOld, byStep]), events: 4 });

    // Job retention deletes the two old jobs with their edges and steps; then their waitpoints may go.
    expect(await new Retention({ pool: pool(), logger, days: 30, now: () => NOW }).sweep()).toBe(2);
    const jobs = await pool().query<{ id: string }>("SELECT id FROM jobs ORDER BY id");
    expect(jobs.rows.map((r) => r.id)).toEqual(sorted([pending, recent]));
    const links = await pool().query<{ n: number }>(
      "SELECT (SELECT count(*) FROM job_dependencies WHERE job_id = ANY($1::uuid[])) + (SELECT count(*) FROM job_steps WHERE job_id = ANY($1::uuid[]))::int AS n",
      [[old, stepped]],
    );
    expect(Number(links.rows[0]!.n)).toBe(0);
    expect(await waitpoints.sweep()).toBe(2);
    expect(await left([byOld, byStep])).toEqual({ waitpoints: [], events: 0 });
    expect(await left([byPending, byRecent])).toEqual({ waitpoints: sorted([byPending, byRecent]), events: 2 });
    // The edges of the jobs left still name their waitpoints.
    const edges = await pool().query<{ depends_on_id: string }>("SELECT depends_on_id FROM job_dependencies ORDER BY depends_on_id");
    expect(edges.rows.map((r) => r.depends_on_id)).toEqual(sorted([byPending, byRecent]));
  });

  it("skips a waitpoint a job being created holds (FOR SHARE), and takes it in a later sweep", async () => {
    const wp = await insertWaitpoint(orgs.a, "completed", { createdDaysAgo: 50, finishedDaysAgo: 45 });
    const holder = await pool().connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM waitpoints WHERE id = $1 FOR SHARE", [wp]);
      const task = new WaitpointRetention({ pool: pool(), logger, days: 30, now: () => NOW });
      expect(await task.sweep()).toBe(0);
      // The creation goes through: its edge now keeps the waitpoint.
      const job = newId();
      await holder.query(
        `INSERT INTO jobs (id, org_id, type, status, payload, created_at, updated_at) VALUES ($1, $2, 'scripted', 'pending', '{}', now(), now())`,
        [job, orgs.a],
      );
      await holder.query("INSERT INTO job_dependencies (job_id, depends_on_id, org_id) VALUES ($1, $2, $3)", [job, wp, orgs.a]);
      await holder.query("COMMIT");
      expect(await task.sweep()).toBe(0);
      expect((await left([wp])).waitpoints).toEqual([wp]);
    } finally {
      holder.release();
    }
  });
});
