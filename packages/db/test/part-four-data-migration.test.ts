// Part five's migrations carry part four's data (docs/reference/lifecycle.md#storage-and-leases, issue 43): a database
// built by the migrations up to part four's last, holding jobs in every state — written by the statements of that
// time, with the usage trigger of that time counting them — with their events, logs, steps, a waitpoint, a
// dependency, a schedule, audit entries and webhook deliveries, migrates to today's shape with every stored row as it
// was, every job's list item and event JSON what part four's functions made of it, and today's reads answering from it.
// Then the job machine runs on it: a claim of a pending job, a take-over of a processing job whose holder is gone.
// Each later migration has its own test of what it changes; this one is the whole way at once, and with them it is
// docs/reference/robustness.md#r57's check: the same history gives the same events and the same usage after part
// five's storage changes (event JSON by row type and in key order, usage counted by the statements) as before.
import type pg from "pg";
import {
  claimJobs,
  findJob,
  findJobAttempts,
  findJobLogs,
  listAuditEntries,
  listJobsPage,
  listWebhookDeliveries,
  newId,
  readEventTexts,
  readSteps,
  readUsage,
  writeOutcomes,
  type Database,
} from "../src";
import { applyMigrations, databaseAtMigration, type DatabaseAtMigration } from "./support/database-at-migration";

/** Part four's last migration: everything after it is part five's. */
const PART_FOUR = "20261128133000_usage_stripe_per_backend";
const DAY = 86_400_000;

let database: DatabaseAtMigration;
let db: Database;
const sql = <T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []) => db.pool.query<T>(text, values);

beforeAll(async () => {
  database = await databaseAtMigration("conveyor_test_p4", (name) => name <= PART_FOUR);
  db = database.db;
}, 180_000);
afterAll(() => database?.drop());

const orgId = newId();
const userId = newId();
const endpointId = newId();
const today = new Date().toISOString().slice(0, 10);

/** Writes the event `type` of job `id` as part four's statements did: the job's JSON as it is now. */
const event = (id: string, type: string) =>
  sql(
    "INSERT INTO events (id, org_id, job_id, type, time, data) SELECT conveyor_next_event_id(), org_id, id, $2, now(), conveyor_job_data(j) FROM jobs j WHERE id = $1",
    [id, type],
  );

/** A job moved through `moves` by part four's plain statements (its usage trigger counts them). */
async function oldJob(moves: string[], options: { runAt?: Date; type?: string; fence?: string } = {}): Promise<string> {
  const id = newId();
  const type = options.type ?? "send_email";
  await sql(
    `INSERT INTO jobs (id, org_id, type, status, payload, max_retries, run_at, concurrency_key, created_at, updated_at)
     VALUES ($1, $2, $3, 'pending', $4::jsonb, 2, $5, $6, now(), now())`,
    [id, orgId, type, JSON.stringify({ to: `${id.slice(-6)}@example.com`, subject: 'Ünïcode "quoted" \\ line\nbreak' }), options.runAt ?? null, "tenant-7"],
  );
  await sql("INSERT INTO job_queue (job_id, type, org_id, priority, due_at, concurrency_key) VALUES ($1, $2, $3, 5, coalesce($4, now()), 'tenant-7')", [
    id,
    type,
    orgId,
    options.runAt ?? null,
  ]);
  await sql("INSERT INTO job_search (job_id, org_id, search_values) VALUES ($1, $2, ARRAY[$3])", [id, orgId, `order-${id.slice(-6)}`]);
  await event(id, "job.created");
  let attempt = 0;
  for (const move of moves) {
    if (move === "start") {
      attempt += 1;
      await sql("UPDATE jobs SET status = 'processing', fence = $2, started_at = now() - interval '250 milliseconds', updated_at = now() WHERE id = $1", [
        id,
        options.fence ?? `old-fence-${attempt}`,
      ]);
      await sql("UPDATE job_queue SET dispatched_at = now() WHERE job_id = $1", [id]);
      await sql("INSERT INTO job_logs (job_id, attempt, level, message) VALUES ($1, $2, 'info', $3)", [id, attempt, `attempt ${attempt} began`]);
      await event(id, "job.started");
    } else if (move === "retry") {
      await sql(
        "UPDATE jobs SET status = 'pending', retries = retries + 1, error = 'HTTP 503 from provider', fence = NULL, run_at = now() + interval '1 hour', updated_at = now() WHERE id = $1",
        [id],
      );
      await sql("UPDATE job_queue SET dispatched_at = NULL, due_at = now() + interval '1 hour' WHERE job_id = $1", [id]);
      await sql("INSERT INTO job_logs (job_id, attempt, level, message) VALUES ($1, $2, 'warn', 'will retry')", [id, attempt]);
      await event(id, "job.retrying");
    } else {
      const [status, type, set] =
        move === "done"
          ? ["done", "job.succeeded", `result = '{"sent":true,"provider_id":"abc"}'::jsonb`]
          : move === "fail"
            ? ["failed", "job.failed", "error = 'HTTP 400 invalid recipient 12345'"]
            : ["cancelled", "job.cancelled", "error = 'cancelled by user'"];
      await sql(`UPDATE jobs SET status = $2::job_status, ${set}, fence = NULL, finished_at = now(), updated_at = now() WHERE id = $1`, [id, status]);
      await sql("DELETE FROM job_queue WHERE job_id = $1", [id]);
      await event(id, type);
    }
  }
  return id;
}

/** The tables a job's life and the logs write, each with the order its rows are compared in. */
const TABLES = {
  jobs: "id",
  job_queue: "job_id",
  job_search: "job_id",
  job_dependencies: "job_id",
  events: "id",
  job_logs: "id",
  job_steps: "job_id, name",
  waitpoints: "id",
  schedules: "id",
  usage_counts: "org_id, day, type",
  stored_payload_bytes: "org_id",
  audit_log: "id",
  webhook_deliveries: "id",
} as const;
type StoredRows = Record<keyof typeof TABLES, Record<string, unknown>[]>;

/** Every stored row of those tables, as JSON, in a fixed order. */
async function storedRows(): Promise<StoredRows> {
  const rows = {} as StoredRows;
  for (const [table, order] of Object.entries(TABLES) as [keyof typeof TABLES, string][])
    rows[table] = (await sql<{ row: Record<string, unknown> }>(`SELECT to_jsonb(t) AS row FROM ${table} t ORDER BY ${order}`)).rows.map((r) => r.row);
  return rows;
}

/** `after` with only the keys `before` had: later migrations may add columns, never change what was stored. */
const asBefore = (before: Record<string, unknown>[], after: Record<string, unknown>[]) =>
  after.map((row, i) => Object.fromEntries(Object.keys(before[i] ?? row).map((key) => [key, row[key]])));

it("migrates part four's data to today's shape: every stored row, job item and event as it was, and the machine runs on it", async () => {
  await sql("INSERT INTO organizations (id, name) VALUES ($1, 'Part four org')", [orgId]);
  await sql("INSERT INTO users (id, email, password_hash) VALUES ($1, 'p4@example.com', 'x')", [userId]);
  const jobs = {
    pending: await oldJob([]),
    scheduled: await oldJob([], { runAt: new Date(Date.now() + 3 * DAY) }),
    processing: await oldJob(["start"], { fence: "gone-worker-fence" }),
    retrying: await oldJob(["start", "retry"]),
    done: await oldJob(["start", "done"], { type: "webhook" }),
    failed: await oldJob(["start", "retry", "start", "fail"]),
    cancelled: await oldJob(["cancel"]),
  };
  // The pending job waits for the done one (a dependency already met), the retrying one slept in a step and waits.
  await sql("INSERT INTO job_dependencies (job_id, depends_on_id, org_id) VALUES ($1, $2, $3)", [jobs.pending, jobs.done, orgId]);
  await sql("UPDATE jobs SET dependencies = 1 WHERE id = $1", [jobs.pending]);
  await sql("UPDATE jobs SET dependents = 1 WHERE id = $1", [jobs.done]);
  const waitpoint = newId();
  await sql(
    "INSERT INTO waitpoints (id, org_id, status, tags, token_hash, expires_at, job_id, created_at) VALUES ($1, $2, 'waiting', '{}', decode(md5('p4'), 'hex'), now() + interval '1 day', $3, now())",
    [waitpoint, orgId, jobs.retrying],
  );
  await sql(
    `INSERT INTO job_steps (job_id, name, kind, status, attempt, result, started_at, finished_at) VALUES ($1, 'fetch', 'step', 'completed', 1, '{"n":1}', now(), now())`,
    [jobs.retrying],
  );
  await sql("INSERT INTO job_steps (job_id, name, kind, status, attempt, waitpoint_id, started_at) VALUES ($1, 'approval', 'wait', 'waiting', 1, $2, now())", [
    jobs.retrying,
    waitpoint,
  ]);
  await sql(
    `INSERT INTO schedules (id, org_id, name, cron, timezone, job, next_run_at, created_by) VALUES ($1, $2, 'nightly', '0 3 * * *', 'Africa/Nairobi', '{"type":"send_email","payload":{"to":"a@b.c"}}', now() + interval '1 day', $3)`,
    [newId(), orgId, userId],
  );
  // Audit entries of three months, and an endpoint's deliveries of two days (one failed, one delivered).
  for (const [i, age] of [70, 35, 0.01].entries())
    await sql(
      `INSERT INTO audit_log (id, org_id, time, actor_type, actor_id, actor_label, action, target_type, target_id, ip, changes)
       VALUES ($1, $2, $3, 'user', $4, 'p4@example.com', 'member.role_change', 'member', $5, '10.0.0.1', '{"role":{"before":"member","after":"admin"}}')`,
      [newId(), orgId, new Date(Date.now() - age * DAY - i * 1000), userId, newId()],
    );
  await sql(
    `INSERT INTO webhook_endpoints (id, org_id, url, events, secret, created_by) VALUES ($1, $2, 'https://example.com/hook', ARRAY['job.succeeded'], '\\x00', $3)`,
    [endpointId, orgId, userId],
  );
  const { rows: succeeded } = await sql<{ id: string }>("SELECT id::text FROM events WHERE type = 'job.succeeded'");
  for (const [age, code] of [
    [2, 500],
    [0, 200],
  ] as const)
    await sql(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, job_id, subject_job_id, attempt, status_code, duration_ms, error, at)
       VALUES ($1, $2, 'job.succeeded', $3, $4, 1, $5, 30, $6, $7)`,
      [endpointId, succeeded[0]!.id, newId(), jobs.done, code, code === 200 ? null : "HTTP 500", new Date(Date.now() - age * DAY)],
    );

  const before = await storedRows();
  const itemsBefore = new Map(
    (await sql<{ id: string; item: string }>("SELECT id::text, conveyor_job_item(j)::text AS item FROM jobs j")).rows.map((r) => [r.id, JSON.parse(r.item)]),
  );
  const dataBefore = new Map(
    (await sql<{ id: string; data: unknown }>("SELECT id::text, conveyor_job_data(j) AS data FROM jobs j")).rows.map((r) => [r.id, r.data]),
  );
  // 17 events; the trigger of the time counted 5 attempts started (processing, retrying, done, failed twice).
  expect(before.events).toHaveLength(17);
  expect(before.usage_counts.reduce((sum, r) => sum + Number(r.attempts_started), 0)).toBe(5);

  // Part five: the migrations after part four's last, then the stored functions' sources, as the runner applies them.
  await applyMigrations(db, (name) => name > PART_FOUR);
  await database.applyFunctionSources();

  const after = await storedRows();
  for (const table of Object.keys(TABLES) as (keyof typeof TABLES)[]) {
    expect({ table, rows: asBefore(before[table], after[table]) }).toEqual({ table, rows: before[table] });
  }
  // The audit log and the deliveries moved into partitions of their month and day.
  const { rows: parts } = await sql<{ table: string; n: number }>(
    `SELECT c.relname AS table, count(*)::int AS n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhparent
      WHERE c.relname IN ('audit_log', 'webhook_deliveries') GROUP BY 1 ORDER BY 1`,
  );
  expect(parts.map((p) => p.table)).toEqual(["audit_log", "webhook_deliveries"]);

  // Today's functions make of each job what part four's made: its list item and its event JSON.
  const itemsAfter = (await listJobsPage(db.pool, { orgId, limit: 50 })).items.map((text) => JSON.parse(text) as { id: string });
  expect(itemsAfter).toHaveLength(Object.keys(jobs).length);
  for (const item of itemsAfter) expect(item).toEqual(itemsBefore.get(item.id));
  const { rows: dataAfter } = await sql<{ id: string; data: unknown }>("SELECT id::text, conveyor_job_data(j) AS data FROM jobs j");
  for (const row of dataAfter) expect(row.data).toEqual(dataBefore.get(row.id));

  // Today's reads answer from the migrated rows.
  const events = (await readEventTexts(db.pool, { orgId, after: 0n, limit: 1000 })).events;
  expect(events.map((e) => [String(e.id), e.type, JSON.parse(e.json).data])).toEqual(before.events.map((e) => [String(e.id), e.type, e.data]));
  for (const [status, id] of Object.entries(jobs)) {
    const job = await findJob(db.pool, orgId, id);
    const stored = before.jobs.find((j) => j.id === id)!;
    expect(job).toMatchObject({ id, payload: stored.payload, result: stored.result, error: stored.error });
    expect(job!.status).toBe(status === "scheduled" || status === "retrying" ? "pending" : status);
    // The handler's lines, in their order, among the lines the log composes from the job's events.
    const lines = before.job_logs.filter((l) => l.job_id === id).map((l) => l.message);
    const logs = await findJobLogs(db.pool, orgId, id);
    expect(logs!.map((l) => l.message).filter((m) => lines.includes(m))).toEqual(lines);
    const attempts = await findJobAttempts(db.pool, orgId, id);
    expect(attempts!.length).toBe(stored.status === "cancelled" ? 0 : before.job_logs.filter((l) => l.job_id === id && l.level === "info").length);
  }
  expect([...(await readSteps(db.pool, jobs.retrying)).keys()].sort()).toEqual(["approval", "fetch"]);
  expect((await listAuditEntries(db.pool, { orgId, limit: 10 })).items).toHaveLength(3);
  const deliveries = await listWebhookDeliveries(db.pool, { orgId, endpointId, limit: 10 });
  expect(deliveries!.map((d) => d.status_code)).toEqual([200, 500]);
  const usage = await readUsage(db.pool, { orgId, from: today, to: today, groupBy: "day" });
  expect(JSON.stringify(usage)).toContain('"attempts_started":5');

  // The machine on the migrated rows: the processing job (its holder is gone) is taken over; the pending one waits
  // while that job holds their concurrency key (docs/reference/flow-control.md#why-a-job-waits), then starts and
  // succeeds. Each attempt is counted once, by the statements (no trigger left to count it twice).
  const started = async (id: string, fence: string) =>
    (await claimJobs(db.pool, [{ id, fence }])).filter((c) => "previousStatus" in c).map((c) => ("previousStatus" in c ? c.previousStatus : null));
  const finish = (id: string, fence: string) =>
    writeOutcomes(db.pool, [], [{ id, fence, status: "done", retries: 0, result: '{"ok":1}', error: null, runAt: null }]);
  expect(await started(jobs.processing, "new-2")).toEqual(["processing"]);
  expect(await started(jobs.pending, "new-1")).toEqual([]);
  expect((await findJob(db.pool, orgId, jobs.pending))!.status).toBe("pending");
  expect([...(await finish(jobs.processing, "new-2")).values()]).toEqual(["done"]);
  expect(await started(jobs.pending, "new-1")).toEqual(["pending"]);
  expect([...(await finish(jobs.pending, "new-1")).values()]).toEqual(["done"]);
  const later = (await readEventTexts(db.pool, { orgId, after: BigInt(String(before.events.at(-1)!.id)), limit: 100 })).events;
  expect(later.map((e) => e.type).sort()).toEqual(["job.started", "job.started", "job.succeeded", "job.succeeded"]);
  const counted = await readUsage(db.pool, { orgId, from: today, to: today, groupBy: "day" });
  expect(JSON.stringify(counted)).toContain('"attempts_started":7');
}, 180_000);
