// Alert conditions as the leader observes them from Postgres (docs/reference/time.md#alerts), for the kinds the end-to-end test does not
// drive: a webhook endpoint failing N deliveries in a row, a schedule missing its tick, a quota nearly used — and
// recordObservation's hysteresis under the row lock: one alert per firing, closed on resolution, silenced ones kept.
import type pg from "pg";
import {
  insertAlertRule,
  insertSchedule,
  insertJobs,
  insertWebhookEndpoint,
  newId,
  NO_QUOTAS,
  observeCondition,
  putQuotaOverrides,
  recordObservation,
  touchProtocolWorker,
  type RuleToEvaluate,
} from "@conveyor/db";
import type { AlertCondition } from "@conveyor/contracts";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";

let database: TestDatabase;
let pool: pg.Pool;
let orgId: string;
let otherOrgId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = database.db.pool;
  orgId = newId();
  otherOrgId = newId();
  await database.db.prisma.organization.createMany({
    data: [
      { id: orgId, name: "Watched" },
      { id: otherOrgId, name: "Other" },
    ],
  });
});
afterAll(() => database.drop());

const rule = (condition: AlertCondition, windowSeconds = 60, org = orgId): RuleToEvaluate => ({
  id: newId(),
  orgId: org,
  name: "r",
  condition,
  channels: [],
  windowSeconds,
});

it("webhook_failing holds once the endpoint's last N deliveries failed, and not for another organization", async () => {
  const endpoint = await insertWebhookEndpoint(pool, {
    id: newId(),
    orgId,
    url: "https://hooks.example.com/x",
    description: null,
    events: ["*"],
    sealedSecret: Buffer.from("s"),
    createdBy: newId(),
  });
  const deliver = (error: string | null) =>
    pool.query(
      "INSERT INTO webhook_deliveries (endpoint_id, event_type, job_id, attempt, status_code, duration_ms, error) VALUES ($1, 'job.failed', $2, 1, $3, 5, $4)",
      [endpoint.id, newId(), error ? 500 : 200, error],
    );
  const condition: AlertCondition = { kind: "webhook_failing", endpoint_id: endpoint.id, consecutive: 3 };
  await deliver(null);
  await deliver("500 from the receiver");
  await deliver("500 from the receiver");
  expect(await observeCondition(pool, rule(condition), NO_QUOTAS)).toEqual({ holds: false, text: `the last 2 deliveries to endpoint ${endpoint.id} failed` });
  await deliver("timed out");
  expect((await observeCondition(pool, rule(condition), NO_QUOTAS)).holds).toBe(true);
  expect((await observeCondition(pool, rule(condition, 60, otherOrgId), NO_QUOTAS)).holds).toBe(false);
  await deliver(null);
  expect((await observeCondition(pool, rule(condition), NO_QUOTAS)).holds).toBe(false);
});

it("schedule_missed holds when a tick is more than a minute overdue, not while paused", async () => {
  const make = (nextRunAt: Date, paused = false) =>
    insertSchedule(pool, {
      id: newId(),
      orgId,
      name: "s",
      cron: "* * * * *",
      timezone: "UTC",
      job: { type: "webhook", payload: {}, max_retries: 0, priority: 5 },
      paused,
      nextRunAt,
      createdBy: newId(),
      createdAt: new Date(),
    });
  const late = await make(new Date(Date.now() - 5 * 60_000));
  const onTime = await make(new Date(Date.now() + 30_000));
  const paused = await make(new Date(Date.now() - 5 * 60_000), true);
  const seen = await observeCondition(pool, rule({ kind: "schedule_missed", schedule_id: late.id }), NO_QUOTAS);
  expect(seen.holds).toBe(true);
  expect(seen.text).toMatch(/^its next tick is \d+ s overdue$/);
  expect((await observeCondition(pool, rule({ kind: "schedule_missed", schedule_id: onTime.id }), NO_QUOTAS)).holds).toBe(false);
  expect(await observeCondition(pool, rule({ kind: "schedule_missed", schedule_id: paused.id }), NO_QUOTAS)).toEqual({
    holds: false,
    text: "the schedule is paused",
  });
});

it("quota holds at the share of a quota in force, and never without one", async () => {
  const condition: AlertCondition = { kind: "quota", quota: "jobs_per_day", threshold_percent: 80 };
  expect(await observeCondition(pool, rule(condition), NO_QUOTAS)).toEqual({ holds: false, text: "no jobs_per_day quota is in force" });
  await putQuotaOverrides(pool, orgId, { jobs_per_day: 10 });
  await pool.query("INSERT INTO usage_counts (org_id, day, type, stripe, jobs_created) VALUES ($1, (now() AT TIME ZONE 'UTC')::date, 'webhook', 0, 9)", [
    orgId,
  ]);
  expect(await observeCondition(pool, rule(condition), NO_QUOTAS)).toEqual({ holds: true, text: "jobs_per_day: 9 of 10 used (90 %)" });
});

it("no_worker of an organization's own type counts its protocol workers, not another organization's", async () => {
  await insertJobs(pool, [{ id: newId(), orgId, type: "own_resize", payloadJson: "{}", maxRetries: 0, createdAt: new Date() }]);
  const seen = (org: string) => ({
    id: newId(),
    orgId: org,
    apiKeyId: newId(),
    name: "python",
    version: "conveyor-python/0.1.0",
    types: ["own_resize"],
    concurrency: 10,
    heartbeatMs: 50_000,
  });
  expect(await observeCondition(pool, rule({ kind: "no_worker", type: "own_resize" }), NO_QUOTAS)).toMatchObject({ holds: true });
  await touchProtocolWorker(pool, seen(otherOrgId));
  expect(await observeCondition(pool, rule({ kind: "no_worker", type: "own_resize" }), NO_QUOTAS)).toMatchObject({ holds: true });
  await touchProtocolWorker(pool, seen(orgId));
  expect(await observeCondition(pool, rule({ kind: "no_worker", type: "own_resize" }), NO_QUOTAS)).toMatchObject({ holds: false });
});

it("recordObservation opens one alert after the window, closes it after a clear window, and records a silenced firing", async () => {
  const saved = await insertAlertRule(pool, {
    id: newId(),
    orgId,
    name: "held",
    condition: { kind: "no_worker", type: "x" },
    channels: [],
    windowSeconds: 10,
    createdBy: null,
  });
  const r = { ...rule({ kind: "no_worker", type: "x" }, 10), id: saved.id, name: "held" };
  const back = (seconds: number) =>
    pool.query("UPDATE alert_rules SET pending_since = pending_since - make_interval(secs => $2) WHERE id = $1", [r.id, seconds]);
  expect((await recordObservation(pool, r, { holds: true, text: "seen" }))?.change).toBeNull();
  await back(11);
  const fired = await recordObservation(pool, r, { holds: true, text: "seen" });
  expect(fired).toMatchObject({
    change: "fired",
    state: "firing",
    silenced: false,
    alert: { status: "firing", rule_name: "held", summary: expect.stringContaining("seen") },
  });
  expect((await recordObservation(pool, r, { holds: true, text: "seen" }))?.change).toBeNull();
  expect((await recordObservation(pool, r, { holds: false, text: "clear" }))?.change).toBeNull();
  await back(11);
  const resolved = await recordObservation(pool, r, { holds: false, text: "clear" });
  expect(resolved).toMatchObject({ change: "resolved", state: "ok", alert: { id: fired!.alert!.id, status: "resolved", resolved_at: expect.any(String) } });

  await pool.query("UPDATE alert_rules SET silenced_until = now() + interval '1 hour' WHERE id = $1", [r.id]);
  await recordObservation(pool, r, { holds: true, text: "again" });
  await back(11);
  expect(await recordObservation(pool, r, { holds: true, text: "again" })).toMatchObject({ change: "fired", silenced: true, alert: { silenced: true } });
  const { rows } = await pool.query("SELECT count(*)::int AS n FROM alerts WHERE rule_id = $1", [r.id]);
  expect(rows[0].n).toBe(2);
});
