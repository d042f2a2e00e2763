// A job handed over to a worker-protocol lease (docs/reference/lifecycle.md#your-own-workers) is not one a dispatcher lost: a new dispatcher leader's
// recovery (recentHandOvers + restoreMissing, as Dispatcher.start runs them) and the reconciler leave it alone in the
// moment between the lease's hand-over and its claim, so it starts once, not twice with an interruption.
import { PassThrough } from "node:stream";
import { createLogger } from "@conveyor/logger";
import { insertJobs, leaseJobs, newId, recentHandOvers } from "@conveyor/db";
import { restoreMissing } from "../src/dispatch/redis-repair";
import { postgresAndRedis } from "./support/postgres-and-redis";
import { Reconciler } from "../src/maintenance/reconciler";

const prefix = "lease-recovery-test";
const rig = postgresAndRedis({ prefix, orgName: "Own workers" });
const { orgId } = rig;
const TYPE = "own_type";
beforeAll(() => rig.pool.query(`INSERT INTO org_job_types (org_id, name, payload_schema) VALUES ($1, $2, '{"type": "object"}')`, [orgId, TYPE]));

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 10));
}

it("a new leader's recovery and the reconciler leave alone a job handed over to a lease and not yet claimed", async () => {
  const pool = rig.pool;
  const id = newId();
  await insertJobs(pool, [{ id, orgId, type: TYPE, payloadJson: "{}", maxRetries: 0, createdAt: new Date() }]);
  // Hold the job's row so the lease's claim (an UPDATE of jobs) waits after its hand-over has committed: the window.
  const blocker = await pool.connect();
  let leased: Awaited<ReturnType<typeof leaseJobs>>;
  try {
    await blocker.query("BEGIN");
    await blocker.query("SELECT 1 FROM jobs WHERE id = $1 FOR NO KEY UPDATE", [id]);
    const leasing = leaseJobs(pool, { orgId, types: [TYPE], max: 1, workerId: newId(), leaseMs: 30_000 });
    await until(async () => (await pool.query("SELECT 1 FROM job_queue WHERE job_id = $1 AND dispatched_at IS NOT NULL", [id])).rowCount === 1);
    // A dispatcher that just became leader looks for hand-overs Redis does not hold, as Dispatcher.start does.
    const recent = await recentHandOvers(pool, 120_000);
    const restored = await restoreMissing(
      rig.deps,
      recent.map((job) => ({ id: job.jobId, type: job.type, status: job.status, envelopeId: job.envelopeId })),
    );
    expect(restored).toBe(0);
    // Nor does the reconciler's full sweep (after a Redis wipe: every live job, however recent) put it back.
    const reconciler = new Reconciler({
      ...rig.deps,
      logger: createLogger({ service: "test", stream: new PassThrough() }),
      intervalMs: 60_000,
      graceMs: 0,
    });
    expect(await reconciler.runOnce()).toMatchObject({ ran: true, fullSweep: true, reenqueued: 0 });
    await blocker.query("COMMIT");
    leased = await leasing;
  } finally {
    blocker.release();
  }
  expect(leased.jobs.map((j) => j.id)).toEqual([id]);
  const { rows } = await pool.query<{ status: string; interruptions: number; dispatched: boolean }>(
    "SELECT j.status, j.interruptions, q.dispatched_at IS NOT NULL AS dispatched FROM jobs j JOIN job_queue q ON q.job_id = j.id WHERE j.id = $1",
    [id],
  );
  expect(rows[0]).toEqual({ status: "processing", interruptions: 0, dispatched: true });
  // Its lease is live: another lease call finds nothing to take.
  expect((await leaseJobs(pool, { orgId, types: [TYPE], max: 1, workerId: newId(), leaseMs: 30_000 })).jobs).toEqual([]);
});
