// Schedule run records (docs/reference/time.md#alerts) are trimmed by the leader after JOB_RETENTION_DAYS: the runs of old ticks go, in
// batches, the recent ones stay (and keep a recent backfill idempotent); nothing goes with JOB_RETENTION_DAYS 0.
import { PassThrough } from "node:stream";
import { insertSchedule, newId } from "@conveyor/db";
import { createLogger } from "@conveyor/logger";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";
import { ScheduleRunRetention } from "../src/maintenance/schedule-run-retention";

let database: TestDatabase;
let scheduleId: string;
const logger = createLogger({ service: "test", stream: new PassThrough() });

beforeAll(async () => {
  database = await createTestDatabase();
  const orgId = newId();
  await database.db.pool.query("INSERT INTO organizations (id, name) VALUES ($1, 'runs')", [orgId]);
  const schedule = await insertSchedule(database.db.pool, {
    id: newId(),
    orgId,
    name: "hourly",
    cron: "0 * * * *",
    timezone: "UTC",
    job: { type: "webhook", payload: {}, max_retries: 0, priority: 5 },
    paused: false,
    nextRunAt: null,
    createdBy: newId(),
    createdAt: new Date(),
  });
  scheduleId = schedule.id;
});
afterAll(() => database.drop());

/** `count` hourly runs ending `days` ago. */
const insertRuns = (days: number, count: number) =>
  database.db.pool.query(
    `INSERT INTO schedule_runs (schedule_id, tick, job_id)
     SELECT $1, date_trunc('hour', now()) - $2 * interval '1 day' - n * interval '1 hour', gen_random_uuid() FROM generate_series(0, $3 - 1) AS n`,
    [scheduleId, days, count],
  );
const count = async () => Number((await database.db.pool.query<{ n: string }>("SELECT count(*) AS n FROM schedule_runs")).rows[0]!.n);

it("deletes the runs of ticks older than JOB_RETENTION_DAYS, in batches, and keeps the rest", async () => {
  await insertRuns(40, 120);
  await insertRuns(1, 10);
  const batches: number[] = [];
  const retention = new ScheduleRunRetention({
    pool: database.db.pool,
    logger,
    days: 30,
    batch: { initial: 50, min: 10, max: 50 },
    pauseFactor: 0,
    onDeleted: (n) => batches.push(n),
  });
  expect(await retention.sweep()).toBe(120);
  for (const n of batches) expect(n).toBeLessThanOrEqual(50);
  expect(await count()).toBe(10);
  expect(await new ScheduleRunRetention({ pool: database.db.pool, logger, days: 0 }).sweep()).toBe(0);
  expect(await count()).toBe(10);
});
