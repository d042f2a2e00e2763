// What the retention tests share: a fixed now and the days before it, a logger that writes nowhere, and a test
// database with two organizations whose `tables` are emptied before each test.
import { PassThrough } from "node:stream";
import { newId } from "@conveyor/db";
import { createLogger } from "@conveyor/logger";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";

export const NOW = new Date("2026-11-21T12:00:00.000Z");
const DAY = 24 * 60 * 60 * 1000;
export const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY);
export const logger = createLogger({ service: "test", stream: new PassThrough() });

/** The file's database (made before its tests, dropped after), its two organizations, and its pool. */
export function retentionDatabase(tables: string) {
  let database: TestDatabase;
  const orgs = { a: newId(), b: newId() };
  beforeAll(async () => {
    database = await createTestDatabase();
    for (const [name, id] of Object.entries(orgs)) await database.db.prisma.organization.create({ data: { id, name } });
  });
  afterAll(() => database.drop());
  beforeEach(() => database.db.pool.query(`TRUNCATE ${tables} CASCADE`));
  return { orgs, pool: () => database.db.pool };
}
