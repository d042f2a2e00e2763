// The webhook relay (SPEC §10): every event becomes exactly one delivery job per matching endpoint — enabled, of
// the event's org, subscribed to its type, existing when it happened — even with two leaders relaying at once.
import { Writable } from "node:stream";
import { WEBHOOK_DELIVERY_MAX_RETRIES, WEBHOOK_DELIVERY_TYPE } from "@conveyor/contracts";
import { claimJobs, eventHorizon, insertJobs, insertWebhookEndpoint, newId, relayEventsToWebhooks, writeOutcomes } from "@conveyor/db";
import { createLogger } from "@conveyor/logger";
import { createTestDatabase, waitFor, type TestDatabase } from "@conveyor/testkit";
import { WebhookRelay } from "../src/runtime/webhook-relay";

const discard = createLogger({ service: "test", stream: new Writable({ write: (_c, _e, done) => done() }) });

let database: TestDatabase;
const pool = () => database.db.pool;
let orgA: string;
let orgB: string;

beforeEach(async () => {
  database = await createTestDatabase();
  orgA = newId();
  orgB = newId();
  await database.db.prisma.organization.createMany({
    data: [
      { id: orgA, name: "A" },
      { id: orgB, name: "B" },
    ],
  });
  // The relay's first round places its cursor: events before it are not relayed.
  await relayEventsToWebhooks(pool(), { limit: 1000, maxRetries: 1 });
});
afterEach(() => database.drop());

async function endpoint(orgId: string, events: string[]): Promise<string> {
  const id = newId();
  await insertWebhookEndpoint(pool(), {
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
  await untilReadable();
  return ids;
}

/**
 * Waits until readers may read every event written so far. The horizon is the oldest transaction running in the
 * whole Postgres cluster, and the other test files' databases share it: one of their transactions still open
 * would otherwise make a round here find nothing yet.
 */
async function untilReadable(): Promise<void> {
  const { rows } = await pool().query<{ newest: string }>("SELECT max(id)::text AS newest FROM events");
  const newest = BigInt(rows[0]!.newest);
  await waitFor(async () => (await eventHorizon(pool())) >= newest || null, "the events to fall below the readers' horizon");
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
      await Promise.all([...writers, ...direct]);
      const want = await expected([
        { id: all, orgId: orgA, events: ["*"] },
        { id: theirs, orgId: orgB, events: ["job.created"] },
      ]);
      expect(want).toHaveLength(4 * 20 * 3 + 4 * 20);
      await waitFor(async () => (await deliveries()).length >= want.length, "every delivery", 20_000);
      const made = (await deliveries()).map((d) => `${d.event_id}/${d.endpoint_id}`);
      expect(made).toEqual(want);
      expect(new Set(made).size).toBe(made.length);
    } finally {
      await Promise.all(leaders.map((l) => l.stop()));
    }
  });
});
