// The reconciler against real Postgres and a private Redis: what it re-enqueues, what it never touches, and
// that two of them at once queue nothing twice (docs/reference/robustness.md#r7).
import { Queue } from "bullmq";
import { createLogger } from "@conveyor/logger";
import { newId, registerWorker } from "@conveyor/db";
import { PassThrough } from "node:stream";
import { Reconciler } from "../src/maintenance/reconciler";
import { restoreMissing } from "../src/dispatch/redis-repair";
import { postgresAndRedis } from "./support/postgres-and-redis";

const prefix = "reconciler-test";
const logger = createLogger({ service: "test", stream: new PassThrough() });
const rig = postgresAndRedis({ prefix, orgName: "Reconciled" });
const { orgId } = rig;
beforeEach(async () => {
  await rig.redis.flushall();
  await rig.pool.query("TRUNCATE jobs, job_queue, events, job_search CASCADE");
});

function reconciler(overrides: Partial<ConstructorParameters<typeof Reconciler>[0]> = {}) {
  return new Reconciler({ ...rig.deps, logger, intervalMs: 60_000, graceMs: 0, ...overrides });
}

/** The envelope each handed-over job was put in (one each here). */
const envelopeOf = new Map<string, string>();

/**
 * A job row, and for a live one its place in the dispatcher's queue: handed over to BullMQ in an envelope of its own
 * (`dispatched`, the default, and always for a processing job) or still waiting in Postgres.
 */
async function insertJob(fields: {
  status: string;
  type?: string;
  retries?: number;
  maxRetries?: number;
  runAt?: Date | null;
  ageMs?: number;
  dispatched?: boolean;
}) {
  const id = newId();
  await rig.pool.query(
    `INSERT INTO jobs (id, org_id, type, status, payload, retries, max_retries, run_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4::job_status, '{}', $5, $6, $7, now(), now() - $8 * interval '1 millisecond')`,
    [id, orgId, fields.type ?? "webhook", fields.status, fields.retries ?? 0, fields.maxRetries ?? 0, fields.runAt ?? null, fields.ageMs ?? 60_000],
  );
  if (fields.status === "pending" || fields.status === "processing") {
    const dispatched = fields.status === "processing" || (fields.dispatched ?? true);
    const envelope = dispatched ? newId() : null;
    if (envelope) envelopeOf.set(id, envelope);
    await rig.pool.query(
      `INSERT INTO job_queue (job_id, type, org_id, priority, due_at, dispatched_at, envelope_id)
       VALUES ($1, $2, $3, 5, COALESCE($4, now()), CASE WHEN $5 THEN now() END, $6)`,
      [id, fields.type ?? "webhook", orgId, fields.runAt ?? null, dispatched, envelope],
    );
  }
  return id;
}

async function dispatchedAt(id: string): Promise<Date | null | undefined> {
  const { rows } = await rig.pool.query<{ dispatched_at: Date | null }>("SELECT dispatched_at FROM job_queue WHERE job_id = $1", [id]);
  return rows[0]?.dispatched_at;
}

/** The BullMQ state of the envelope carrying job `id`, if Redis holds one (and it names the job). */
async function state(type: string, id: string) {
  const queue = new Queue(type, { connection: rig.redis, prefix });
  try {
    const envelope = envelopeOf.has(id) ? await queue.getJob(envelopeOf.get(id)!) : undefined;
    if (!envelope) return null;
    expect(envelope.data).toEqual({ ids: [id] });
    return { state: await envelope.getState(), attempts: envelope.opts.attempts, delay: envelope.opts.delay };
  } finally {
    await queue.close();
  }
}

describe("Reconciler", () => {
  it("puts handed-over pending jobs Redis lost back in line, re-queues running ones, and never touches finished ones", async () => {
    const pending = await insertJob({ status: "pending", maxRetries: 3, retries: 1 });
    const processing = await insertJob({ status: "processing", type: "send_email" });
    const done = await insertJob({ status: "done" });
    const failed = await insertJob({ status: "failed" });
    const cancelled = await insertJob({ status: "cancelled" });

    const report = await reconciler().runOnce();
    expect(report).toMatchObject({ ran: true, fullSweep: true, reenqueued: 2 });
    // The dispatcher hands the pending job over again, in its turn; the running one goes straight back to its queue.
    expect(await dispatchedAt(pending)).toBeNull();
    expect(await state("webhook", pending)).toBeNull();
    expect(await state("send_email", processing)).toMatchObject({ state: "waiting", attempts: 1 });
    for (const id of [done, failed, cancelled]) expect(await state("webhook", id)).toBeNull();
  });

  it("leaves jobs still waiting in Postgres alone: a delayed job or a scheduled retry is the dispatcher's", async () => {
    const id = await insertJob({ status: "pending", maxRetries: 2, retries: 1, runAt: new Date(Date.now() + 60_000), dispatched: false });
    expect(await reconciler().runOnce()).toMatchObject({ fullSweep: true, reenqueued: 0 });
    expect(await state("webhook", id)).toBeNull();
    expect(await dispatchedAt(id)).toBeNull();
  });

  it("leaves alone jobs that Redis already holds", async () => {
    const id = await insertJob({ status: "pending" });
    await rig.queues.enqueue([{ id: envelopeOf.get(id)!, type: "webhook", jobIds: [id] }]);
    await rig.redis.set(`${prefix}:reconciler:sentinel`, "x");
    const report = await reconciler().runOnce();
    expect(report).toMatchObject({ ran: true, fullSweep: false, checked: 1, reenqueued: 0 });
  });

  it("in a routine cycle leaves recent jobs alone (they may be mid-enqueue), but not after a wipe", async () => {
    const fresh = await insertJob({ status: "pending", ageMs: 0 });
    await rig.redis.set(`${prefix}:reconciler:sentinel`, "x");
    expect(await reconciler({ graceMs: 30_000 }).runOnce()).toMatchObject({ fullSweep: false, reenqueued: 0 });
    await rig.redis.flushall();
    expect(await reconciler({ graceMs: 30_000 }).runOnce()).toMatchObject({ fullSweep: true, reenqueued: 1 });
    expect(await dispatchedAt(fresh)).toBeNull();
  });

  it("checks a bounded slice per routine cycle and continues where it stopped", async () => {
    const ids = await Promise.all(Array.from({ length: 7 }, () => insertJob({ status: "processing" })));
    await rig.redis.set(`${prefix}:reconciler:sentinel`, "x");
    const r = reconciler({ sliceSize: 3 });
    const reports = [await r.runOnce(), await r.runOnce(), await r.runOnce()];
    expect(reports.map((x) => x.checked)).toEqual([3, 3, 1]);
    expect(reports.reduce((n, x) => n + x.reenqueued, 0)).toBe(7);
    for (const id of ids) expect(await state("webhook", id)).not.toBeNull();
  });

  it("gives a running job that has no envelope (it started before envelopes) one, and records it", async () => {
    const id = await insertJob({ status: "processing" });
    await rig.pool.query("UPDATE job_queue SET envelope_id = NULL WHERE job_id = $1", [id]);
    expect(await reconciler().runOnce()).toMatchObject({ fullSweep: true, reenqueued: 1 });
    const { rows } = await rig.pool.query<{ envelope_id: string }>("SELECT envelope_id FROM job_queue WHERE job_id = $1", [id]);
    envelopeOf.set(id, rows[0]!.envelope_id);
    expect(await state("webhook", id)).toMatchObject({ state: "waiting" });
  });

  it("restores nothing that moved on after it was read: a job seen in an envelope Redis has since completed", async () => {
    // Read as running in an envelope (gone from Redis: it completed once the attempt's outcome was recorded) ...
    const retried = await insertJob({ status: "processing" });
    const seenIn = envelopeOf.get(retried)!;
    // ... and by the time Redis answered, back in line for its retry and handed over again in another envelope.
    await rig.pool.query("UPDATE jobs SET status = 'pending' WHERE id = $1", [retried]);
    await rig.pool.query("UPDATE job_queue SET envelope_id = $2 WHERE job_id = $1", [retried, newId()]);
    const done = await insertJob({ status: "processing" });
    const doneIn = envelopeOf.get(done)!;
    await rig.pool.query("UPDATE jobs SET status = 'done' WHERE id = $1", [done]);
    await rig.pool.query("DELETE FROM job_queue WHERE job_id = $1", [done]);
    const restored = await restoreMissing(rig.deps, [
      { id: retried, type: "webhook", status: "processing", envelopeId: seenIn },
      { id: done, type: "webhook", status: "processing", envelopeId: doneIn },
    ]);
    expect(restored).toBe(0);
    expect(await state("webhook", retried)).toBeNull();
    expect(await state("webhook", done)).toBeNull();
    expect(await dispatchedAt(retried)).not.toBeNull();
  });

  it("leaves alone a running job whose holder lives (its second delivery was refused), and restores it once the holder is gone", async () => {
    // docs/reference/lifecycle.md#storage-and-leases: a running job whose worker still heartbeats is that worker's; an envelope of it missing from Redis is a
    // refused second delivery, and putting one back would be refused again every cycle.
    const workerId = newId();
    await registerWorker(rig.pool, {
      id: workerId,
      host: "h",
      pid: 1,
      version: "t",
      nodeVersion: "t",
      types: ["webhook"],
      concurrency: 1,
      heartbeatMs: 1_000,
    });
    const held = await insertJob({ status: "processing" });
    await rig.pool.query("UPDATE jobs SET fence = $2 WHERE id = $1", [held, `${workerId}:${newId()}`]);
    const orphan = await insertJob({ status: "processing" });
    await rig.pool.query("UPDATE jobs SET fence = $2 WHERE id = $1", [orphan, `${newId()}:${newId()}`]);

    expect(await reconciler().runOnce()).toMatchObject({ fullSweep: true, checked: 2, reenqueued: 1 });
    expect(await state("webhook", held)).toBeNull();
    expect(await state("webhook", orphan)).toMatchObject({ state: "waiting" });

    // The holder's heartbeat lapses (three intervals): its job is lost with it and goes back on its queue.
    await rig.pool.query("UPDATE workers SET heartbeat_at = now() - interval '4 seconds' WHERE id = $1", [workerId]);
    expect(await reconciler().runOnce()).toMatchObject({ fullSweep: false, reenqueued: 1 });
    expect(await state("webhook", held)).toMatchObject({ state: "waiting" });
    await rig.pool.query("DELETE FROM workers WHERE id = $1", [workerId]);
  });

  it("A7: two reconcilers running at once enqueue nothing twice", async () => {
    const ids = await Promise.all(Array.from({ length: 50 }, () => insertJob({ status: "processing" })));
    const a = reconciler();
    const b = reconciler();
    const reports = await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
    const ran = reports.filter((r) => r.ran);
    expect(ran).toHaveLength(1);
    expect(reports.reduce((n, r) => n + r.reenqueued, 0)).toBe(50);

    // BullMQ's events stream records one "added" per job actually added ("duplicated" for a no-op add).
    const added: string[] = [];
    const events = await rig.redis.xrange(`${prefix}:webhook:events`, "-", "+");
    for (const [, fields] of events) {
      const event = Object.fromEntries(Array.from({ length: fields.length / 2 }, (_, i) => [fields[2 * i], fields[2 * i + 1]]));
      if (event.event === "added") added.push(event.jobId!);
    }
    expect(added.sort()).toEqual(ids.map((id) => envelopeOf.get(id)).sort());
  });

  it("holds a lock, so a cycle started while another runs is skipped", async () => {
    await insertJob({ status: "pending" });
    await rig.redis.set(`${prefix}:reconciler:lock`, "someone-else", "PX", 10_000);
    expect(await reconciler().runOnce()).toEqual({ ran: false, fullSweep: false, checked: 0, reenqueued: 0 });
  });
});
