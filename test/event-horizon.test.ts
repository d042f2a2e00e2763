// Events and webhooks around long transactions, end to end (issue 21): the API and real worker processes on a private
// Postgres server that also holds another application's database, an event stream read over HTTP and webhook
// receivers that verify every delivery with `standardwebhooks`. A long write transaction of the other database holds
// nothing back; one of Conveyor's own database holds events back until it ends, then each arrives once. A webhook
// endpoint receives exactly the events committed after it was created: none of a job that finished just before it,
// even when a long transaction kept that job's events from the relay until after the endpoint existed.
import pg from "pg";
import { createDatabase, migrate } from "@conveyor/db";
import { withPrisma, type DatabaseWithPrisma } from "@conveyor/db/prisma";
import { openSse, startPrivatePostgres, waitFor, type PrivatePostgres, type SseClient } from "@conveyor/testkit";
import { startWebhookReceiver, verifyDelivery, type FakeServer } from "@conveyor/testkit/fakes";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

const local = { WEBHOOK_ALLOW_HTTP: "true", ALLOW_PRIVATE_NETWORK: "true" };

let server: PrivatePostgres;
let db: DatabaseWithPrisma;
let stack: Stack;
let base: string;
const clients: pg.Client[] = [];
const streams: SseClient[] = [];
const receivers: FakeServer[] = [];

beforeAll(async () => {
  // A private server: the long transactions below would hold back every event reader of an older Conveyor (or of
  // another test run) sharing the machine's server.
  server = await startPrivatePostgres();
  const url = server.url("conveyor");
  await migrate(url);
  const other = await connect("postgres");
  await other.query("CREATE DATABASE shop");
  db = withPrisma(createDatabase({ url, poolSize: 4 }));
  stack = await startStack({ database: { name: "conveyor", url, db, drop: () => db.close() }, apiEnv: local, workerEnv: local });
  base = await stack.api.listen();
  await stack.startWorker();
  await (await connect("shop")).query("CREATE TABLE orders (id serial PRIMARY KEY, note text)");
}, 120_000);
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close();
  await Promise.all([...clients.splice(0).map((c) => c.end().catch(() => {})), ...receivers.splice(0).map((r) => r.close())]);
  await stack.expectOtherOrgUntouched();
});
afterAll(async () => {
  await stack.close();
  server.destroy();
});

async function connect(database: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: server.url(database) });
  await client.connect();
  clients.push(client);
  return client;
}

/** A write transaction left open, as a batch job or a forgotten psql session would: BEGIN, a write, no COMMIT. */
async function openWriteTransaction(database: "shop" | "conveyor"): Promise<pg.Client> {
  const client = await connect(database);
  await client.query("BEGIN");
  if (database === "shop") await client.query("INSERT INTO orders (note) VALUES ('nightly batch')");
  else await client.query("SELECT pg_current_xact_id()");
  return client;
}

type Hook = { receiver: FakeServer; secret: string; id: string };
/** A receiver and an endpoint for every event type, created over the API by the org's owner. */
async function addEndpoint(): Promise<Hook> {
  const receiver = await startWebhookReceiver();
  receivers.push(receiver);
  const res = await stack.api.request
    .post("/webhook-endpoints")
    .set("Authorization", `Bearer ${stack.owner.token}`)
    .send({ url: receiver.url, events: ["*"] });
  expect(res.status).toBe(201);
  return { receiver, secret: res.body.secret, id: res.body.id };
}

/** The event ids the receiver got for `jobId`, each delivery verified with the endpoint's secret. */
function delivered(hook: Hook, jobId: string): number[] {
  return hook.receiver.requests
    .map((request) => verifyDelivery(hook.secret, request) as { id: string; subject: string })
    .filter((event) => event.subject === jobId)
    .map((event) => Number(event.id))
    .sort((a, b) => a - b);
}

/** The event ids the stream got for `jobId`, in the order they came. */
const streamed = (stream: SseClient, jobId: string) =>
  stream.events.filter((e) => (JSON.parse(e.data) as { job_id: string }).job_id === jobId).map((e) => Number(e.id));

async function runJob(): Promise<string> {
  const { status, body } = await stack.post("/jobs", { type: "word_count", payload: { text: "count these words" } });
  expect(status).toBe(202);
  await stack.waitForJob(body.id, (job) => job.status === "done");
  return body.id as string;
}

async function eventIds(jobId: string): Promise<number[]> {
  const { rows } = await db.pool.query<{ id: string }>("SELECT id::text FROM events WHERE job_id = $1 ORDER BY events.id", [jobId]);
  return rows.map((r) => Number(r.id));
}

async function openStream(): Promise<SseClient> {
  const stream = await openSse(`${base}/events`, { "X-API-Key": stack.apiKey });
  expect(stream.status).toBe(200);
  streams.push(stream);
  return stream;
}

describe("events and webhooks around long transactions", () => {
  it("are not held back by a long write transaction of another database on the same server", async () => {
    const hook = await addEndpoint();
    const stream = await openStream();
    const batch = await openWriteTransaction("shop");

    const job = await runJob();
    const ids = await eventIds(job);
    expect(ids).toHaveLength(3);
    await waitFor(() => streamed(stream, job).length === 3, "the job's events on the stream, the other database's transaction still open");
    await waitFor(() => delivered(hook, job).length === 3, "the job's webhooks, the other database's transaction still open");
    expect((await batch.query("SELECT pg_current_xact_id_if_assigned() IS NOT NULL AS open")).rows[0]).toEqual({ open: true });
    await batch.query("COMMIT");
    expect(streamed(stream, job)).toEqual(ids);
    expect(delivered(hook, job)).toEqual(ids);
  });

  it("wait for a long write transaction of Conveyor's database to end, then each arrives once", async () => {
    const hook = await addEndpoint();
    const stream = await openStream();
    const long = await openWriteTransaction("conveyor");

    const job = await runJob();
    const ids = await eventIds(job);
    // Committed, but above the readers' horizon while the older transaction runs: neither reader has them.
    const { rows } = await db.pool.query<{ horizon: string }>("SELECT conveyor_event_horizon()::text AS horizon");
    expect(Number(rows[0]!.horizon)).toBeLessThan(ids[0]!);
    expect(streamed(stream, job)).toEqual([]);
    expect(delivered(hook, job)).toEqual([]);

    await long.query("COMMIT");
    await waitFor(() => streamed(stream, job).length === 3, "the job's events on the stream once the transaction ended");
    await waitFor(() => delivered(hook, job).length === 3, "the job's webhooks once the transaction ended");
    expect(streamed(stream, job)).toEqual(ids);
    expect(delivered(hook, job)).toEqual(ids);
  });

  it("deliver to a new endpoint only the events committed after it was created, each once", async () => {
    // A job finished just before the endpoint was created: the relay usually reaches its events after that.
    const justBefore = await runJob();
    const first = await addEndpoint();
    // A job finished before, whose events a long transaction keeps from the relay until the endpoint exists.
    const long = await openWriteTransaction("conveyor");
    const heldBefore = await runJob();
    const second = await addEndpoint();
    const after = await runJob();
    await long.query("COMMIT");

    const afterIds = await eventIds(after);
    await waitFor(() => delivered(first, after).length === 3 && delivered(second, after).length === 3, "the later job's webhooks");
    // The relay has passed the earlier jobs' events by now (their ids are smaller): none was queued for these endpoints.
    const { rows } = await db.pool.query<{ endpoint: string; event: string }>(
      "SELECT payload->>'endpoint_id' AS endpoint, payload->>'event_id' AS event FROM jobs WHERE type = '_webhook_delivery' AND payload->>'endpoint_id' = ANY($1)",
      [[first.id, second.id]],
    );
    const queued = (hook: Hook) =>
      rows
        .filter((r) => r.endpoint === hook.id)
        .map((r) => Number(r.event))
        .sort((a, b) => a - b);
    expect(queued(first)).toEqual([...(await eventIds(heldBefore)), ...afterIds]);
    expect(queued(second)).toEqual(afterIds);
    expect(delivered(first, justBefore)).toEqual([]);
    expect(delivered(second, heldBefore)).toEqual([]);
    expect(delivered(first, after)).toEqual(afterIds);
    expect(delivered(second, after)).toEqual(afterIds);
  });
});
