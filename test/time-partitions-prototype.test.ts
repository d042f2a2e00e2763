// The time-partitions prototype (bench/sql/time-partitions-prototype.sql; docs/decisions/2026-12-06-time-partitions.md)
// holds docs/reference/robustness.md#r58 on a real Postgres: a job for a day no partition was made for is stored, never refused, and
// moves into its day once the leader makes it; retiring a day drops what may go and keeps, with its events and logs,
// what must outlive it (a job not final, one finished after the cut-off, one a live job depends on); a retention
// pass and a list query running at once both finish (the pass gives way within its lock_timeout and tries again).
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { createTestDatabase, insertOrgs, type TestDatabase } from "@conveyor/testkit";

const DAY_MS = 86_400_000;
let database: TestDatabase;
let orgId: string;

/** A UUID v7 of the moment `ms`. */
function idAt(ms: number): string {
  const hex = ms.toString(16).padStart(12, "0") + "7" + randomBytes(2).toString("hex").slice(0, 3) + "8" + randomBytes(8).toString("hex").slice(0, 15);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const query = <T extends pg.QueryResultRow>(sql: string, params: unknown[] = []) => database.db.pool.query<T>(sql, params).then((r) => r.rows);

/** A job created at `createdMs` with an event and a log line; `finishedMs` null leaves it as `status` without an end. */
async function job(createdMs: number, status: string, finishedMs: number | null, extra: { error?: string; dependents?: number } = {}): Promise<string> {
  const id = idAt(createdMs);
  await query(
    `INSERT INTO tp_jobs (id, org_id, type, status, payload, error, dependents, created_at, updated_at, finished_at)
     VALUES ($1, $2, 'webhook', $3::job_status, '{}', $4, $5, to_timestamp($6 / 1000.0), to_timestamp($6 / 1000.0), to_timestamp($7 / 1000.0))`,
    [id, orgId, status, extra.error ?? null, extra.dependents ?? 0, createdMs, finishedMs],
  );
  await query(`INSERT INTO tp_events (id, org_id, job_id, type, time, data) VALUES ((random() * 1e12)::bigint, $1, $2, 'job.created', now(), '{}')`, [
    orgId,
    id,
  ]);
  await query(`INSERT INTO tp_job_logs (id, job_id, attempt, level, message) VALUES ((random() * 1e12)::bigint, $1, 1, 'info', 'Attempt 1 of 1 started.')`, [
    id,
  ]);
  return id;
}

const placeOf = async (id: string) => (await query<{ place: string }>("SELECT tableoid::regclass::text AS place FROM tp_jobs WHERE id = $1", [id]))[0]?.place;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

beforeAll(async () => {
  database = await createTestDatabase();
  [orgId] = await insertOrgs(database.db, "Acme");
  await query(readFileSync(path.join(__dirname, "../bench/sql/time-partitions-prototype.sql"), "utf8"));
  await query("SELECT tp_make_partitions((now() - interval '4 days')::date, (now() + interval '1 day')::date)");
});
afterAll(() => database?.drop());

it("stores a job for a day no partition exists for, and moves it into the day once it is made", async () => {
  const ahead = Date.now() + 60 * DAY_MS;
  const id = await job(ahead, "pending", null);
  expect(await placeOf(id)).toBe("tp_jobs_default");
  await query("SELECT tp_make_partitions($1::date, $1::date)", [utcDay(ahead)]);
  expect(await placeOf(id)).toBe(`tp_jobs_${utcDay(ahead).replace(/-/g, "")}`);
  const moved = await query<{ n: string }>("SELECT count(*) AS n FROM tp_events WHERE job_id = $1 AND tableoid = $2::regclass", [
    id,
    `tp_events_${utcDay(ahead).replace(/-/g, "")}`,
  ]);
  expect(Number(moved[0]!.n)).toBe(1);
});

it("retires a day: drops what may go, keeps what must outlive it with its events and logs, and takes the failures off", async () => {
  const dayStart = Math.floor((Date.now() - 3 * DAY_MS) / DAY_MS) * DAY_MS;
  const cutoff = new Date(dayStart + 2 * DAY_MS);
  const goes = await job(dayStart + 3_600_000, "done", dayStart + 3_700_000);
  const failed = await job(dayStart + 3_600_000, "failed", dayStart + 3_700_000, { error: "quota: provider answered 503" });
  const waiting = await job(dayStart + 3_600_000, "pending", null);
  const finishedLate = await job(dayStart + 3_600_000, "done", Date.now() - 60_000);
  const dependedOn = await job(dayStart + 3_600_000, "done", dayStart + 3_700_000, { dependents: 1 });
  const dependent = await job(Date.now() - 60_000, "pending", null);
  await query("INSERT INTO job_dependencies (job_id, depends_on_id, org_id) VALUES ($1, $2, $3)", [dependent, dependedOn, orgId]);
  const [{ group }] = (await query<{ group: string }>("SELECT failure_group AS group FROM tp_jobs WHERE id = $1", [failed])) as [{ group: string }];
  await query(
    `INSERT INTO failure_counts (org_id, failure_group, type, failed, first_seen, last_seen, sample_job_id) VALUES ($1, $2, 'webhook', 1, now(), now(), $3)`,
    [orgId, group, failed],
  );

  const [result] = await query<{ gone: string; kept: string }>("SELECT * FROM tp_retire_day($1::date, $2)", [utcDay(dayStart), cutoff]);
  expect({ gone: Number(result!.gone), kept: Number(result!.kept) }).toEqual({ gone: 2, kept: 3 });
  const suffix = utcDay(dayStart).replace(/-/g, "");
  for (const t of ["tp_jobs", "tp_events", "tp_job_logs", "tp_job_search"]) await query(`DROP TABLE ${t}_${suffix}`);

  expect(await placeOf(goes)).toBeUndefined();
  expect(await placeOf(failed)).toBeUndefined();
  for (const kept of [waiting, finishedLate, dependedOn]) {
    expect(await placeOf(kept)).toBe("tp_jobs_default");
    const [{ events, logs }] = (await query<{ events: string; logs: string }>(
      "SELECT (SELECT count(*) FROM tp_events WHERE job_id = $1) AS events, (SELECT count(*) FROM tp_job_logs WHERE job_id = $1) AS logs",
      [kept],
    )) as [{ events: string; logs: string }];
    expect({ events: Number(events), logs: Number(logs) }).toEqual({ events: 1, logs: 1 });
  }
  const [{ n }] = (await query<{ n: number }>("SELECT failed AS n FROM failure_counts WHERE org_id = $1 AND failure_group = $2", [orgId, group])) as [
    { n: number },
  ];
  expect(n).toBe(0);
});

it("a retention pass and a list query running at once both finish: the pass gives way and succeeds on its next try", async () => {
  const dayStart = Math.floor((Date.now() - 2 * DAY_MS) / DAY_MS) * DAY_MS;
  const cutoff = new Date(dayStart + DAY_MS);
  await job(dayStart + 60_000, "done", dayStart + 120_000);
  const reader = new pg.Client({ connectionString: database.url });
  const pass = new pg.Client({ connectionString: database.url });
  await Promise.all([reader.connect(), pass.connect()]);
  try {
    // A long list (an unpaged GET /jobs stream) holds the parent while the pass wants to detach from it.
    await reader.query("BEGIN");
    const page = await reader.query("SELECT id FROM tp_jobs WHERE org_id = $1 ORDER BY id DESC LIMIT 100", [orgId]);
    expect(page.rows.length).toBeGreaterThan(0);
    const retire = async () => {
      await pass.query("BEGIN");
      try {
        await pass.query("SET LOCAL lock_timeout = '500ms'");
        const { rows } = await pass.query<{ gone: string }>("SELECT gone FROM tp_retire_day($1::date, $2)", [utcDay(dayStart), cutoff]);
        await pass.query("COMMIT");
        return Number(rows[0]!.gone);
      } catch (error) {
        await pass.query("ROLLBACK");
        throw error;
      }
    };
    await expect(retire()).rejects.toThrow(/lock timeout/);
    // The list goes on and ends; the day is still there, and the next try takes it.
    expect((await reader.query("SELECT count(*) AS n FROM tp_jobs WHERE org_id = $1", [orgId])).rows[0].n).not.toBe("0");
    await reader.query("COMMIT");
    expect(await retire()).toBe(1);
  } finally {
    await Promise.all([reader.end(), pass.end()]);
  }
});
