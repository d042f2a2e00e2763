// The Queues page's per-minute figures (readQueueActivity, issue 38), on events written as the job machine writes
// them: starts of each tenant type per minute with their mean and p95 wait from due to start, nothing of another
// organization or of internal types, and — when the newest events read do not reach back an hour — the first minute
// they cover whole, so earlier minutes read unknown instead of quiet.
import { newId, readQueueActivity } from "@conveyor/db";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";

let database: TestDatabase;
let orgId: string;
let otherOrg: string;
let nextId = 1;

beforeAll(async () => {
  database = await createTestDatabase();
  [orgId, otherOrg] = [newId(), newId()];
  for (const id of [orgId, otherOrg]) await database.db.prisma.organization.create({ data: { id, name: `Activity ${id.slice(-4)}` } });
});
afterAll(() => database.drop());

/** A job.started (or other) event `minutesAgo` before now, of a job due `waitMs` before it started. */
async function event(org: string, type: string, minutesAgo: number, waitMs: number, eventType = "job.started"): Promise<void> {
  await database.db.pool.query(
    `INSERT INTO events (id, org_id, job_id, type, time, data)
     SELECT $1, $2, $3, $4, t, jsonb_build_object('type', $5::text, 'run_at', null, 'created_at', t - $6 * interval '1 millisecond')
       FROM (SELECT date_trunc('minute', now()) - $7 * interval '1 minute' + interval '10 seconds' AS t) AS at`,
    [nextId++, org, newId(), eventType, type, waitMs, minutesAgo],
  );
}

const minuteAgo = (activity: { minutes: string[] }, n: number) => activity.minutes[activity.minutes.length - 1 - n]!;

it("counts starts per type and minute with their waits, for the org's tenant types only", async () => {
  for (const wait of [100, 200, 300, 400]) await event(orgId, "send_email", 3, wait);
  await event(orgId, "send_email", 3, 5000, "job.created");
  await event(orgId, "webhook", 1, 50);
  await event(orgId, "_webhook_delivery", 1, 50);
  await event(otherOrg, "send_email", 3, 100);

  const activity = await readQueueActivity(database.db.pool, orgId);
  expect(activity.minutes).toHaveLength(60);
  expect(activity.covered_from).toBeNull();
  expect(activity.rows).toEqual([
    { type: "send_email", minute: minuteAgo(activity, 3), started: 4, wait_avg_ms: 250, wait_p95_ms: 385 },
    { type: "webhook", minute: minuteAgo(activity, 1), started: 1, wait_avg_ms: 50, wait_p95_ms: 50 },
  ]);
});

it("says from which minute the figures are whole when the newest events read stop short of the hour", async () => {
  const org = newId();
  await database.db.prisma.organization.create({ data: { id: org, name: "Busy" } });
  for (let i = 0; i < 3; i++) await event(org, "send_sms", 20, 10);
  for (let i = 0; i < 4; i++) await event(org, "send_sms", 5, 10);
  // Five events read: the four of five minutes ago and one of twenty minutes ago.
  const activity = await readQueueActivity(database.db.pool, org, 5);
  expect(activity.covered_from).toBe(minuteAgo(activity, 19));
  const whole = await readQueueActivity(database.db.pool, org);
  expect(whole.covered_from).toBeNull();
  expect(whole.rows.map((r) => r.started)).toEqual([3, 4]);
});
