// The SQL that builds a job's JSON (packages/db/sql/functions/conveyor_job_json.sql) names the fields of
// @conveyor/contracts/job-shape: the list item in JOB_ITEM_FIELDS' order, an event's data JOB_EVENT_FIELDS, the job's
// detail JOB_DETAIL_FIELDS in order. A field added to one and not the others fails here.
import { JOB_DETAIL_FIELDS, JOB_EVENT_FIELDS, JOB_ITEM_FIELDS } from "@conveyor/contracts";
import { createTestDatabase, insertOrgs, type TestDatabase } from "@conveyor/testkit";
import { findJob, insertJobs, newId } from "../src";

let database: TestDatabase;
let orgId: string;
const jobId = newId();

beforeAll(async () => {
  database = await createTestDatabase();
  [orgId] = await insertOrgs(database.db, "shape");
  await insertJobs(database.db.pool, [{ id: jobId, orgId, type: "email", payloadJson: '{"to":"a@b.c"}', maxRetries: 2, createdAt: new Date() }]);
});
afterAll(() => database.drop());

async function keysOf(sql: string): Promise<string[]> {
  const { rows } = await database.db.pool.query<{ json: string }>(`SELECT ${sql}::text AS json FROM jobs j WHERE j.id = $1`, [jobId]);
  return Object.keys(JSON.parse(rows[0]!.json) as object);
}

describe("a job's JSON", () => {
  it("as listed is conveyor_job_item: JOB_ITEM_FIELDS in their order", async () => {
    expect(await keysOf("conveyor_job_item(j)")).toEqual([...JOB_ITEM_FIELDS]);
  });

  it("in an event is conveyor_job_data: JOB_EVENT_FIELDS", async () => {
    expect((await keysOf("conveyor_job_data(j)")).sort()).toEqual([...JOB_EVENT_FIELDS].sort());
    const { rows } = await database.db.pool.query<{ data: object }>("SELECT data FROM events WHERE job_id = $1", [jobId]);
    expect(Object.keys(rows[0]!.data).sort()).toEqual([...JOB_EVENT_FIELDS].sort());
  });

  it("in detail is JOB_DETAIL_FIELDS in their order", async () => {
    expect(Object.keys((await findJob(database.db.pool, orgId, jobId))!)).toEqual([...JOB_DETAIL_FIELDS]);
  });
});
