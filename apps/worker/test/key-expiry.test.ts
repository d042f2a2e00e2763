// The leader's key expiry against real Postgres: idempotency keys past their 24 hours and dedupe keys past the
// longest window go, live ones stay — in every organization alike.
import { DEDUPE_SECONDS_MAX } from "@conveyor/contracts";
import { createLogger } from "@conveyor/logger";
import { newId } from "@conveyor/db";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";
import { PassThrough } from "node:stream";
import { KeyExpiry } from "../src/maintenance/key-expiry";

let database: TestDatabase;
const logger = createLogger({ service: "test", stream: new PassThrough() });
const orgs = [newId(), newId()];

beforeAll(async () => {
  database = await createTestDatabase();
  for (const [i, id] of orgs.entries()) await database.db.prisma.organization.create({ data: { id, name: `Keys ${i}` } });
});
afterAll(async () => {
  await database.drop();
});

async function jobOf(orgId: string): Promise<string> {
  const id = newId();
  await database.db.pool.query(
    "INSERT INTO jobs (id, org_id, type, status, payload, created_at, updated_at) VALUES ($1, $2, 'webhook', 'done', '{}', now(), now())",
    [id, orgId],
  );
  return id;
}

async function keys(table: "idempotency_keys" | "dedupe_keys"): Promise<string[]> {
  const { rows } = await database.db.pool.query<{ key: string }>(`SELECT key FROM ${table} ORDER BY key`);
  return rows.map((r) => r.key);
}

it("forgets idempotency keys past their 24 hours and dedupe keys past the longest window, in every organization", async () => {
  for (const [i, orgId] of orgs.entries()) {
    const job = await jobOf(orgId);
    await database.db.pool.query(
      `INSERT INTO idempotency_keys (org_id, key, job_id, request_hash, expires_at)
       VALUES ($1, $3 || '-old', $2, '\\x00', now() - interval '1 minute'), ($1, $3 || '-new', $2, '\\x00', now() + interval '1 hour')`,
      [orgId, job, `org${i}`],
    );
    await database.db.pool.query(
      `INSERT INTO dedupe_keys (org_id, key, job_id, created_at)
       VALUES ($1, $3 || '-old', $2, now() - ($4 + 60) * interval '1 second'), ($1, $3 || '-new', $2, now() - interval '1 day')`,
      [orgId, job, `org${i}`, DEDUPE_SECONDS_MAX],
    );
  }
  const expiry = new KeyExpiry({ pool: database.db.pool, logger, intervalMs: 60_000 });
  expect(await expiry.runOnce()).toEqual({ idempotencyKeys: 2, dedupeKeys: 2 });
  expect(await keys("idempotency_keys")).toEqual(["org0-new", "org1-new"]);
  expect(await keys("dedupe_keys")).toEqual(["org0-new", "org1-new"]);
  expect(await expiry.runOnce()).toEqual({ idempotencyKeys: 0, dedupeKeys: 0 });
});
