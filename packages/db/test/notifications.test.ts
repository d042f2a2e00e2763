// The LISTEN connection of the dispatcher, the webhook relay and the API's event tail: it wakes its owner on every
// NOTIFY, comes back after its connection is killed, and never leaves a LISTENing connection behind.
import { startPrivatePostgres, waitFor, type PrivatePostgres } from "@conveyor/testkit";
import { createDatabase, NotificationListener, type Database } from "../src";

let server: PrivatePostgres;
let database: Database;
beforeAll(async () => {
  server = await startPrivatePostgres();
  database = createDatabase({ url: server.url("postgres"), poolSize: 4 });
}, 60_000);
afterAll(async () => {
  await database.close().catch(() => {});
  server.destroy();
});

const CHANNEL = "conveyor_test_wake";
const listeners = async () =>
  (await database.pool.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE query = $1", [`LISTEN ${CHANNEL}`])).rows.map((r) => r.pid);

function listener(errors: Error[] = []) {
  let wakes = 0;
  const l = new NotificationListener({ pool: database.pool, channel: CHANNEL, onNotify: () => wakes++, onError: (e) => errors.push(e), retryMs: 50 });
  return { l, wakes: () => wakes };
}

it("wakes on NOTIFY, listens again on a new connection once its own is killed, and closes it", async () => {
  const { l, wakes } = listener();
  await l.open();
  expect(l.listening).toBe(true);
  await database.pool.query(`NOTIFY ${CHANNEL}`);
  await waitFor(() => wakes() === 1, "the first wake-up");

  const [first] = await listeners();
  await database.pool.query("SELECT pg_terminate_backend($1)", [first]);
  await waitFor(async () => l.listening && (await listeners()).some((pid) => pid !== first), "a new LISTEN connection");
  await database.pool.query(`NOTIFY ${CHANNEL}`);
  await waitFor(() => wakes() === 2, "a wake-up on the new connection");

  l.close();
  expect(l.listening).toBe(false);
  // Closed, not returned to the pool still listening.
  await waitFor(async () => (await listeners()).length === 0, "no LISTENing connection left");
});

it("drops the connection when closed while it was being opened", async () => {
  const { l } = listener();
  const opening = l.open();
  l.close();
  await opening;
  expect(l.listening).toBe(false);
  await waitFor(async () => (await listeners()).length === 0, "no LISTENing connection left");
});

it("open() throws when it cannot LISTEN; openOrRetry() reports it and keeps trying until it can", async () => {
  const errors: Error[] = [];
  const { l } = listener(errors);
  server.stop();
  try {
    await expect(l.open()).rejects.toThrow();
    await l.openOrRetry();
    expect(l.listening).toBe(false);
    await waitFor(() => errors.length >= 2, "a failure reported, and another after the retry");
  } finally {
    server.start();
  }
  await waitFor(() => l.listening, "listening once Postgres is back", 30_000);
  l.close();
}, 60_000);
