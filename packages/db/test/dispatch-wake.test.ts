// What a lone job's way to the dispatcher depends on (issue 32): the insert's NOTIFY names the new jobs' types (so a
// woken dispatcher looks at those alone), and the dispatcher's own connection plans its statements once without
// leaving its settings on a connection the pool lends to others.
import { closeHandOverConnection, DISPATCH_CHANNEL, handOverConnection, insertJobs, newId, type NewJob } from "@conveyor/db";
import { createTestDatabase, waitFor, type TestDatabase } from "@conveyor/testkit";
import type pg from "pg";

let database: TestDatabase;
let orgId: string;
let listener: pg.PoolClient;
const payloads: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  orgId = newId();
  await database.db.prisma.organization.create({ data: { id: orgId, name: "Wakes" } });
  listener = await database.db.pool.connect();
  listener.on("notification", (message) => {
    if (message.channel === DISPATCH_CHANNEL) payloads.push(message.payload ?? "");
  });
  await listener.query(`LISTEN ${DISPATCH_CHANNEL}`);
});
afterAll(async () => {
  listener?.release(true);
  await database.drop();
});

const job = (type: string, extra: Partial<NewJob> = {}): NewJob => ({
  id: newId(),
  orgId,
  type,
  payloadJson: "{}",
  maxRetries: 0,
  createdAt: new Date(),
  ...extra,
});

/** The dispatch NOTIFY payloads `insert` sends, each a sorted list of the types it names. */
async function notified(insert: () => Promise<unknown>): Promise<string[][]> {
  payloads.length = 0;
  await insert();
  // A NOTIFY sent after the insert's commit marks the end of what it sent (notifications arrive in commit order).
  await database.db.pool.query(`NOTIFY ${DISPATCH_CHANNEL}, 'end'`);
  await waitFor(() => payloads.includes("end"), "the closing notification");
  return payloads.filter((p) => p !== "end").map((p) => (p === "" ? [] : p.split(" ").sort()));
}

it("names the types of the inserted jobs, each once, in one NOTIFY", async () => {
  expect(await notified(() => insertJobs(database.db.pool, [job("email"), job("pdf_render"), job("email")]))).toEqual([["email", "pdf_render"]]);
});

it("names the type of a job due later too (the dispatcher then reads when it falls due)", async () => {
  expect(await notified(() => insertJobs(database.db.pool, [job("email", { runAt: new Date(Date.now() + 60_000) })]))).toEqual([["email"]]);
});

it("sends the empty payload (look at every type) when the jobs have more than 16 types", async () => {
  const jobs = Array.from({ length: 17 }, (_, i) => job(`type_${i}`));
  expect(await notified(() => insertJobs(database.db.pool, jobs))).toEqual([[]]);
  expect(
    await notified(() =>
      insertJobs(
        database.db.pool,
        jobs.slice(0, 16).map((j) => job(j.type)),
      ),
    ),
  ).toEqual([
    jobs
      .slice(0, 16)
      .map((j) => j.type)
      .sort(),
  ]);
});

it("sends the empty payload when a dedupe key refused every job (nothing new to name)", async () => {
  const dedupe = { key: `k-${newId()}`, seconds: 60 };
  expect(await notified(() => insertJobs(database.db.pool, [job("email", { dedupe })]))).toEqual([["email"]]);
  expect(await notified(() => insertJobs(database.db.pool, [job("email", { dedupe })]))).toEqual([[]]);
});

it("gives the dispatcher generic plans and synchronous_commit off, and the pool its connection back without them", async () => {
  const settings = (c: pg.PoolClient) =>
    c.query<{ mode: string; sync: string }>("SELECT current_setting('plan_cache_mode') AS mode, current_setting('synchronous_commit') AS sync");
  const marker = (await handOverConnection(database.db.pool))!;
  expect(marker).not.toBeNull();
  const pid = (await marker.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
  expect((await settings(marker)).rows[0]).toEqual({ mode: "force_generic_plan", sync: "off" });

  // Another dispatcher does not get the lock, and the connection it tried with goes back to the pool as it was.
  expect(await handOverConnection(database.db.pool)).toBeNull();
  await closeHandOverConnection(marker);

  // The pool lends its most recently returned connections first: the dispatcher's and the one the other tried with.
  const lent = [await database.db.pool.connect(), await database.db.pool.connect()];
  try {
    const seen = await Promise.all(
      lent.map(async (c) => ({ pid: (await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid, ...(await settings(c)).rows[0]! })),
    );
    expect(seen.map((c) => c.pid)).toContain(pid);
    for (const { mode, sync } of seen) expect({ mode, sync }).toEqual({ mode: "auto", sync: "on" });
  } finally {
    for (const c of lent) c.release();
  }
});
