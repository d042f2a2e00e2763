// The migration that builds an event's job JSON from a row type (docs/reference/lifecycle.md#storage-and-leases, issue
// 43: the type conveyor_job_data_fields, and conveyor_job_data's source file using it — to_jsonb instead of
// jsonb_build_object — applied after it as the migration runner does) changes nothing a client reads: run on a database of the shape before it, holding jobs in every state with their events, every read
// answers as before, and the function gives the very jsonb the old one gave for jobs with every field null or set —
// strings that need escaping, numbers, nested JSON — and for the transitions' events written after it.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";
import { claimJobs, newId, readEventTexts, writeOutcomes, type NewJob } from "../src";
import { jobThrough, readsOf, type Move } from "./support/job-through";

const MIGRATIONS = path.resolve(__dirname, "../../../prisma/migrations");
const MIGRATION = path.join(MIGRATIONS, "20261207033400_event_data_by_row_type/migration.sql");
const SOURCE = path.resolve(__dirname, "../sql/functions/conveyor_job_json.sql");
/** The later migration that reorders the type's attributes, which the source file's function now expects. */
const LATER = path.join(MIGRATIONS, "20261207160000_event_data_in_key_order/migration.sql");
/** The migration that last defined conveyor_job_data before it. */
const PREVIOUS = path.join(MIGRATIONS, "20261128061603_job_progress_output_public_tokens/migration.sql");

let database: TestDatabase;
let orgId: string;
const sql = (text: string, values: unknown[] = []) => database.db.pool.query(text, values);

/** The old definition, as the previous migration wrote it, under `name`. */
async function previousDefinition(name: string): Promise<string> {
  const text = await readFile(PREVIOUS, "utf8");
  const fn = /CREATE OR REPLACE FUNCTION conveyor_job_data\(j jobs\)[\s\S]*?\n\$\$;/.exec(text)?.[0];
  if (!fn) throw new Error("the previous definition of conveyor_job_data was not found");
  return fn.replace("FUNCTION conveyor_job_data(", `FUNCTION ${name}(`);
}

const usesRowType = async () =>
  (await sql("SELECT 1 FROM pg_proc WHERE proname = 'conveyor_job_data' AND prosrc LIKE '%conveyor_job_data_fields%'")).rowCount === 1;

/** A job written by the transitions as they are, created with `extra`; its failures' error needs escaping, its result nests. */
const job = (moves: Move[], extra: Partial<NewJob> = {}) =>
  jobThrough(database.db.pool, orgId, moves, {
    job: extra,
    result: '{"sent":true,"nested":{"list":[1,2.5,"x"],"none":null}}',
    error: 'it broke: "quoted" \\ back\\slash, tab\t, newline\n, ünïcødé ✓',
  });

beforeAll(async () => {
  database = await createTestDatabase();
  orgId = newId();
  await sql("INSERT INTO organizations (id, name) VALUES ($1, 'Event data migration org')", [orgId]);
  // The shape before the migration: the old function, and no row type.
  await sql(await previousDefinition("conveyor_job_data"));
  await sql("DROP TYPE conveyor_job_data_fields");
});
afterAll(() => database.drop());

it("keeps every read as it was, and builds the same jsonb as the old function for every shape of job", async () => {
  expect(await usesRowType()).toBe(false);
  const jobs = {
    pending: await job([]),
    flowControlled: await job([], {
      runAt: new Date(Date.now() + 3_600_000),
      priority: 9,
      concurrencyKey: 'key "one"',
      concurrencyLimit: 3,
      rateLimit: "per-minute",
      timeoutMs: 12_345,
      dedupe: { key: "dédupe", seconds: 60 },
    }),
    processing: await job(["start"]),
    retrying: await job(["start", "retry"]),
    done: await job(["start", "done"]),
    failed: await job(["start", "retry", "start", "fail"]),
  };
  // Fields no transition here sets, set by hand on one job (progress with an escape, a cancellation request, links).
  await sql(
    `UPDATE jobs SET progress = '{"fraction":0.5,"message":"half \\"way\\"","at":"2026-12-07T00:00:00.000Z"}', cancel_requested_at = now(),
                     replay_of = $2, schedule_id = $3, debounce_key = 'debounced', started_at = now() WHERE id = $1`,
    [jobs.processing, newId(), newId()],
  );

  const reads = () => readsOf(database.db.pool, orgId, Object.values(jobs));
  const before = await reads();
  expect(before.jobs.map((j) => j?.status)).toEqual(["pending", "pending", "processing", "pending", "done", "failed"]);
  // created 6, started 5, retrying 2, succeeded 1, failed 1.
  expect(before.events.length).toBe(15);

  // As the migration runner does: the migrations, then the source file.
  await sql(await readFile(MIGRATION, "utf8"));
  await sql(await readFile(LATER, "utf8"));
  await sql(await readFile(SOURCE, "utf8"));
  expect(await usesRowType()).toBe(true);
  expect(await reads()).toEqual(before);

  // The old and the new definition side by side, on these jobs and on jobs with every field null or set at random.
  await sql(await previousDefinition("conveyor_job_data_before"));
  await sql(
    `INSERT INTO jobs (id, org_id, type, status, payload, retries, max_retries, result, error, run_at, priority, replay_of, schedule_id,
                       cancel_requested_at, started_at, finished_at, concurrency_key, concurrency_limit, rate_limit, timeout_ms,
                       dedupe_key, debounce_key, progress, created_at, updated_at)
     SELECT gen_random_uuid(), $1, 'type ' || n, (ARRAY['pending','processing','done','failed','cancelled'])[1 + n % 5]::job_status, '{}',
            n % 4, n % 7,
            CASE WHEN n % 3 = 0 THEN jsonb_build_object('n', n, 'f', n / 7.0, 's', 'v"' || n, 'a', jsonb_build_array(n, null, true)) END,
            CASE WHEN n % 2 = 0 THEN E'error \\"' || n || E'\\" \\\\ \\n ✓' END,
            CASE WHEN n % 5 = 0 THEN now() + n * interval '1 millisecond' END, (1 + n % 10)::smallint,
            CASE WHEN n % 6 = 0 THEN gen_random_uuid() END, CASE WHEN n % 7 = 0 THEN gen_random_uuid() END,
            CASE WHEN n % 8 = 0 THEN now() END, CASE WHEN n % 2 = 1 THEN now() - n * interval '1 second' END,
            CASE WHEN n % 4 = 0 THEN now() END, CASE WHEN n % 3 = 1 THEN 'k' || n END,
            CASE WHEN n % 3 = 1 THEN (n % 100)::smallint END, CASE WHEN n % 4 = 2 THEN 'limit' END,
            CASE WHEN n % 5 = 3 THEN n * 1000 END, CASE WHEN n % 9 = 0 THEN 'dedupe ' || n END,
            CASE WHEN n % 10 = 0 THEN 'debounce' END,
            CASE WHEN n % 11 = 0 THEN jsonb_build_object('fraction', (n % 100) / 100.0, 'message', E'p\\t' || n) END,
            '2026-01-01T00:00:00Z'::timestamptz + n * interval '1 second 7 milliseconds', now() - n * interval '10 milliseconds'
       FROM generate_series(1, 2000) AS g(n)`,
    [orgId],
  );
  const { rows } = await sql(
    `SELECT count(*)::int AS jobs, count(*) FILTER (WHERE conveyor_job_data(j)::text IS DISTINCT FROM conveyor_job_data_before(j)::text)::int AS different
       FROM jobs j`,
  );
  expect(rows[0]).toEqual({ jobs: 2006, different: 0 });

  // The transitions after the migration write the events the old function would have.
  await claimJobs(database.db.pool, [{ id: jobs.pending, fence: "after-1" }]);
  await writeOutcomes(
    database.db.pool,
    [],
    [{ id: jobs.pending, fence: "after-1", status: "done", retries: 0, result: '{"a":[1]}', error: null, runAt: null }],
  );
  const after = await readEventTexts(database.db.pool, { orgId, after: 0n, limit: 1000 });
  const written = after.events.slice(before.events.length);
  expect(written.map((e) => e.type)).toEqual(["job.started", "job.succeeded"]);
  const { rows: old } = await sql(
    `SELECT e.id::text AS id, (e.data = conveyor_job_data_before(j) - 'status' - 'updated_at' - 'started_at' - 'finished_at' - 'result'
                                       || jsonb_build_object('status', e.data->'status', 'updated_at', e.data->'updated_at', 'started_at', e.data->'started_at',
                                                             'finished_at', e.data->'finished_at', 'result', e.data->'result')) AS same
       FROM events e JOIN jobs j ON j.id = e.job_id WHERE e.id = ANY($1::bigint[])`,
    [written.map((e) => e.id)],
  );
  expect(old.map((r) => r.same)).toEqual([true, true]);
});
