// The migration that partitions the audit log by month and the webhook deliveries by day
// (docs/reference/time.md#partitions-and-retention, docs/decisions/2026-12-07-partitioned-audit-log-and-deliveries.md):
// a fresh database has both partitioned, each with a DEFAULT partition; a database at the migration before it, holding
// audit entries of several months and deliveries of several days, migrates with every row in the partition of its
// month or day, and every read — the audit log's pages and filters, an endpoint's deliveries, the events a redelivery
// would send — answers as before. The audit log still refuses UPDATE, DELETE and TRUNCATE (of a partition too), the
// deliveries' id sequence goes on, and the usage trigger does not count the copied deliveries a second time.
import type pg from "pg";
import { createTestDatabase } from "@conveyor/testkit";
import { findRedeliverableEvents, listAuditEntries, listWebhookDeliveries, newId, type Database } from "../src";
import { applyMigrations, databaseAtMigration, type DatabaseAtMigration } from "./support/database-at-migration";

const MIGRATION = "20261207064000_partitioned_audit_log_and_deliveries";
const DAY = 86_400_000;

const partitioning = async (db: pg.Pool, table: string) =>
  (
    await db.query<{ strategy: string; key: string; partitions: string[] }>(
      `SELECT p.partstrat AS strategy, pg_get_partkeydef(p.partrelid) AS key,
              array(SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = p.partrelid ORDER BY 1) AS partitions
         FROM pg_partitioned_table p WHERE p.partrelid = $1::regclass`,
      [table],
    )
  ).rows[0];

describe("a fresh database", () => {
  it("has the audit log partitioned by month of time and the deliveries by day of at, each with a DEFAULT partition", async () => {
    const database = await createTestDatabase();
    try {
      const audit = await partitioning(database.db.pool, "audit_log");
      expect(audit).toMatchObject({ strategy: "r", key: 'RANGE ("time")' });
      // The migration made the months (days) of when the test template was built; the leader makes the current ones.
      expect(audit!.partitions).toContain("audit_log_default");
      expect(audit!.partitions.filter((name) => /^audit_log_p\d{6}$/.test(name)).length).toBeGreaterThanOrEqual(2);
      const deliveries = await partitioning(database.db.pool, "webhook_deliveries");
      expect(deliveries).toMatchObject({ strategy: "r", key: "RANGE (at)" });
      expect(deliveries!.partitions).toContain("webhook_deliveries_default");
      expect(deliveries!.partitions.filter((name) => /^webhook_deliveries_p\d{8}$/.test(name)).length).toBeGreaterThanOrEqual(2);
    } finally {
      await database.drop();
    }
  });
});

describe("a database at the migration before", () => {
  let database: DatabaseAtMigration;
  let db: Database;
  const sql = <T extends pg.QueryResultRow>(text: string, values: unknown[] = []) => db.pool.query<T>(text, values);
  const orgId = newId();
  const userId = newId();
  const endpointId = newId();

  beforeAll(async () => {
    database = await databaseAtMigration("conveyor_test_part", (name) => name < MIGRATION);
    db = database.db;
  }, 120_000);
  afterAll(() => database?.drop());

  it("migrates: every row in its month's or day's partition, every read as before, still append-only", async () => {
    expect(await partitioning(db.pool, "audit_log")).toBeUndefined();
    await sql("INSERT INTO organizations (id, name) VALUES ($1, 'Partitions org')", [orgId]);
    await sql("INSERT INTO users (id, email, password_hash) VALUES ($1, 'p@example.com', 'x')", [userId]);
    await sql(
      `INSERT INTO webhook_endpoints (id, org_id, url, events, secret, created_by) VALUES ($1, $2, 'https://example.com/hook', ARRAY['job.done'], '\\x00', $3)`,
      [endpointId, orgId, userId],
    );
    // Audit entries of five months (one 500 days old), two actors, two actions.
    const now = Date.now();
    for (const [i, age] of [500, 100, 40, 20, 3, 0.01].entries()) {
      for (const action of ["member.role_change", "api_key.create"])
        await sql(
          `INSERT INTO audit_log (id, org_id, time, actor_type, actor_id, actor_label, action, target_type, target_id, ip, changes)
           VALUES ($1, $2, $3, 'user', $4, 'p@example.com', $5, 'member', $6, '10.0.0.1', '{"role":{"before":"member","after":"admin"}}')`,
          [newId(), orgId, new Date(now - age * DAY - i * 1000), i % 2 ? userId : null, action, newId()],
        );
    }
    // Deliveries of four days: events with a succeeded and a failed attempt each (the failed ones are redeliverable).
    for (const [i, age] of [12, 5, 1, 0].entries()) {
      const eventId = 1000 + i;
      const jobId = newId();
      await sql("INSERT INTO events (id, org_id, job_id, type, time, data) VALUES ($1, $2, $3, 'job.done', now(), '{}')", [eventId, orgId, jobId]);
      await sql(
        `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, job_id, subject_job_id, attempt, status_code, duration_ms, error, at)
         VALUES ($1, $2, 'job.done', $3, $4, 1, 500, 30, 'HTTP 500', $5), ($1, $6, 'job.done', $3, $4, 1, 200, 12, NULL, $5)`,
        [endpointId, eventId, newId(), jobId, new Date(now - age * DAY), eventId + 100],
      );
      await sql("INSERT INTO events (id, org_id, job_id, type, time, data) VALUES ($1, $2, $3, 'job.done', now(), '{}')", [eventId + 100, orgId, jobId]);
    }
    const reads = async () => ({
      audit: await listAuditEntries(db.pool, { orgId, limit: 50 }),
      byActor: await listAuditEntries(db.pool, { orgId, actorId: userId, limit: 50 }),
      byAction: await listAuditEntries(db.pool, { orgId, actions: ["api_key.create"], limit: 3 }),
      page: await listAuditEntries(db.pool, {
        orgId,
        limit: 4,
        after: new Date(now - 60 * DAY),
        cursor: { time: new Date(now - 3 * DAY), id: "ffffffff-ffff-7fff-bfff-ffffffffffff" },
      }),
      deliveries: await listWebhookDeliveries(db.pool, { orgId, endpointId, limit: 50 }),
      failed: await listWebhookDeliveries(db.pool, { orgId, endpointId, limit: 50, filter: { outcome: "failed" } }),
      redeliverable: await findRedeliverableEvents(db.pool, { orgId, endpointId, selection: { filter: {} }, limit: 50 }),
      picked: await findRedeliverableEvents(db.pool, { orgId, endpointId, selection: { deliveryIds: [1, 2, 3] }, limit: 50 }),
    });
    const before = await reads();
    expect(before.audit.items).toHaveLength(12);
    expect(before.deliveries).toHaveLength(8);
    expect(before.redeliverable!.eventIds).toHaveLength(4);
    const usage = async () =>
      (await sql<{ n: string }>("SELECT coalesce(sum(webhook_deliveries), 0)::text AS n FROM usage_counts WHERE org_id = $1", [orgId])).rows[0]!.n;
    const usageBefore = await usage();
    expect(usageBefore).toBe("8");

    await applyMigrations(db, (name) => name === MIGRATION);
    await database.applyFunctionSources();

    expect(await reads()).toEqual(before);
    expect(await usage()).toBe(usageBefore);
    expect(await partitioning(db.pool, "audit_log")).toMatchObject({ key: 'RANGE ("time")' });
    expect(await partitioning(db.pool, "webhook_deliveries")).toMatchObject({ key: "RANGE (at)" });
    // Every row sits in the partition named after its own UTC month or day; DEFAULT is empty.
    const misplaced = await sql(
      `SELECT tableoid::regclass::text AS place, time FROM audit_log WHERE tableoid::regclass::text <> 'audit_log_p' || to_char(time AT TIME ZONE 'UTC', 'YYYYMM')
       UNION ALL
       SELECT tableoid::regclass::text, at FROM webhook_deliveries WHERE tableoid::regclass::text <> 'webhook_deliveries_p' || to_char(at AT TIME ZONE 'UTC', 'YYYYMMDD')`,
    );
    expect(misplaced.rows).toEqual([]);
    expect((await partitioning(db.pool, "audit_log"))!.partitions.length).toBeGreaterThanOrEqual(6);

    // The sequence goes on; a new delivery is counted once.
    const { rows: next } = await sql<{ id: string }>(
      "INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, job_id, attempt, status_code, duration_ms) VALUES ($1, 1, 'job.done', $2, 1, 200, 5) RETURNING id::text",
      [endpointId, newId()],
    );
    expect(Number(next[0]!.id)).toBe(9);
    expect(await usage()).toBe("9");

    // Still append-only: on the parent and on a partition.
    const month = `audit_log_p${new Date(now).toISOString().slice(0, 7).replace("-", "")}`;
    for (const statement of [
      "UPDATE audit_log SET action = 'x'",
      "DELETE FROM audit_log",
      `DELETE FROM ${month}`,
      "TRUNCATE audit_log",
      `TRUNCATE ${month}`,
      "TRUNCATE audit_log_default",
    ])
      await expect(sql(statement)).rejects.toThrow(/audit log entries cannot be changed or deleted/);
    expect((await listAuditEntries(db.pool, { orgId, limit: 50 })).items).toHaveLength(12);
  }, 60_000);
});
