// The event readers' horizon (conveyor_event_horizon(), packages/db/src/events/events.ts) on a private Postgres server with
// two databases: Conveyor's and another application's. A write transaction of the other database never holds the
// readers back — running or prepared (two-phase commit) —, one of Conveyor's database holds back every event with a
// larger id until it ends; and with writers of both coming and going, a reader never skips or repeats an event.
import pg from "pg";
import { startPrivatePostgres, type PrivatePostgres } from "@conveyor/testkit";
import { createDatabase, eventHorizon, insertJobs, migrate, newId, readEventTexts, type Database } from "../src";

let server: PrivatePostgres;
let database: Database;
let orgId: string;
const clients: pg.Client[] = [];

beforeAll(async () => {
  server = await startPrivatePostgres();
  // Prepared transactions are off by default; the setting needs a restart.
  const admin = new pg.Client({ connectionString: server.url("postgres") });
  await admin.connect();
  await admin.query("ALTER SYSTEM SET max_prepared_transactions = 10");
  await admin.query("CREATE DATABASE elsewhere");
  await admin.end();
  server.stop();
  server.start();
  await migrate(server.url("conveyor"));
  database = createDatabase({ url: server.url("conveyor"), poolSize: 4 });
  orgId = newId();
  await database.pool.query("INSERT INTO organizations (id, name) VALUES ($1, 'Horizon')", [orgId]);
  const other = await connect("elsewhere");
  await other.query("CREATE TABLE orders (id serial PRIMARY KEY, note text)");
}, 120_000);
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.end().catch(() => {})));
  // A prepared transaction outlives its connection: one left by a failed test would hold the next ones back.
  for (const name of ["conveyor", "elsewhere"]) {
    const client = await connect(name);
    const { rows } = await client.query<{ gid: string }>("SELECT gid FROM pg_prepared_xacts WHERE database = current_database()");
    for (const { gid } of rows) await client.query(`ROLLBACK PREPARED '${gid}'`);
  }
  await Promise.all(clients.splice(0).map((c) => c.end().catch(() => {})));
});
afterAll(async () => {
  await database.close().catch(() => {});
  server.destroy();
});

async function connect(name: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: server.url(name) });
  await client.connect();
  clients.push(client);
  return client;
}

/** A write transaction left open: BEGIN and a transaction id taken, as any INSERT or UPDATE would. */
async function openWriteTransaction(name: string): Promise<pg.Client> {
  const client = await connect(name);
  await client.query("BEGIN");
  await client.query("SELECT pg_current_xact_id()");
  return client;
}

/** `count` new jobs of one statement (one transaction): a job.created event each. Returns the event ids. */
async function writeEvents(count: number, db: pg.Pool | pg.ClientBase = database.pool): Promise<number[]> {
  const ids = Array.from({ length: count }, () => newId());
  await insertJobs(
    db as pg.Pool,
    ids.map((id) => ({ id, orgId, type: "word_count", payloadJson: "{}", maxRetries: 0, createdAt: new Date() })),
  );
  const { rows } = await database.pool.query<{ id: string }>("SELECT id::text FROM events WHERE job_id = ANY($1::uuid[]) ORDER BY events.id", [ids]);
  return rows.map((r) => Number(r.id));
}

/** Every event a reader gets after `after` now, as the SSE tail reads them. */
async function readAfter(after: number): Promise<{ ids: number[]; waiting: boolean }> {
  const page = await readEventTexts(database.pool, { orgId: null, after: BigInt(after), limit: 10_000 });
  return { ids: page.events.map((e) => e.id), waiting: page.waiting };
}

const newest = async () => Number((await database.pool.query<{ id: string }>("SELECT COALESCE(max(id), 0)::text AS id FROM events")).rows[0]!.id);

describe("the event horizon", () => {
  it("is not held back by a write transaction open in another database on the same server", async () => {
    const start = await newest();
    const other = await openWriteTransaction("elsewhere");
    await other.query("INSERT INTO orders (note) VALUES ('a long batch job of another application')");
    const written = await writeEvents(3);
    expect(await readAfter(start)).toEqual({ ids: written, waiting: false });
    expect(Number(await eventHorizon(database.pool))).toBeGreaterThanOrEqual(written[2]!);
    await other.query("COMMIT");
  });

  it("looks at what runs now even inside a transaction that read pg_stat_activity before (Postgres keeps that reading)", async () => {
    const start = await newest();
    const reader = await connect("conveyor");
    await reader.query("BEGIN");
    await reader.query("SELECT count(*) FROM pg_stat_activity");
    const other = await openWriteTransaction("elsewhere");
    const written = await writeEvents(2);
    const { rows } = await reader.query<{ id: string }>(
      "SELECT id::text FROM events WHERE id > $1 AND id < (SELECT conveyor_event_horizon()) ORDER BY events.id",
      [start],
    );
    expect(rows.map((r) => Number(r.id))).toEqual(written);
    await reader.query("COMMIT");
    await other.query("ROLLBACK");
  });

  it("holds back every later event while a write transaction of this database runs, and hands each over once it ends", async () => {
    const start = await newest();
    const long = await openWriteTransaction("conveyor");
    // The long transaction writes an event of its own (its id is the smallest), then others commit theirs.
    const mine = newId();
    await insertJobs(long as unknown as pg.Pool, [{ id: mine, orgId, type: "word_count", payloadJson: "{}", maxRetries: 0, createdAt: new Date() }]);
    const later = [...(await writeEvents(2)), ...(await writeEvents(3))];
    expect(await readAfter(start)).toEqual({ ids: [], waiting: true });
    expect(Number(await eventHorizon(database.pool))).toBeLessThan(later[0]!);

    await long.query("COMMIT");
    const { rows } = await database.pool.query<{ id: string }>("SELECT id::text FROM events WHERE job_id = $1", [mine]);
    const all = await readAfter(start);
    expect(all).toEqual({ ids: [Number(rows[0]!.id), ...later], waiting: false });
    expect(await readAfter(all.ids[all.ids.length - 1]!)).toEqual({ ids: [], waiting: false });
  });

  it("is not held back by a prepared transaction of another database; one of this database holds it until COMMIT PREPARED", async () => {
    const start = await newest();
    const other = await openWriteTransaction("elsewhere");
    await other.query("INSERT INTO orders (note) VALUES ('prepared elsewhere')");
    await other.query("PREPARE TRANSACTION 'elsewhere-1'");
    const first = await writeEvents(2);
    expect(await readAfter(start)).toEqual({ ids: first, waiting: false });

    // An event written by hand: a transaction that sent NOTIFY (as insertJobs does) cannot be prepared.
    const prepared = (await writeEvents(1))[0]!;
    const ours = await connect("conveyor");
    await ours.query("BEGIN");
    const { rows } = await ours.query<{ id: string }>(
      `INSERT INTO events (id, org_id, job_id, type, data) SELECT conveyor_next_event_id(), org_id, job_id, 'job.started', data FROM events WHERE id = $1
       RETURNING id::text`,
      [prepared],
    );
    await ours.query("PREPARE TRANSACTION 'conveyor-1'");
    const second = await writeEvents(2);
    expect(await readAfter(prepared)).toEqual({ ids: [], waiting: true });

    await ours.query("COMMIT PREPARED 'conveyor-1'");
    expect(await readAfter(prepared)).toEqual({ ids: [Number(rows[0]!.id), ...second], waiting: false });
    await other.query("COMMIT PREPARED 'elsewhere-1'");
  });

  it("never skips or repeats an event while writers of this database and another one come and go", async () => {
    const start = await newest();
    const deadline = Date.now() + 3_000;
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // This database: transactions that write events and stay open a random while; some roll back.
    const ourWriters = Array.from({ length: 3 }, async () => {
      const client = await connect("conveyor");
      while (Date.now() < deadline) {
        await client.query("BEGIN");
        await writeEvents(1 + Math.floor(Math.random() * 3), client);
        await pause(Math.random() * 40);
        await client.query(Math.random() < 0.2 ? "ROLLBACK" : "COMMIT");
      }
    });
    // The other database: write transactions of up to 300 ms.
    const theirWriters = Array.from({ length: 2 }, async () => {
      const client = await connect("elsewhere");
      while (Date.now() < deadline) {
        await client.query("BEGIN");
        await client.query("INSERT INTO orders (note) VALUES ('busy')");
        await pause(Math.random() * 300);
        await client.query("COMMIT");
      }
    });
    const read: number[] = [];
    let position = start;
    let writing = true;
    const reader = (async () => {
      for (;;) {
        const { ids } = await readAfter(position);
        read.push(...ids);
        if (ids.length) position = ids[ids.length - 1]!;
        else if (!writing && position >= (await newest())) return;
        await pause(5);
      }
    })();
    await Promise.all([...ourWriters, ...theirWriters]);
    writing = false;
    await reader;
    const { rows } = await database.pool.query<{ id: string }>("SELECT id::text FROM events WHERE id > $1 ORDER BY events.id", [start]);
    expect(rows.length).toBeGreaterThan(20);
    const all = rows.map((r) => Number(r.id));
    const missed = all.filter((id) => !read.includes(id));
    const twice = read.filter((id, i) => read.indexOf(id) !== i);
    expect({ missed, twice, ordered: read.every((id, i) => i === 0 || id > read[i - 1]!) }).toEqual({ missed: [], twice: [], ordered: true });
    expect(read).toEqual(all);
  });
});
