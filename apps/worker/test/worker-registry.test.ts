// The worker registry's two loops against real Postgres: a worker's heartbeat writes what its busy source reads (and
// nothing else), and its stop deletes the row; the leader's reaper deletes only rows silent for longer than its keep
// time and gone by their own interval — never a live worker's, nor one whose long interval has not run out.
import { PassThrough } from "node:stream";
import { listWorkers, newId } from "@conveyor/db";
import { createLogger } from "@conveyor/logger";
import { createTestDatabase, waitFor, type TestDatabase } from "@conveyor/testkit";
import { WorkerRegistry } from "../src/process/registry";
import { WorkerReaper } from "../src/maintenance/worker-reaper";

let database: TestDatabase;
const logger = createLogger({ service: "test", stream: new PassThrough() });
const orgId = newId();

beforeAll(async () => {
  database = await createTestDatabase();
  await database.db.prisma.organization.create({ data: { id: orgId, name: "Registry" } });
});
afterAll(async () => {
  await database.drop();
});

const rowOf = async (id: string) =>
  (await database.db.pool.query<{ busy: number; job_ids: string[]; types: string[]; concurrency: number }>("SELECT * FROM workers WHERE id = $1", [id]))
    .rows[0];

it("heartbeats what its busy source reads and leaves the registry on stop", async () => {
  let busy = { count: 0, jobIds: [] as string[] };
  const registry = new WorkerRegistry({ pool: database.db.pool, logger, types: ["webhook", "send_sms"], concurrency: 7, heartbeatMs: 200, busy: () => busy });
  await registry.start();
  expect(await rowOf(registry.id)).toMatchObject({ busy: 0, job_ids: [], types: ["webhook", "send_sms"], concurrency: 7 });

  const running = [newId(), newId()];
  busy = { count: 2, jobIds: running };
  await waitFor(async () => (await rowOf(registry.id))?.busy === 2, "a heartbeat with two busy slots", 5_000, 50);
  expect((await rowOf(registry.id))?.job_ids.sort()).toEqual([...running].sort());
  const [view] = (await listWorkers(database.db.pool, orgId)).filter((w) => w.id === registry.id);
  // The ids name no job of this organization: all of it is other work.
  expect(view).toMatchObject({ slots: 14, busy_slots: 2, other_busy_slots: 2, jobs: [], state: "running" });

  await registry.stop();
  expect(await rowOf(registry.id)).toBeUndefined();
});

it("reaps only workers silent past the keep time and gone by their own interval", async () => {
  const insert = async (silentSeconds: number, heartbeatMs: number) => {
    const id = newId();
    await database.db.pool.query(
      `INSERT INTO workers (id, host, pid, version, node_version, types, concurrency, heartbeat_ms, heartbeat_at)
       VALUES ($1, 'host', 1, '0.1.0', 'v24.0.0', '{webhook}', 1, $2, now() - $3 * interval '1 second')`,
      [id, heartbeatMs, silentSeconds],
    );
    return id;
  };
  const longGone = await insert(600, 5_000);
  const justGone = await insert(20, 5_000);
  const live = await insert(0, 5_000);
  // Silent for 2 minutes, but it heartbeats every minute: not gone until 3 minutes.
  const slowBeat = await insert(120, 60_000);

  const reaper = new WorkerReaper({ pool: database.db.pool, logger, intervalMs: 100, keepMs: 60_000 });
  reaper.start();
  try {
    await waitFor(async () => (await rowOf(longGone)) === undefined, "the long-gone worker reaped", 5_000, 50);
  } finally {
    await reaper.stop();
  }
  for (const id of [justGone, live, slowBeat]) expect(await rowOf(id)).toBeDefined();
  const states = Object.fromEntries((await listWorkers(database.db.pool, orgId)).map((w) => [w.id, w.state]));
  expect([states[justGone], states[live], states[slowBeat]]).toEqual(["gone", "running", "running"]);
});
