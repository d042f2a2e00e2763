// The claim's and the outcome's usual cases have statements of their own (docs/decisions/2026-12-07-lean-transitions.md):
// a pending job nothing could hold back is started by the plain claim, a batch of successes without log lines is
// written by the success statement. What they write must be what the whole statements write: two jobs alike but for
// a rate limit (which sends one of them through the whole claim) are claimed in one call, and ended — one alone (the
// success statement), one beside a failure (the whole outcome statement) — and their rows, events, queue rows and
// usage answer alike.
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";
import { claimJobs, findJob, insertJobs, newId, readEventTexts, writeOutcomes, type ClaimedJob } from "../src";

let database: TestDatabase;
let orgId: string;
const sql = (text: string, values: unknown[] = []) => database.db.pool.query(text, values);

beforeAll(async () => {
  database = await createTestDatabase();
  orgId = newId();
  await sql("INSERT INTO organizations (id, name) VALUES ($1, 'Lean transitions org')", [orgId]);
  await sql(`INSERT INTO rate_limits (org_id, name, "limit", period_ms) VALUES ($1, 'generous', 1000, 60000)`, [orgId]);
});
afterAll(() => database.drop());

/** What may differ between two jobs created alike: their ids, times and the rate limit one of them was created with. */
function alike(value: unknown): unknown {
  const { id, created_at, updated_at, started_at, finished_at, rate_limit, ...rest } = value as Record<string, unknown>;
  for (const [name, at] of Object.entries({ created_at, updated_at, started_at, finished_at })) rest[name] = at === null ? null : typeof at;
  return { ...rest, id: typeof id, rate_limit: rate_limit === null || rate_limit === "generous" ? "the job's" : rate_limit };
}

it("starts and ends a job in the usual case exactly as the whole claim and outcome do", async () => {
  const [plain, limited, failing] = [newId(), newId(), newId()].sort();
  const job = (id: string, rateLimit?: string) => ({
    id,
    orgId,
    type: "email",
    payloadJson: '{"to":"a@b.c"}',
    maxRetries: 0,
    createdAt: new Date(),
    rateLimit,
  });
  await insertJobs(database.db.pool, [job(plain!), job(limited!, "generous"), job(failing!)]);

  const claimed = (await claimJobs(database.db.pool, [
    { id: plain!, fence: "fence-plain" },
    { id: limited!, fence: "fence-limited" },
    { id: failing!, fence: "fence-failing" },
  ])) as ClaimedJob[];
  const byId = new Map(claimed.map((c) => [c.id, c]));
  expect(byId.size).toBe(3);
  expect({ ...byId.get(plain!), id: "" }).toEqual({ ...byId.get(limited!), id: "" });
  expect(byId.get(plain!)).toMatchObject({ previousStatus: "pending", interruptions: 0, retries: 0, payload: '{"to": "a@b.c"}' });
  // The whole claim spent a start of the limit for the limited job; the plain claim spent nothing.
  expect((await sql(`SELECT cardinality(starts) AS n FROM rate_limits WHERE org_id = $1`, [orgId])).rows[0].n).toBe(1);
  const started = await sql("SELECT id, status, fence, started_at IS NOT NULL AS started FROM jobs WHERE id = ANY($1::uuid[]) ORDER BY id", [[plain, limited]]);
  expect(started.rows).toEqual([
    { id: plain, status: "processing", fence: "fence-plain", started: true },
    { id: limited, status: "processing", fence: "fence-limited", started: true },
  ]);

  // A provider callback recorded part of the result meanwhile: both merge it.
  await sql(`UPDATE jobs SET result = '{"callback":{"code":0}}' WHERE id = ANY($1::uuid[])`, [[plain, limited]]);
  const done = (id: string) => ({
    id,
    fence: `fence-${id === plain ? "plain" : "limited"}`,
    status: "done" as const,
    retries: 0,
    result: '{"sent":true}',
    error: null,
    runAt: null,
  });
  expect(await writeOutcomes(database.db.pool, [], [done(plain!)])).toEqual(new Map([[plain, "done"]]));
  expect(
    await writeOutcomes(
      database.db.pool,
      [],
      [done(limited!), { id: failing!, fence: "fence-failing", status: "failed", retries: 0, result: null, error: "it broke", runAt: null }],
    ),
  ).toEqual(
    new Map([
      [limited, "done"],
      [failing, "failed"],
    ]),
  );
  // A stale fence changes nothing on the success statement either.
  expect(await writeOutcomes(database.db.pool, [], [done(plain!)])).toEqual(new Map());

  const [plainJob, limitedJob] = await Promise.all([findJob(database.db.pool, orgId, plain!), findJob(database.db.pool, orgId, limited!)]);
  expect(plainJob).toMatchObject({ status: "done", result: { callback: { code: 0 }, sent: true }, error: null });
  expect(alike(plainJob)).toEqual(alike(limitedJob));
  expect((await sql("SELECT count(*)::int AS n FROM job_queue WHERE job_id = ANY($1::uuid[])", [[plain, limited, failing]])).rows[0].n).toBe(0);

  const events = (await readEventTexts(database.db.pool, { orgId, after: 0n, limit: 100 })).events.map(
    (e) => JSON.parse(e.json) as { type: string; job_id: string; data: unknown },
  );
  const of = (id: string) => events.filter((e) => e.job_id === id);
  expect(of(plain!).map((e) => e.type)).toEqual(["job.created", "job.started", "job.succeeded"]);
  expect(of(plain!).map((e) => alike(e.data))).toEqual(of(limited!).map((e) => alike(e.data)));

  const usage = await sql("SELECT sum(attempts_started)::int AS attempts FROM usage_counts WHERE org_id = $1", [orgId]);
  expect(usage.rows[0].attempts).toBe(3);
  const pending = await sql("SELECT sum(pending_jobs)::int AS pending FROM stored_payload_bytes WHERE org_id = $1", [orgId]);
  expect(pending.rows[0].pending).toBe(0);
});
