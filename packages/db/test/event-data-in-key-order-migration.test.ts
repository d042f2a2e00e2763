// The migration that lists an event's job fields in jsonb's own key order and makes conveyor_failure_group PL/pgSQL
// (docs/decisions/2026-12-07-event-data-in-key-order.md, issue 43) changes nothing stored or read: run on a database of
// the shape before it (the type in the API's field order, the function as its source file had it, the SQL failure
// group) holding jobs in every state with their events, every read answers as before; the new function gives the very
// jsonb (the same text and the same stored size) as the two definitions before it for jobs with every field null or
// set, and the new failure group the same text as the old one for every error, stored and computed.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";
import { claimJobs, newId, readEventTexts, writeOutcomes } from "../src";
import { jobThrough, readsOf, type Move } from "./support/job-through";

const MIGRATIONS = path.resolve(__dirname, "../../../prisma/migrations");
const MIGRATION = path.join(MIGRATIONS, "20261207160000_event_data_in_key_order/migration.sql");
const SOURCES = ["conveyor_job_json.sql", "conveyor_failure_group.sql"].map((file) => path.resolve(__dirname, "../sql/functions", file));
/** The type in the API's field order, as the migration that added it wrote it. */
const ROW_TYPE_MIGRATION = path.join(MIGRATIONS, "20261207033400_event_data_by_row_type/migration.sql");
/** The migration that last defined conveyor_job_data with jsonb_build_object. */
const BUILD_OBJECT_MIGRATION = path.join(MIGRATIONS, "20261128061603_job_progress_output_public_tokens/migration.sql");

/** conveyor_job_data as its source file had it before this migration (the file's text at 419bef9). */
const ROW_TYPE_FUNCTION = `CREATE OR REPLACE FUNCTION conveyor_job_data(j jobs) RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT to_jsonb(ROW(
    j.id, j.type, j.status, j.retries, j.max_retries,
    conveyor_iso(j.created_at), conveyor_iso(j.updated_at), conveyor_iso(j.run_at),
    j.priority, j.replay_of, j.schedule_id, conveyor_iso(j.cancel_requested_at),
    j.concurrency_key, j.concurrency_limit, j.rate_limit, j.timeout_ms, j.dedupe_key, j.debounce_key,
    conveyor_iso(j.started_at), conveyor_iso(j.finished_at),
    j.result, j.error, j.progress)::conveyor_job_data_fields)
$$;`;
/** conveyor_failure_group as a SQL function (its file at 419bef9, and migration 20261126050000_failure_groups). */
const SQL_FAILURE_GROUP = `CREATE OR REPLACE FUNCTION conveyor_failure_group(type text, error text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT left(md5(type || E'\\n' || conveyor_normalise_error(error)), 16)
$$;`;

let database: TestDatabase;
let orgId: string;
const sql = (text: string, values: unknown[] = []) => database.db.pool.query(text, values);

const rowTypeFields = async () =>
  (
    await sql(
      `SELECT string_agg(a.attname, ',' ORDER BY a.attnum) AS names FROM pg_attribute a JOIN pg_type t ON t.typrelid = a.attrelid
        WHERE t.typname = 'conveyor_job_data_fields' AND a.attnum > 0 AND NOT a.attisdropped`,
    )
  ).rows[0]!.names as string;
const failureGroupLanguage = async () =>
  (await sql("SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.proname = 'conveyor_failure_group'")).rows[0]!.lanname as string;

/** A job written by the transitions as they are, created with `extra`; its failures' error needs escaping and normalising. */
const job = (moves: Move[], error = 'it broke: "quoted" \\ back\\slash, tab\t, newline\n, ünïcødé ✓ 42 for a@b.example') =>
  jobThrough(database.db.pool, orgId, moves, { result: '{"sent":true,"nested":{"list":[1,2.5,"x"],"none":null}}', error });

beforeAll(async () => {
  database = await createTestDatabase();
  orgId = newId();
  await sql("INSERT INTO organizations (id, name) VALUES ($1, 'Event data in key order org')", [orgId]);
  // The shape before the migration: the type in the API's order with the function using it, the SQL failure group.
  await sql("DROP TYPE conveyor_job_data_fields");
  await sql(await readFile(ROW_TYPE_MIGRATION, "utf8"));
  await sql(ROW_TYPE_FUNCTION);
  await sql(SQL_FAILURE_GROUP);
});
afterAll(() => database.drop());

it("keeps every read and every stored failure group as they were, and builds the same jsonb as both definitions before it", async () => {
  expect(await rowTypeFields()).toMatch(/^id,type,status,retries,max_retries,created_at,/);
  expect(await failureGroupLanguage()).toBe("sql");
  const jobs = {
    pending: await job([]),
    processing: await job(["start"]),
    retrying: await job(["start", "retry"]),
    done: await job(["start", "done"]),
    failed: await job(["start", "retry", "start", "fail"]),
    failedOtherwise: await job(["start", "fail"], "timeout after 30000 ms talking to 10.0.0.1 for order 'x-17' (`db`)"),
  };
  await sql(
    `UPDATE jobs SET progress = '{"fraction":0.5,"message":"half \\"way\\"","at":"2026-12-07T00:00:00.000Z"}', cancel_requested_at = now(),
                     replay_of = $2, schedule_id = $3, debounce_key = 'debounced', started_at = now() WHERE id = $1`,
    [jobs.processing, newId(), newId()],
  );
  const reads = () => readsOf(database.db.pool, orgId, Object.values(jobs));
  const groups = async () => (await sql("SELECT id, failure_group FROM jobs ORDER BY id")).rows;
  const before = await reads();
  const groupsBefore = await groups();
  expect(before.events.length).toBe(17); // created 6, started 6, retrying 2, succeeded 1, failed 2
  expect(groupsBefore.filter((r) => r.failure_group !== null).length).toBe(3);

  // As the migration runner does: the migration, then the source files.
  await sql(await readFile(MIGRATION, "utf8"));
  for (const source of SOURCES) await sql(await readFile(source, "utf8"));
  expect(await rowTypeFields()).toBe(
    "id,type,error,result,run_at,status,retries,priority,progress,replay_of,created_at,dedupe_key,rate_limit,started_at," +
      "timeout_ms,updated_at,finished_at,max_retries,schedule_id,debounce_key,concurrency_key,concurrency_limit,cancel_requested_at",
  );
  expect(await failureGroupLanguage()).toBe("plpgsql");
  expect(await reads()).toEqual(before);
  expect(await groups()).toEqual(groupsBefore);

  // The definitions before it side by side: jsonb_build_object, and the row type in the API's order under other names.
  const buildObject = /CREATE OR REPLACE FUNCTION conveyor_job_data\(j jobs\)[\s\S]*?\n\$\$;/.exec(await readFile(BUILD_OBJECT_MIGRATION, "utf8"))?.[0];
  if (!buildObject) throw new Error("the jsonb_build_object definition of conveyor_job_data was not found");
  await sql(buildObject.replace("FUNCTION conveyor_job_data(", "FUNCTION conveyor_job_data_built("));
  await sql((await readFile(ROW_TYPE_MIGRATION, "utf8")).replace("TYPE conveyor_job_data_fields ", "TYPE conveyor_job_data_fields_api_order "));
  await sql(
    ROW_TYPE_FUNCTION.replace("FUNCTION conveyor_job_data(", "FUNCTION conveyor_job_data_api_order(").replace(
      "::conveyor_job_data_fields)",
      "::conveyor_job_data_fields_api_order)",
    ),
  );
  await sql(SQL_FAILURE_GROUP.replace("FUNCTION conveyor_failure_group(", "FUNCTION conveyor_failure_group_sql("));

  await sql(
    `INSERT INTO jobs (id, org_id, type, status, payload, retries, max_retries, result, error, run_at, priority, replay_of, schedule_id,
                       cancel_requested_at, started_at, finished_at, concurrency_key, concurrency_limit, rate_limit, timeout_ms,
                       dedupe_key, debounce_key, progress, created_at, updated_at)
     SELECT gen_random_uuid(), $1, 'type ' || n % 13, (ARRAY['pending','processing','done','failed','cancelled'])[1 + n % 5]::job_status, '{}',
            n % 4, n % 7,
            CASE WHEN n % 3 = 0 THEN jsonb_build_object('n', n, 'f', n / 7.0, 's', 'v"' || n, 'a', jsonb_build_array(n, null, true)) END,
            CASE n % 6 WHEN 0 THEN NULL WHEN 1 THEN E'error \\"' || n || E'\\" \\\\ \\n ✓'
                       WHEN 2 THEN 'user ' || gen_random_uuid() || ' not found, mail u' || n || '@example.com'
                       WHEN 3 THEN E'value ''v' || n || E''' can''t be \`parsed\` at 1.' || n || '.3'
                       WHEN 4 THEN 'token re_8Gh2kLm' || n || E' expired\\t  after   ' || n || ' s'
                       ELSE '' END,
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
    `SELECT count(*)::int AS jobs,
            count(*) FILTER (WHERE conveyor_job_data(j)::text IS DISTINCT FROM conveyor_job_data_built(j)::text
                                OR conveyor_job_data(j)::text IS DISTINCT FROM conveyor_job_data_api_order(j)::text
                                OR pg_column_size(conveyor_job_data(j)) <> pg_column_size(conveyor_job_data_built(j))
                                OR pg_column_size(conveyor_job_data(j)) <> pg_column_size(conveyor_job_data_api_order(j)))::int AS different_data,
            count(*) FILTER (WHERE j.failure_group IS NOT NULL)::int AS grouped,
            count(*) FILTER (WHERE j.failure_group IS DISTINCT FROM conveyor_failure_group_sql(j.type, j.error)
                                OR conveyor_failure_group(j.type, j.error) IS DISTINCT FROM conveyor_failure_group_sql(j.type, j.error))::int AS different_groups
       FROM jobs j`,
  );
  expect(rows[0]).toEqual({ jobs: 2006, different_data: 0, grouped: 3 + 1667, different_groups: 0 });

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
    `SELECT (e.data::text = (conveyor_job_data_api_order(j) - 'status' - 'updated_at' - 'started_at' - 'finished_at' - 'result'
                             || jsonb_build_object('status', e.data->'status', 'updated_at', e.data->'updated_at', 'started_at', e.data->'started_at',
                                                   'finished_at', e.data->'finished_at', 'result', e.data->'result'))::text) AS same
       FROM events e JOIN jobs j ON j.id = e.job_id WHERE e.id = ANY($1::bigint[]) ORDER BY e.id`,
    [written.map((e) => e.id)],
  );
  expect(old.map((r) => r.same)).toEqual([true, true]);
});
