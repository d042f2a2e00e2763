// The creation statement (job-machine/create.ts) writes the same thing whichever way it is built: a batch without
// dedupe keys runs without the keys' CTEs, the job.created event's JSON is built in the insert's RETURNING from the new
// row's columns, and a job's search values come as an array literal made in JS (searchLiteral) instead of JSON
// unnested per job. Each is checked against what the longer way gives: the event data against conveyor_job_data of the
// stored row, the search values against the JSON the statement used to parse, a plain job against one created beside a
// dedupe key.
import { searchValues } from "@conveyor/contracts";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";
import { insertJobs, newId } from "../src";
import { searchLiteral } from "../src/job-machine/create";

let database: TestDatabase;
let orgId: string;
const sql = (text: string, values: unknown[] = []) => database.db.pool.query(text, values);

beforeAll(async () => {
  database = await createTestDatabase();
  orgId = newId();
  await sql("INSERT INTO organizations (id, name) VALUES ($1, 'Creation statement org')", [orgId]);
  await sql(`INSERT INTO rate_limits (org_id, name, "limit", period_ms) VALUES ($1, 'slow', 10, 60000)`, [orgId]);
});
afterAll(() => database.drop());

/** Values array_in reads as syntax unless quoted and escaped. */
const awkward = {
  quote: 'say "hi"',
  backslash: "C:\\temp\\",
  both: '\\"',
  braces: "{a,b}",
  comma: "a, b",
  spaces: "  padded  ",
  null: "NULL",
  empty: "",
  unicode: "naïve ☃ 日本",
  number: 12.5,
  nested: [{ deep: "x" }, "NuLl", true, null],
};

it("stores the search values the JSON of searchValues held, with the short id, for awkward strings", async () => {
  const id = newId();
  await insertJobs(database.db.pool, [
    { id, orgId, type: "email", payloadJson: JSON.stringify(awkward), payload: awkward, maxRetries: 0, createdAt: new Date() },
  ]);
  const { rows } = await sql(
    `SELECT s.search_values,
            ARRAY(SELECT jsonb_array_elements_text($2::jsonb)) || right(s.job_id::text, 8) AS by_json
       FROM job_search s WHERE s.job_id = $1`,
    [id, JSON.stringify(searchValues(awkward))],
  );
  expect(rows[0].search_values).toEqual(rows[0].by_json);
  expect(rows[0].search_values).toEqual([...searchValues(awkward), id.slice(-8)]);
});

it("writes the short id of an id in any spelling Postgres reads as it writes it", () => {
  const id = "01A25198-FED1-73A9-A97B-F5E98BDC66DD";
  expect(searchLiteral(id, [])).toBe('{"8bdc66dd"}');
  expect(searchLiteral(`{${id}}`, ['a"b', "c\\d"])).toBe('{"a\\"b","c\\\\d","8bdc66dd"}');
});

it("announces each job as conveyor_job_data of its stored row, with or without a dedupe key in the batch", async () => {
  const runAt = new Date(Date.now() + 3_600_000);
  const full = {
    orgId,
    type: "email",
    payloadJson: '{"to":"a@b.c"}',
    maxRetries: 3,
    createdAt: new Date(),
    priority: 8,
    runAt,
    concurrencyKey: "tenant-1",
    concurrencyLimit: 2,
    rateLimit: "slow",
    timeoutMs: 5000,
    debounceKey: null,
  };
  const plainBatch = [newId(), newId()];
  const dedupeBatch = [newId(), newId()];
  await insertJobs(database.db.pool, [
    { ...full, id: plainBatch[0]! },
    { id: plainBatch[1]!, orgId, type: "email", payloadJson: "{}", maxRetries: 0, createdAt: new Date() },
  ]);
  await insertJobs(database.db.pool, [
    { ...full, id: dedupeBatch[0]! },
    { id: dedupeBatch[1]!, orgId, type: "email", payloadJson: "{}", maxRetries: 0, createdAt: new Date(), dedupe: { key: `k-${newId()}`, seconds: 60 } },
  ]);
  const { rows } = await sql(
    `SELECT j.id, e.type, e.data, conveyor_job_data(j) AS expected, q.due_at, q.priority AS queue_priority, q.concurrency_key AS queue_key
       FROM jobs j JOIN events e ON e.job_id = j.id JOIN job_queue q ON q.job_id = j.id
      WHERE j.id = ANY($1::uuid[]) ORDER BY j.id`,
    [[...plainBatch, ...dedupeBatch]],
  );
  expect(rows).toHaveLength(4);
  for (const row of rows) {
    expect(row.type).toBe("job.created");
    expect(row.data).toEqual(row.expected);
    // Byte for byte: the stored jsonb's text is the text of the expected one.
  }
  const texts = await sql(
    `SELECT e.data::text = conveyor_job_data(j)::text AS same FROM jobs j JOIN events e ON e.job_id = j.id WHERE j.id = ANY($1::uuid[])`,
    [[...plainBatch, ...dedupeBatch]],
  );
  expect(texts.rows.map((r) => r.same)).toEqual([true, true, true, true]);
  // The full job of each batch: the same event but for its id and times, the same queue row.
  const byId = new Map(rows.map((r) => [r.id, r]));
  const shape = (id: string) => {
    const { data, due_at, queue_priority, queue_key } = byId.get(id)!;
    const { id: _id, created_at: _c, updated_at: _u, ...rest } = data;
    return { rest, due_at: due_at.toISOString(), queue_priority, queue_key };
  };
  expect(shape(plainBatch[0]!)).toEqual(shape(dedupeBatch[0]!));
  expect(shape(plainBatch[0]!)).toMatchObject({ due_at: runAt.toISOString(), queue_priority: 8, queue_key: "tenant-1" });
});

it("announces nothing and indexes nothing for an internal job", async () => {
  const id = newId();
  await insertJobs(database.db.pool, [{ id, orgId, type: "_internal", payloadJson: '{"a":"b"}', maxRetries: 0, createdAt: new Date() }]);
  const { rows } = await sql(
    `SELECT (SELECT count(*)::int FROM events WHERE job_id = $1) AS events, (SELECT count(*)::int FROM job_search WHERE job_id = $1) AS search,
            (SELECT count(*)::int FROM job_queue WHERE job_id = $1) AS queued`,
    [id],
  );
  expect(rows[0]).toEqual({ events: 0, search: 0, queued: 1 });
});

it("counts jobs created and payload bytes as the insert trigger did: by UTC day and type, internal and refused jobs not at all", async () => {
  const org = newId();
  await sql("INSERT INTO organizations (id, name) VALUES ($1, 'Counted org')", [org]);
  const yesterday = new Date(Date.now() - 86_400_000);
  const key = `k-${newId()}`;
  const job = (type: string, payloadJson: string, createdAt = new Date(), dedupe?: { key: string; seconds: number }) => ({
    id: newId(),
    orgId: org,
    type,
    payloadJson,
    maxRetries: 0,
    createdAt,
    dedupe,
  });
  await insertJobs(database.db.pool, [
    job("email", '{"to":"a@b.c","n":[1,2,3]}'),
    job("email", '{"b":1,"a":"ünïcode"}', yesterday),
    job("sms", "{}"),
    job("_internal", '{"not":"counted"}'),
  ]);
  // The second job holding the same key in the next batch is refused: not inserted, not counted.
  await insertJobs(database.db.pool, [job("sms", '{"x":true}', new Date(), { key, seconds: 3600 })]);
  expect((await insertJobs(database.db.pool, [job("sms", '{"x":false}', new Date(), { key, seconds: 3600 })])).size).toBe(1);
  // What the trigger's queries derived, read from the stored jobs.
  const expected = await sql(
    `SELECT (created_at AT TIME ZONE 'UTC')::date::text AS day, type, count(*)::int AS jobs, sum(octet_length(payload::text))::int AS bytes
       FROM jobs WHERE org_id = $1 AND left(type, 1) <> '_' GROUP BY 1, 2 ORDER BY 1, 2`,
    [org],
  );
  const counted = await sql(
    `SELECT day::text AS day, type, sum(jobs_created)::int AS jobs, sum(payload_bytes)::int AS bytes
       FROM usage_counts WHERE org_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
    [org],
  );
  expect(counted.rows).toEqual(expected.rows);
  expect(expected.rows.map((r) => r.jobs)).toEqual([1, 1, 2]);
  const stored = await sql("SELECT sum(bytes)::int AS bytes, sum(pending_jobs)::int AS pending FROM stored_payload_bytes WHERE org_id = $1", [org]);
  expect(stored.rows[0]).toEqual({ bytes: expected.rows.reduce((sum, r) => sum + r.bytes, 0), pending: 4 });
  // Counted once: no trigger adds a second count.
  expect((await sql("SELECT count(*)::int AS n FROM pg_trigger WHERE tgrelid = 'jobs'::regclass AND tgname = 'conveyor_usage_jobs_inserted'")).rows[0].n).toBe(
    0,
  );
});
