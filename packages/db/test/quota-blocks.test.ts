// Issue 36's cheaper quotas and metering, against real Postgres: payload bytes counted without a round trip equal what
// the creation statement counts; a quota block is granted only far from the limit, counted as used by the exact check, and
// given back near it; each backend counts usage in a stripe of its own.
import pg from "pg";
import {
  enforceQuotas,
  inTransaction,
  insertJobs,
  jsonbTextBytes,
  newId,
  NO_QUOTAS,
  QuotaExceededError,
  releaseQuotaBlocks,
  renewQuotaBlock,
  type QuotaLimits,
} from "@conveyor/db";
import { createTestDatabase, type TestDatabase } from "@conveyor/testkit";

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

async function newOrg(): Promise<string> {
  const id = newId();
  await database.db.prisma.organization.create({ data: { id, name: "Quota blocks" } });
  return id;
}

const job = (orgId: string, payloadJson: string) => ({ id: newId(), orgId, type: "webhook", payloadJson, maxRetries: 0, createdAt: new Date() });

describe("jsonbTextBytes", () => {
  const payloads = [
    JSON.stringify({ url: "https://example.com/hooks/orders", payload: { order: 42, total: "19.90" } }),
    JSON.stringify({
      text: 'quote " backslash \\ tab \t newline \n bell \u0007',
      accents: "é日本😀",
      list: [1, -2.5, 0.001, [], {}],
      nothing: null,
      yes: true,
    }),
    JSON.stringify({ big: 1e21, small: 1.5e-7, tiny: -5e-324, max: Number.MAX_VALUE, negative: -0.25, zero: 0 }),
    '{ "spaced" : [ 1 , 2 ] ,\n "escaped": "\\u00e9\\/" , "exp": 12E-1, "neg0": -0.0, "hundred": 1.230e2 }',
    "[]",
    '"a string"',
    "-0",
  ];

  it.each(payloads)("counts %s as Postgres does", async (payloadJson) => {
    const { rows } = await database.db.pool.query<{ n: number }>("SELECT octet_length($1::jsonb::text)::int AS n", [payloadJson]);
    expect(jsonbTextBytes(payloadJson)).toBe(rows[0]!.n);
  });

  it("counts a repeated key each time (jsonb keeps one): never less than Postgres", async () => {
    const { rows } = await database.db.pool.query<{ n: number }>(`SELECT octet_length('{"a":1,"a":2}'::jsonb::text)::int AS n`);
    expect(jsonbTextBytes('{"a":1,"a":2}')).toBeGreaterThan(rows[0]!.n);
  });

  it("equals what the creation statement adds to the organization's stored bytes", async () => {
    const orgId = await newOrg();
    await insertJobs(
      database.db.pool,
      payloads.map((p) => job(orgId, p)),
    );
    const { rows } = await database.db.pool.query<{ bytes: number }>("SELECT sum(bytes)::int AS bytes FROM stored_payload_bytes WHERE org_id = $1", [orgId]);
    expect(rows[0]!.bytes).toBe(payloads.reduce((sum, p) => sum + jsonbTextBytes(p), 0));
  });
});

describe("quota blocks", () => {
  const limits: QuotaLimits = { ...NO_QUOTAS, jobs_per_day: 10_000, pending_max: 100_000 };
  const none = { jobs: 0, pendingJobs: 0, bytes: 0 };

  it("grants a 32nd of the room left, counts it as used in the exact check, and gives the block back near the limit", async () => {
    const orgId = await newOrg();
    const [a, b] = [newId(), newId()];
    const at = new Date();
    expect(await renewQuotaBlock(database.db.pool, orgId, a, limits, at, none)).toEqual({ jobs: 312, pendingJobs: 3125, bytes: 0 });
    // B's room leaves out A's block.
    expect(await renewQuotaBlock(database.db.pool, orgId, b, limits, at, none)).toEqual({ jobs: Math.floor((10_000 - 312) / 32), pendingJobs: 3027, bytes: 0 });
    // 9,400 jobs stored: with both blocks (312 + 302) counted, the next one passes the day's 10,000.
    const orgJobs = Array.from({ length: 9_386 }, () => job(orgId, "{}"));
    await insertJobs(database.db.pool, orgJobs);
    const check = (n: number) =>
      inTransaction(database.db.pool, async (tx) => {
        await insertJobs(
          tx,
          Array.from({ length: n }, () => job(orgId, "{}")),
        );
        await enforceQuotas(tx, orgId, limits, at);
      });
    await expect(check(1)).rejects.toMatchObject({ quota: "jobs_per_day" });
    await expect(check(1)).rejects.toBeInstanceOf(QuotaExceededError);
    // A renews with 100 of its block left: the room (10,000 − 9,386 − 302 − 100 = 212) is too small for a block of
    // at least 64, so A's block is given back whole — then there is room for exactly 312 through the exact check.
    expect(await renewQuotaBlock(database.db.pool, orgId, a, limits, at, { jobs: 100, pendingJobs: 100, bytes: 0 })).toBeNull();
    await expect(check(313)).rejects.toMatchObject({ quota: "jobs_per_day" });
    await check(312);
    // B stops cleanly: its block is given back.
    await releaseQuotaBlocks(database.db.pool, b);
    const { rows } = await database.db.pool.query("SELECT count(*)::int AS n FROM quota_blocks WHERE org_id = $1", [orgId]);
    expect(rows[0].n).toBe(0);
  });

  it("keeps what a holder left unspent of the same day's block, and holds nothing of a quota not in force", async () => {
    const orgId = await newOrg();
    const holder = newId();
    const at = new Date();
    const periods: QuotaLimits = { ...NO_QUOTAS, jobs_per_month: 1_000_000 };
    expect(await renewQuotaBlock(database.db.pool, orgId, holder, periods, at, none)).toEqual({ jobs: 4096, pendingJobs: 0, bytes: 0 });
    expect(await renewQuotaBlock(database.db.pool, orgId, holder, periods, at, { jobs: 10, pendingJobs: -5, bytes: 7 })).toEqual({
      jobs: 4096 + 10,
      pendingJobs: 0,
      bytes: 0,
    });
  });
});

describe("usage stripes", () => {
  it("gives each backend a stripe of its own, kept when the transaction that took it rolls back", async () => {
    const clients = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        return client;
      }),
    );
    try {
      const stripe = async (client: pg.Client) => Number((await client.query<{ s: number }>("SELECT conveyor_usage_stripe() AS s")).rows[0]!.s);
      await clients[0]!.query("BEGIN");
      const first = await stripe(clients[0]!);
      await clients[0]!.query("ROLLBACK");
      expect(await stripe(clients[0]!)).toBe(first);
      const stripes = await Promise.all(clients.map(stripe));
      expect(new Set(stripes).size).toBe(clients.length);
      expect(stripes.every((s) => s >= 0 && s < 64)).toBe(true);
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });
});
