// job.created is timed by Postgres' clock like every other event (issue 27): a creator whose clock is off (an API
// replica an hour behind) sets the job's created_at, never its events' time, so events keep the order they committed in.
import { insertJobs, newId } from "@conveyor/db";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";

let database: TestDatabase;
let orgId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  orgId = newId();
  await database.db.prisma.organization.create({ data: { id: orgId, name: "Clocks" } });
});
afterAll(() => database.drop());

it("stamps job.created with Postgres' time and keeps the creator's created_at on the job", async () => {
  const id = newId();
  const creatorsClock = new Date(Date.now() - 3_600_000);
  await insertJobs(database.db.pool, [{ id, orgId, type: "webhook", payloadJson: '{"url":"https://example.com"}', maxRetries: 0, createdAt: creatorsClock }]);
  const { rows } = await database.db.pool.query<{ type: string; skew_s: number; created_at: Date }>(
    `SELECT e.type, extract(epoch FROM now() - e.time)::float8 AS skew_s, j.created_at
       FROM events e JOIN jobs j ON j.id = e.job_id WHERE e.job_id = $1`,
    [id],
  );
  expect(rows.map((r) => r.type)).toEqual(["job.created"]);
  // Written within this test by Postgres' clock: seconds ago at most, not an hour.
  expect(rows[0]!.skew_s).toBeGreaterThanOrEqual(0);
  expect(rows[0]!.skew_s).toBeLessThan(600);
  expect(rows[0]!.created_at.toISOString()).toBe(creatorsClock.toISOString());
});
