// Time partitions of the audit log and the webhook deliveries (docs/reference/time.md#partitions-and-retention,
// docs/reference/robustness.md#r58): the leader's maker makes the current and the next spans, idempotently; a row for a
// span no partition exists for is stored in DEFAULT and moved into its partition when the maker makes it (counted once
// in usage); retention drops an old day or month whole and keeps the current one; a reader holding the table makes the
// pass give way (lock timeout) and the next sweep drops it; the audit log still refuses UPDATE and DELETE outside
// retention.
import { PassThrough } from "node:stream";
import pg from "pg";
import {
  AUDIT_LOG_PARTITIONS,
  dropPartitionsBefore,
  makePartition,
  makePartitions,
  newId,
  partitionName,
  spanAfter,
  spanStart,
  WEBHOOK_DELIVERY_PARTITIONS,
} from "@conveyor/db";
import { createLogger } from "@conveyor/logger";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";
import { AuditRetention } from "../src/maintenance/audit-retention";
import { PartitionMaker } from "../src/maintenance/partition-maker";
import { WebhookDeliveryRetention } from "../src/maintenance/webhook-delivery-retention";

const DAY = 86_400_000;
let database: TestDatabase;
const logger = createLogger({ service: "test", stream: new PassThrough() });
const orgId = newId();
const endpointId = newId();
const sql = <T extends pg.QueryResultRow>(text: string, values: unknown[] = []) => database.db.pool.query<T>(text, values).then((r) => r.rows);

beforeAll(async () => {
  database = await createTestDatabase();
  const userId = newId();
  await sql("INSERT INTO organizations (id, name) VALUES ($1, 'partitions')", [orgId]);
  await sql("INSERT INTO users (id, email, password_hash) VALUES ($1, 'pt@example.com', 'x')", [userId]);
  await sql(
    `INSERT INTO webhook_endpoints (id, org_id, url, events, secret, created_by) VALUES ($1, $2, 'https://example.com/hook', ARRAY['job.done'], '\\x00', $3)`,
    [endpointId, orgId, userId],
  );
});
afterAll(() => database.drop());

const partitions = async (table: string) =>
  (
    await sql<{ name: string }>(
      "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY 1",
      [table],
    )
  ).map((r) => r.name);

async function delivery(at: Date): Promise<string> {
  const [row] = await sql<{ id: string }>(
    `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, job_id, attempt, status_code, duration_ms, at)
     VALUES ($1, 1, 'job.done', $2, 1, 200, 12, $3) RETURNING id::text`,
    [endpointId, newId(), at],
  );
  return row!.id;
}
const deliveryPlace = async (id: string) =>
  (await sql<{ place: string }>("SELECT tableoid::regclass::text AS place FROM webhook_deliveries WHERE id = $1", [id]))[0]?.place;

async function auditEntry(time: Date): Promise<string> {
  const id = newId();
  await sql("INSERT INTO audit_log (id, org_id, time, actor_type, action) VALUES ($1, $2, $3, 'user', 'member.role_change')", [id, orgId, time]);
  return id;
}
const auditPlace = async (id: string) =>
  (await sql<{ place: string }>("SELECT tableoid::regclass::text AS place FROM audit_log WHERE id = $1", [id]))[0]?.place;

describe("the partition maker", () => {
  it("makes the current span's partition and those ahead, once", async () => {
    const maker = new PartitionMaker({ pool: database.db.pool, logger });
    await maker.runOnce();
    const today = spanStart(WEBHOOK_DELIVERY_PARTITIONS, new Date());
    const month = spanStart(AUDIT_LOG_PARTITIONS, new Date());
    expect(await partitions("webhook_deliveries")).toEqual(
      expect.arrayContaining([0, 1, 7].map((n) => partitionName(WEBHOOK_DELIVERY_PARTITIONS, spanAfter(WEBHOOK_DELIVERY_PARTITIONS, today, n)))),
    );
    expect(await partitions("audit_log")).toEqual(
      expect.arrayContaining([0, 1, 2].map((n) => partitionName(AUDIT_LOG_PARTITIONS, spanAfter(AUDIT_LOG_PARTITIONS, month, n)))),
    );
    expect(await maker.runOnce()).toEqual([]);
  });

  it("stores a row for a span with no partition in DEFAULT, and moves it into its partition when that is made", async () => {
    const ahead = new Date(Date.now() + 40 * DAY);
    const usage = async () =>
      Number(
        (
          await sql<{ n: string }>("SELECT coalesce(sum(webhook_deliveries), 0) AS n FROM usage_counts WHERE org_id = $1 AND day = $2::date", [orgId, ahead])
        )[0]!.n,
      );
    const id = await delivery(ahead);
    expect(await deliveryPlace(id)).toBe("webhook_deliveries_default");
    expect(await usage()).toBe(1);
    const farAhead = new Date(Date.now() + 400 * DAY);
    const entry = await auditEntry(farAhead);
    expect(await auditPlace(entry)).toBe("audit_log_default");

    // The leader, later: its round makes the spans of that time, and the rows move out of DEFAULT.
    expect(await new PartitionMaker({ pool: database.db.pool, logger, now: () => ahead }).runOnce()).toContain(
      partitionName(WEBHOOK_DELIVERY_PARTITIONS, spanStart(WEBHOOK_DELIVERY_PARTITIONS, ahead)),
    );
    expect(await deliveryPlace(id)).toBe(partitionName(WEBHOOK_DELIVERY_PARTITIONS, spanStart(WEBHOOK_DELIVERY_PARTITIONS, ahead)));
    expect(await usage()).toBe(1);
    await new PartitionMaker({ pool: database.db.pool, logger, now: () => farAhead, tables: [AUDIT_LOG_PARTITIONS] }).runOnce();
    expect(await auditPlace(entry)).toBe(partitionName(AUDIT_LOG_PARTITIONS, spanStart(AUDIT_LOG_PARTITIONS, farAhead)));
    // The moved entry is as append-only as any: on the parent and on its partition.
    await expect(sql("DELETE FROM audit_log WHERE id = $1", [entry])).rejects.toThrow(/cannot be changed or deleted/);
    await expect(sql(`TRUNCATE ${await auditPlace(entry)}`)).rejects.toThrow(/cannot be changed or deleted/);
  });
});

describe("retention by partition", () => {
  // The current spans, as the leader makes them at its start.
  beforeAll(() => new PartitionMaker({ pool: database.db.pool, logger }).runOnce());

  it("drops an old day of deliveries whole, keeps the current one, and deletes old records in DEFAULT in batches", async () => {
    const old = spanStart(WEBHOOK_DELIVERY_PARTITIONS, new Date(Date.now() - 40 * DAY));
    await makePartition(database.db.pool, WEBHOOK_DELIVERY_PARTITIONS, old);
    const gone = await delivery(new Date(old.getTime() + 3_600_000));
    // The day the cut-off falls in: its partition holds a record younger than the cut-off, so it stays whole.
    const young = new Date(Date.now() - 30 * DAY + 60_000);
    const edge = spanStart(WEBHOOK_DELIVERY_PARTITIONS, young);
    await makePartition(database.db.pool, WEBHOOK_DELIVERY_PARTITIONS, edge);
    const edgeYoung = await delivery(young);
    const strayOld = await delivery(new Date(Date.now() - 60 * DAY));
    expect(await deliveryPlace(strayOld)).toBe("webhook_deliveries_default");
    const current = await delivery(new Date());

    await new WebhookDeliveryRetention({ pool: database.db.pool, logger, days: 30, pauseFactor: 0 }).sweep();
    const names = await partitions("webhook_deliveries");
    expect(names).not.toContain(partitionName(WEBHOOK_DELIVERY_PARTITIONS, old));
    expect(names).toContain(partitionName(WEBHOOK_DELIVERY_PARTITIONS, edge));
    expect(await deliveryPlace(gone)).toBeUndefined();
    expect(await deliveryPlace(strayOld)).toBeUndefined();
    expect(await deliveryPlace(edgeYoung)).toBe(partitionName(WEBHOOK_DELIVERY_PARTITIONS, edge));
    expect(await deliveryPlace(current)).toBe(partitionName(WEBHOOK_DELIVERY_PARTITIONS, spanStart(WEBHOOK_DELIVERY_PARTITIONS, new Date())));
  });

  it("drops an old month of the audit log and keeps the current one; a reader holding the table delays it one sweep", async () => {
    const old = spanStart(AUDIT_LOG_PARTITIONS, new Date(Date.now() - 430 * DAY));
    await makePartition(database.db.pool, AUDIT_LOG_PARTITIONS, old);
    const oldEntry = await auditEntry(new Date(old.getTime() + DAY));
    const recent = await auditEntry(new Date());
    // Outside retention the trigger refuses, whatever the partition.
    await expect(sql("DELETE FROM audit_log WHERE id = $1", [oldEntry])).rejects.toThrow(/cannot be changed or deleted/);
    await expect(sql("UPDATE audit_log SET action = 'x' WHERE id = $1", [oldEntry])).rejects.toThrow(/cannot be changed or deleted/);

    const reader = new pg.Client({ connectionString: database.url });
    await reader.connect();
    const retention = new AuditRetention({ pool: database.db.pool, logger, days: 400 });
    try {
      await reader.query("BEGIN");
      await reader.query("SELECT count(*) FROM audit_log");
      // The pass cannot have the table's lock while the reader holds it: it gives way, and fails nothing.
      await retention.sweep();
      expect(await partitions("audit_log")).toContain(partitionName(AUDIT_LOG_PARTITIONS, old));
      expect(await auditPlace(oldEntry)).toBe(partitionName(AUDIT_LOG_PARTITIONS, old));
      await reader.query("COMMIT");
    } finally {
      await reader.end();
    }
    await retention.sweep();
    expect(await partitions("audit_log")).not.toContain(partitionName(AUDIT_LOG_PARTITIONS, old));
    expect(await auditPlace(oldEntry)).toBeUndefined();
    expect(await auditPlace(recent)).toBe(partitionName(AUDIT_LOG_PARTITIONS, spanStart(AUDIT_LOG_PARTITIONS, new Date())));
  });
});

describe("a table partitioned by UUID v7 id (as the jobs tables will be)", () => {
  const spec = { table: "scratch_things", key: "id", keyKind: "uuid7", span: "day", ahead: 1 } as const;
  /** A UUID v7 of the moment `ms`. */
  const idAt = (ms: number) => {
    const hex = ms.toString(16).padStart(12, "0") + "7abc8" + "0123456789abcde";
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
  const place = async (id: string) =>
    (await sql<{ place: string }>("SELECT tableoid::regclass::text AS place FROM scratch_things WHERE id = $1", [id]))[0]?.place;

  it("makes its days, moves a day's ids out of DEFAULT, and drops a day wholly before the cut-off", async () => {
    await sql("CREATE TABLE scratch_things (id uuid PRIMARY KEY, note text) PARTITION BY RANGE (id)");
    await sql("CREATE TABLE scratch_things_default PARTITION OF scratch_things DEFAULT");
    const old = Date.now() - 40 * DAY;
    const [oldId, nowId] = [idAt(old), idAt(Date.now())];
    await sql("INSERT INTO scratch_things (id, note) VALUES ($1, 'old'), ($2, 'now')", [oldId, nowId]);
    expect([await place(oldId), await place(nowId)]).toEqual(["scratch_things_default", "scratch_things_default"]);

    await makePartitions(database.db.pool, spec);
    await makePartition(database.db.pool, spec, spanStart(spec, new Date(old)));
    expect(await place(nowId)).toBe(partitionName(spec, spanStart(spec, new Date())));
    expect(await place(oldId)).toBe(partitionName(spec, spanStart(spec, new Date(old))));

    const { dropped } = await dropPartitionsBefore(database.db.pool, spec, new Date(Date.now() - 30 * DAY));
    expect(dropped).toEqual([partitionName(spec, spanStart(spec, new Date(old)))]);
    expect([await place(oldId), await place(nowId)]).toEqual([undefined, partitionName(spec, spanStart(spec, new Date()))]);
  });
});
