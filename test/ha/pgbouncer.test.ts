// PgBouncer 1.18 in transaction pooling mode between the service and Postgres (docs/reference/high-availability.md#high-availability, docs/reference/robustness.md#r54): statements
// through it carry no name, and what keeps a session (LISTEN, the dispatch lock) goes straight to Postgres, so a
// PgBouncer restart costs the API and the workers a reconnect of their pooled connections and nothing else.
import pg from "pg";
import { createDatabase, inTransaction, newId, type Database } from "@conveyor/db";
import { createTestDatabase, startPgBouncer, throughPooler, waitFor, type PgBouncer, type TestDatabase } from "@conveyor/testkit";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

describe("statements through a transaction pooler", () => {
  // One server connection behind the pooler: every transaction of every client runs on it, so a statement one
  // client prepared by name is there when another client prepares the same name.
  let pooler: PgBouncer;
  let database: TestDatabase;
  beforeAll(async () => {
    pooler = await startPgBouncer({ poolSize: 1 });
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
    await pooler.stop();
  });

  const named = (n: number) => ({ name: "conveyor-ha-probe", text: `SELECT $1::int + ${n} AS v`, values: [1] });

  it("breaks a plain pg pool that names its statements (why names must go)", async () => {
    const plain = [0, 1].map(() => new pg.Client({ connectionString: pooler.url(database.name) }));
    try {
      for (const client of plain) await client.connect();
      await plain[0]!.query(named(0));
      await expect(plain[1]!.query(named(1))).rejects.toThrow(/prepared statement "conveyor-ha-probe" already exists/);
    } finally {
      await Promise.all(plain.map((client) => client.end().catch(() => {})));
    }
  });

  it("runs named statements unnamed through the pooler, from many connections at once", async () => {
    const db = createDatabase({ url: pooler.url(database.name), directUrl: database.directUrl ?? database.url, poolSize: 4 });
    try {
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => db.pool.query<{ v: number }>(named(i % 7))));
      expect(results.map((r) => r.rows[0]!.v)).toEqual(Array.from({ length: 40 }, (_, i) => 1 + (i % 7)));
      // A transaction as the service runs them (inTransaction), through the pooler: its statements share one server
      // connection, so it reads its own writes before they commit, and they are there after.
      const count = async (client: pg.Pool | pg.PoolClient) =>
        Number((await client.query<{ n: string }>("SELECT count(*) AS n FROM organizations WHERE name = 'pooler probe'")).rows[0]!.n);
      const before = await count(db.pool);
      const inside = await inTransaction(db.pool, async (tx) => {
        await tx.query("INSERT INTO organizations (id, name) VALUES ($1, 'pooler probe'), ($2, 'pooler probe')", [newId(), newId()]);
        return count(tx);
      });
      expect(inside).toBe(before + 2);
      expect(await count(db.pool)).toBe(before + 2);
    } finally {
      await db.close();
    }
  });

  it("keeps named statements on a direct connection", async () => {
    const db: Database = createDatabase({ url: database.directUrl ?? database.url, poolSize: 1 });
    try {
      await db.pool.query(named(0));
      await db.pool.query(named(0));
      const { rows } = await db.pool.query<{ name: string }>("SELECT name FROM pg_prepared_statements");
      expect(rows.map((r) => r.name)).toContain("conveyor-ha-probe");
    } finally {
      await db.close();
    }
  });
});

describe("the service behind PgBouncer", () => {
  let pooler: PgBouncer;
  let stack: Stack;
  let direct: pg.Client;
  beforeAll(async () => {
    pooler = await startPgBouncer();
    const database = throughPooler(await createTestDatabase(), pooler);
    stack = await startStack({ database });
    await stack.startWorker();
    direct = new pg.Client({ connectionString: database.directUrl });
    await direct.connect();
  }, 120_000);
  afterEach(() => stack.expectOtherOrgUntouched());
  afterAll(async () => {
    await direct?.end();
    await stack?.close();
    await pooler?.stop();
  });

  const done = (job: { status: string }) => job.status === "done";
  /** The worker's and API's sessions on Postgres itself: LISTENs and the dispatch lock's holder, with their start. */
  const sessions = async () =>
    (
      await direct.query<{ pid: number; application_name: string; query: string; backend_start: Date; locks: boolean }>(
        `SELECT a.pid, a.application_name, a.query, a.backend_start,
                EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted) AS locks
           FROM pg_stat_activity a WHERE a.datname = current_database() AND a.application_name LIKE '%-session'`,
      )
    ).rows;

  it("runs jobs with every pooled connection through PgBouncer and the sessions straight to Postgres", async () => {
    const created = await stack.post("/jobs", { type: "word_count", payload: { text: "through the pooler" } });
    expect(created.status).toBe(202);
    await stack.waitForJob(created.body.id, done);

    const clients = await pooler.clients();
    expect(clients).toContain("conveyor-worker");
    expect(clients).toContain("conveyor-test");
    expect(clients.filter((name) => name.endsWith("-session"))).toEqual([]);
    const held = await sessions();
    expect(held.filter((s) => s.application_name === "conveyor-worker-session" && /^LISTEN /.test(s.query)).length).toBeGreaterThanOrEqual(1);
    expect(held.some((s) => s.application_name === "conveyor-worker-session" && s.locks)).toBe(true);
  });

  it("keeps LISTEN and the dispatch lock on their own connections across a PgBouncer restart", async () => {
    const before = await sessions();
    const lockHolder = before.find((s) => s.locks)!;
    expect(lockHolder).toBeDefined();
    await pooler.restart();

    // Every pooled connection was cut; the next job still runs end to end, woken by the same LISTEN connections.
    const created = await waitFor(async () => {
      const res = await stack.post("/jobs", { type: "word_count", payload: { text: "after the restart" } });
      return res.status === 202 ? res : null;
    }, "POST /jobs to be accepted after the restart");
    const job = await stack.waitForJob(created.body.id, done);
    expect(job.result).toMatchObject({ words: 3 });

    const after = await sessions();
    // The same backends: nothing that keeps a session had to reconnect.
    expect(after.find((s) => s.pid === lockHolder.pid)?.locks).toBe(true);
    for (const listener of before.filter((s) => /^LISTEN /.test(s.query))) expect(after.map((s) => s.pid)).toContain(listener.pid);
    expect(stack.workers[0]!.output()).not.toMatch(/cannot LISTEN/);
  });
});
