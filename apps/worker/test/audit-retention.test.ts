// Audit retention (docs/reference/tenants.md#audit-log): the leader deletes entries older than AUDIT_RETENTION_DAYS, in batches, across
// organizations, and nothing younger — the one deletion the audit log's trigger lets through.
import { PassThrough } from "node:stream";
import { newId } from "@conveyor/db";
import { createLogger } from "@conveyor/logger";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";
import { AuditRetention } from "../src/maintenance/audit-retention";

let database: TestDatabase;
const NOW = new Date();
const DAY = 24 * 60 * 60 * 1000;
const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY);
const logger = createLogger({ service: "test", stream: new PassThrough() });

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

/** `count` entries of `orgId`, each `age` days old (and a little more, so none sits on the cut-off). */
async function insertEntries(orgId: string, age: number, count: number): Promise<void> {
  await database.db.pool.query(
    `INSERT INTO audit_log (id, org_id, time, actor_type, action)
     SELECT gen_random_uuid(), $1, $2::timestamptz - n * interval '1 second', 'user', 'member.role_change' FROM generate_series(1, $3) AS n`,
    [orgId, daysAgo(age), count],
  );
}

const left = async (orgId: string) =>
  (await database.db.pool.query<{ n: string }>("SELECT count(*) AS n FROM audit_log WHERE org_id = $1", [orgId])).rows.map((r) => Number(r.n))[0];

describe("audit retention", () => {
  it("deletes the entries older than AUDIT_RETENTION_DAYS of every organization, in batches, and keeps the rest", async () => {
    const [a, b] = [newId(), newId()];
    await insertEntries(a, 401, 250);
    await insertEntries(a, 399, 5);
    await insertEntries(b, 500, 30);
    await insertEntries(b, 1, 3);
    const deleted: number[] = [];
    const retention = new AuditRetention({
      pool: database.db.pool,
      logger,
      days: 400,
      now: () => NOW,
      batch: { initial: 40, min: 10, max: 100 },
      onDeleted: (n) => deleted.push(n),
    });
    expect(await retention.sweep()).toBe(280);
    expect(deleted.length).toBeGreaterThan(2);
    expect(Math.max(...deleted)).toBeLessThanOrEqual(100);
    expect([await left(a), await left(b)]).toEqual([5, 3]);
    // Nothing more to do.
    expect(await retention.sweep()).toBe(0);
  });

  it("keeps everything with 0 days, and is named apart from job retention", async () => {
    const org = newId();
    await insertEntries(org, 3000, 4);
    const retention = new AuditRetention({ pool: database.db.pool, logger, days: 0, now: () => NOW });
    expect(retention.name).toBe("audit-retention");
    expect(await retention.sweep()).toBe(0);
    expect(await left(org)).toBe(4);
  });
});
