// The pool survives Postgres going away under a connection it has lent out (a transaction between two statements,
// a LISTEN connection): without a listener, the client's 'error' event would end the process.
import { startPrivatePostgres, waitFor, type PrivatePostgres } from "@conveyor/testkit";
import { createDatabase, type Database } from "../src";

let server: PrivatePostgres;
let database: Database;
beforeAll(async () => {
  server = await startPrivatePostgres();
  database = createDatabase({ url: server.url("postgres"), poolSize: 2 });
}, 60_000);
afterAll(async () => {
  await database.close().catch(() => {});
  server.destroy();
});

it("keeps running when a lent client's connection ends, fails its next statement, and serves again once Postgres is back", async () => {
  const uncaught: Error[] = [];
  const record = (error: Error) => uncaught.push(error);
  process.on("uncaughtException", record);
  try {
    const lent = await database.pool.connect();
    await lent.query("BEGIN");
    const ended = new Promise((resolve) => lent.once("end", resolve));
    server.stop();
    await ended;
    await expect(lent.query("SELECT 1")).rejects.toThrow();
    lent.release();

    server.start();
    const { rows } = await waitFor(() => database.pool.query<{ one: number }>("SELECT 1 AS one").catch(() => null), "Postgres to be back", 30_000, 200);
    expect(rows).toEqual([{ one: 1 }]);
    expect(uncaught).toEqual([]);
  } finally {
    process.off("uncaughtException", record);
  }
}, 60_000);
