// The webhook relay (docs/reference/events.md#events): every event becomes exactly one delivery job per matching endpoint — enabled, of
// the event's org, subscribed to its type, created before the event committed — even with two leaders relaying at
// once, and whatever the relay had already passed when the endpoint's creation committed.
import type pg from "pg";
import { Writable } from "node:stream";
import { WEBHOOK_DELIVERY_MAX_RETRIES, WEBHOOK_DELIVERY_TYPE } from "@conveyor/contracts";
import { claimJobs, insertJobs, insertWebhookEndpoint, newId, relayEventsToWebhooks, writeOutcomes } from "@conveyor/db";
import { createLogger } from "@conveyor/logger";
import { createTestDatabase, waitFor, type TestDatabase, insertOrgs } from "@conveyor/testkit";
import { WebhookRelay } from "../src/maintenance/webhook-relay";

const discard = createLogger({ service: "test", stream: new Writable({ write: (_c, _e, done) => done() }) });

let database: TestDatabase;
const pool = () => database.db.pool;
let orgA: string;
let orgB: string;

beforeEach(async () => {
  database = await createTestDatabase();
  [orgA, orgB] = await insertOrgs(database.db, "A", "B");
  // The relay's first round places its cursor: events before it are not relayed.
  await relayEventsToWebhooks(pool(), { limit: 1000, maxRetries: 1 });
});
afterEach(() => database.drop());

async function endpoint(orgId: string, events: string[], db: pg.Pool | pg.PoolClient = pool()): Promise<string> {
  const id = newId();
  await insertWebhookEndpoint(db, {
    id,
    orgId,
    url: "https://hooks.example.com/",
    description: null,
    events,
    sealedSecret: Buffer.from("sealed"),
    createdBy: newId(),
  });
  return id;
}

/** A job created in `db` (a transaction left open, say): one job.created event. */
async function created(orgId: string, db: pg.Pool | pg.PoolClient): Promise<string> {
  const id = newId();
  await insertJobs(db, [{ id, orgId, type: "word_count", payloadJson: "{}", maxRetries: 0, createdAt: new Date() }]);
  return id;
}

/** The ids of the events of these jobs, in order. */
async function eventsOf(jobIds: string[]): Promise<string[]> {
  const { rows } = await pool().query<{ id: string }>("SELECT id::text FROM events WHERE job_id = ANY($1::uuid[]) ORDER BY events.id", [jobIds]);
  return rows.map((r) => r.id);
}

/** Relays until a round reads nothing; every later round then finds nothing either. */
async function relayAll(): Promise<void> {
  while ((await relayEventsToWebhooks(pool(), { limit: 1000, maxRetries: 1 })).events > 0);
}

/** `count` jobs of `orgId`, each created, started and finished: three events per job. */
async function jobs(orgId: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => newId());
  await insertJobs(
    pool(),
    ids.map((id) => ({ id, orgId, type: "word_count", payloadJson: "{}", maxRetries: 0, createdAt: new Date() })),
  );
  await claimJobs(
    pool(),
    ids.map((id) => ({ id, fence: "f" })),
  );
  await writeOutcomes(
    pool(),
    [],
    ids.map((id) => ({ id, fence: "f", status: "done" as const, retries: 0, result: "{}", error: null, runAt: null })),
  );
  return ids;
}

type Delivery = { org_id: string; endpoint_id: string; event_id: string; max_retries: number; queued: boolean };
async function deliveries(): Promise<Delivery[]> {
  const { rows } = await pool().query<Delivery>(
    `SELECT j.org_id, j.payload->>'endpoint_id' AS endpoint_id, j.payload->>'event_id' AS event_id, j.max_retries,
            EXISTS (SELECT 1 FROM job_queue q WHERE q.job_id = j.id) AS queued
       FROM jobs j WHERE j.type = $1 ORDER BY (j.payload->>'event_id')::bigint, j.payload->>'endpoint_id'`,
    [WEBHOOK_DELIVERY_TYPE],
  );
  return rows;
}

/** What the relay must produce: for each event, one delivery per endpoint of its org that wants its type. */
async function expected(subscriptions: { id: string; orgId: string; events: string[] }[]): Promise<string[]> {
  const { rows } = await pool().query<{ id: string; org_id: string; type: string }>("SELECT id::text, org_id, type FROM events ORDER BY events.id");
  return rows.flatMap((e) =>
    subscriptions
      .filter((s) => s.orgId === e.org_id && (s.events.includes("*") || s.events.includes(e.type)))
      .map((s) => `${e.id}/${s.id}`)
      .sort(),
  );
}

describe("relaying events to webhook endpoints", () => {
  it("creates one queued delivery job per event and matching endpoint, of the endpoint's org, and none for others", async () => {
    const all = await endpoint(orgA, ["*"]);
    const finished = await endpoint(orgA, ["job.succeeded"]);
    const theirs = await endpoint(orgB, ["*"]);
    const disabled = await endpoint(orgA, ["*"]);
    await pool().query("UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = 'test' WHERE id = $1", [disabled]);
    await jobs(orgA, 3);
    await jobs(orgB, 2);

    const round = await relayEventsToWebhooks(pool(), { limit: 1000, maxRetries: WEBHOOK_DELIVERY_MAX_RETRIES });
    expect(round).toEqual({ events: 15, deliveries: 9 + 3 + 6 });
    // An endpoint added once the relay has passed these events gets none of them.
    const later = await endpoint(orgA, ["*"]);
    expect(await relayEventsToWebhooks(pool(), { limit: 1000, maxRetries: 1 })).toEqual({ events: 0, deliveries: 0 });
    const made = await deliveries();
    expect(made.map((d) => `${d.event_id}/${d.endpoint_id}`)).toEqual(
      await expected([
        { id: all, orgId: orgA, events: ["*"] },
        { id: finished, orgId: orgA, events: ["job.succeeded"] },
        { id: theirs, orgId: orgB, events: ["*"] },
      ]),
    );
    for (const d of made) {
      expect(d.org_id).toBe(d.endpoint_id === theirs ? orgB : orgA);
      expect(d.max_retries).toBe(WEBHOOK_DELIVERY_MAX_RETRIES);
      expect(d.queued).toBe(true);
      expect([disabled, later]).not.toContain(d.endpoint_id);
    }
    // Delivery jobs announce no events of their own, and the next round has nothing left.
    expect((await pool().query("SELECT 1 FROM events WHERE job_id IN (SELECT id FROM jobs WHERE type = $1)", [WEBHOOK_DELIVERY_TYPE])).rowCount).toBe(0);
    expect(await relayEventsToWebhooks(pool(), { limit: 1000, maxRetries: 1 })).toEqual({ events: 0, deliveries: 0 });
  });

  it("with no enabled endpoint, moves its cursor past new events without reading them, and writes nothing while none come", async () => {
    const cursorRow = async () =>
      (await pool().query<{ last: string; version: string }>("SELECT last_event_id::text AS last, xmin::text AS version FROM event_cursors")).rows[0]!;
    await jobs(orgA, 2);
    expect(await relayEventsToWebhooks(pool(), { limit: 1000, maxRetries: 1 })).toEqual({ events: 0, deliveries: 0 });
    const moved = await cursorRow();
    const { rows } = await pool().query<{ newest: string }>("SELECT max(id)::text AS newest FROM events");
    expect(BigInt(moved.last)).toBeGreaterThanOrEqual(BigInt(rows[0]!.newest));
    // Nothing new: the row is not written again (same row version).
    expect(await relayEventsToWebhooks(pool(), { limit: 1000, maxRetries: 1 })).toEqual({ events: 0, deliveries: 0 });
    expect(await cursorRow()).toEqual(moved);
    expect(await deliveries()).toEqual([]);
  });

  it("relays in rounds of at most `limit` events, continuing where the last one stopped", async () => {
    const all = await endpoint(orgA, ["*"]);
    await jobs(orgA, 10);
    const sizes: number[] = [];
    for (;;) {
      const { events } = await relayEventsToWebhooks(pool(), { limit: 7, maxRetries: 1 });
      if (events === 0) break;
      sizes.push(events);
    }
    expect(sizes).toEqual([7, 7, 7, 7, 2]);
    expect((await deliveries()).map((d) => `${d.event_id}/${d.endpoint_id}`)).toEqual(await expected([{ id: all, orgId: orgA, events: ["*"] }]));
  });

  it("gives a new endpoint none of the events committed before its creation, even those the relay has not reached yet", async () => {
    // A long transaction of this database keeps the events of `before` above the readers' horizon: the relay cannot
    // read them until it ends, so they are still ahead of it when the endpoint is created.
    const long = await pool().connect();
    try {
      await long.query("BEGIN");
      await long.query("SELECT pg_current_xact_id()");
      const before = await jobs(orgA, 2);
      await relayAll();
      const id = await endpoint(orgA, ["*"]);
      const after = await jobs(orgA, 1);
      await relayAll();
      expect(await deliveries()).toEqual([]);
      await long.query("COMMIT");
      await relayAll();
      const made = await deliveries();
      expect(made.map((d) => d.event_id)).toEqual(await eventsOf(after));
      expect(made.every((d) => d.endpoint_id === id)).toBe(true);
      // The relay did read the earlier events (after the long transaction), and queued nothing for them.
      const { rows } = await pool().query<{ last: string }>("SELECT last_event_id::text AS last FROM event_cursors");
      const earlier = await eventsOf(before);
      expect(BigInt(rows[0]!.last)).toBeGreaterThanOrEqual(BigInt(earlier[earlier.length - 1]!));
    } finally {
      long.release();
    }
  });

  it("gives a new endpoint the events of a transaction that was still running when it was created", async () => {
    const running = await pool().connect();
    try {
      await running.query("BEGIN");
      const job = await created(orgA, running);
      const id = await endpoint(orgA, ["*"]);
      await running.query("COMMIT");
      await relayAll();
      expect((await deliveries()).map((d) => [d.event_id, d.endpoint_id])).toEqual((await eventsOf([job])).map((e) => [e, id]));
    } finally {
      running.release();
    }
  });

  it.each([
    ["while another endpoint keeps it reading", true],
    ["while it skips ahead with no endpoint to serve", false],
  ])(
    "catches up, once, an endpoint whose creation committed after the relay passed an event committed after its snapshot (%s)",
    async (_name, otherEndpoint) => {
      if (otherEndpoint) await endpoint(orgB, ["*"]);
      const earlier = await jobs(orgA, 1);
      const running = await pool().connect();
      const creating = await pool().connect();
      try {
        // A transaction runs while the endpoint's creation takes its snapshot, and commits before the creation does:
        // its event is below the horizon (its id is older than the creation's), so the relay passes it while it
        // cannot see the endpoint yet.
        await running.query("BEGIN");
        const concurrent = await created(orgA, running);
        await creating.query("BEGIN");
        const id = await endpoint(orgA, ["job.created", "job.succeeded"], creating);
        await running.query("COMMIT");
        await relayAll();
        const { rows } = await pool().query<{ last: string }>("SELECT last_event_id::text AS last FROM event_cursors");
        expect(BigInt(rows[0]!.last)).toBeGreaterThanOrEqual(BigInt((await eventsOf([concurrent]))[0]!));
        expect((await deliveries()).filter((d) => d.endpoint_id === id)).toEqual([]);

        await creating.query("COMMIT");
        const later = await jobs(orgA, 1);
        await relayAll();
        await relayAll();
        const mine = (await deliveries()).filter((d) => d.endpoint_id === id);
        const { rows: wanted } = await pool().query<{ id: string }>(
          "SELECT id::text FROM events WHERE job_id = ANY($1::uuid[]) AND type IN ('job.created', 'job.succeeded') ORDER BY events.id",
          [[concurrent, ...later]],
        );
        expect(mine.map((d) => d.event_id)).toEqual(wanted.map((r) => r.id));
        expect(mine.map((d) => d.event_id)).not.toContain((await eventsOf(earlier))[0]);
        const start = await pool().query<{ start: string }>("SELECT relay_start::text AS start FROM webhook_endpoints WHERE id = $1", [id]);
        expect(BigInt(start.rows[0]!.start)).toBeGreaterThanOrEqual(BigInt(rows[0]!.last));
      } finally {
        running.release();
        creating.release();
      }
    },
  );

  it("never relays an event twice, with two leaders relaying at once while events are written", async () => {
    const all = await endpoint(orgA, ["*"]);
    const theirs = await endpoint(orgB, ["job.created"]);
    const leaders = [
      new WebhookRelay({ pool: pool(), logger: discard, batch: 25, tickMs: 20 }),
      new WebhookRelay({ pool: pool(), logger: discard, batch: 25, tickMs: 20 }),
    ];
    await Promise.all(leaders.map((l) => l.start()));
    try {
      const writers = Array.from({ length: 8 }, (_, i) => jobs(i % 2 ? orgB : orgA, 20));
      // And rounds called directly on top, as a third and fourth relay would.
      const direct = Array.from({ length: 2 }, async () => {
        for (let i = 0; i < 20; i++) await relayEventsToWebhooks(pool(), { limit: 10, maxRetries: 1 });
      });
      // And an endpoint created while all this goes on: it gets exactly the events its creation did not see.
      const joining = (async () => {
        await waitFor(async () => (await pool().query("SELECT 1 FROM events WHERE org_id = $1", [orgA])).rowCount, "the first events");
        return endpoint(orgA, ["*"]);
      })();
      await Promise.all([...writers, ...direct]);
      const late = await joining;
      const want = await expected([
        { id: all, orgId: orgA, events: ["*"] },
        { id: theirs, orgId: orgB, events: ["job.created"] },
      ]);
      expect(want).toHaveLength(4 * 20 * 3 + 4 * 20);
      const { rows: lateWant } = await pool().query<{ id: string }>(
        `SELECT e.id::text FROM events e JOIN webhook_endpoints w ON w.id = $1
          WHERE e.org_id = $2 AND NOT pg_visible_in_snapshot((e.id >> 20)::text::xid8, w.created_snapshot) ORDER BY e.id`,
        [late, orgA],
      );
      expect(lateWant.length).toBeLessThan(4 * 20 * 3);
      await waitFor(async () => (await deliveries()).length >= want.length + lateWant.length, "every delivery", 20_000);
      const made = await deliveries();
      expect(made.filter((d) => d.endpoint_id !== late).map((d) => `${d.event_id}/${d.endpoint_id}`)).toEqual(want);
      expect(made.filter((d) => d.endpoint_id === late).map((d) => d.event_id)).toEqual(lateWant.map((r) => r.id));
      expect(new Set(made.map((d) => `${d.event_id}/${d.endpoint_id}`)).size).toBe(made.length);
    } finally {
      await Promise.all(leaders.map((l) => l.stop()));
    }
  });
});
