// Webhook delivery records are trimmed by the leader after JOB_RETENTION_DAYS (docs/reference/events.md#events, issue 27): the old records of
// every endpoint go, in batches, and the recent ones stay, also when an old record sits behind a younger one.
import { PassThrough } from "node:stream";
import { newId } from "@conveyor/db";
import { createLogger } from "@conveyor/logger";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";
import { WebhookDeliveryRetention } from "../src/maintenance/webhook-delivery-retention";

let database: TestDatabase;
const logger = createLogger({ service: "test", stream: new PassThrough() });
const endpoints = [newId(), newId()];

beforeAll(async () => {
  database = await createTestDatabase();
  const orgId = newId();
  const userId = newId();
  await database.db.pool.query("INSERT INTO organizations (id, name) VALUES ($1, 'deliveries')", [orgId]);
  await database.db.pool.query("INSERT INTO users (id, email, password_hash) VALUES ($1, 'd@example.com', 'x')", [userId]);
  for (const id of endpoints) {
    await database.db.pool.query(
      `INSERT INTO webhook_endpoints (id, org_id, url, events, secret, created_by) VALUES ($1, $2, 'https://example.com/hook', ARRAY['job.done'], '\\x00', $3)`,
      [id, orgId, userId],
    );
  }
});
afterAll(() => database.drop());

/** `count` delivery records of `endpointId`, `days` old (and a few seconds more each). */
async function insertDeliveries(endpointId: string, days: number, count: number): Promise<void> {
  await database.db.pool.query(
    `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, job_id, attempt, status_code, duration_ms, at)
     SELECT $1, n, 'job.done', gen_random_uuid(), 1, 200, 12, now() - $2 * interval '1 day' - n * interval '1 second'
       FROM generate_series(1, $3) AS n`,
    [endpointId, days, count],
  );
}

const left = async (endpointId: string, olderThanDays: number) =>
  Number(
    (
      await database.db.pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND at < now() - $2 * interval '1 day'",
        [endpointId, olderThanDays],
      )
    ).rows[0]!.n,
  );
const all = async (endpointId: string) =>
  Number((await database.db.pool.query<{ n: string }>("SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = $1", [endpointId])).rows[0]!.n);

describe("webhook delivery retention", () => {
  it("deletes the records older than JOB_RETENTION_DAYS of every endpoint, in batches, and keeps the rest", async () => {
    const [a, b] = endpoints as [string, string];
    await insertDeliveries(a, 40, 120);
    await insertDeliveries(b, 31, 30);
    await insertDeliveries(a, 29, 7);
    await insertDeliveries(b, 0, 4);
    // An old record written after younger ones (ids follow the writes, not `at`): it goes too.
    await insertDeliveries(a, 45, 1);
    const batches: number[] = [];
    const retention = new WebhookDeliveryRetention({
      pool: database.db.pool,
      logger,
      days: 30,
      batch: { initial: 50, min: 10, max: 50 },
      pauseFactor: 0,
      onDeleted: (n) => batches.push(n),
    });
    const first = await retention.sweep();
    expect(first).toBe(151);
    expect(batches.length).toBeGreaterThanOrEqual(3);
    for (const n of batches) expect(n).toBeLessThanOrEqual(50);
    expect([await left(a, 30), await left(b, 30)]).toEqual([0, 0]);
    expect([await all(a), await all(b)]).toEqual([7, 4]);
    expect(await retention.sweep()).toBe(0);
  });

  it("keeps everything with JOB_RETENTION_DAYS 0", async () => {
    const before = await all(endpoints[0]!);
    await insertDeliveries(endpoints[0]!, 400, 3);
    const retention = new WebhookDeliveryRetention({ pool: database.db.pool, logger, days: 0 });
    expect(await retention.sweep()).toBe(0);
    expect(await all(endpoints[0]!)).toBe(before + 3);
  });
});
