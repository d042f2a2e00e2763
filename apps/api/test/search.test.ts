// Search that finds (issue 23): GET /jobs?q= with the 8-character short id the console shows, field-scoped values
// (`customer:Globex`), value prefixes (`INV-20*`, `customer:Glo*`) and plain values, each list item saying what matched —
// and another organization's jobs never found.
import { createOrg, type TestApi, type TestMember, startTwoOrgs } from "@conveyor/api/testing";
import { newId } from "@conveyor/db";
import { responseSchemas } from "../src/declarations/responses";

let api: TestApi;
let alice: TestMember;
let bob: TestMember; // another org
let close: () => Promise<void>;

beforeAll(async () => {
  ({ api, alice, bob, close } = await startTwoOrgs({ jobTypes: ["echo_test"] }));
});
afterAll(() => close());

const as = (member: TestMember) => ({ Authorization: `Bearer ${member.token}` });

async function enqueue(member: TestMember, payload: object): Promise<string> {
  const res = await api.request.post("/jobs").set(as(member)).send({ type: "echo_test", payload });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

async function search(q: string, member = alice): Promise<{ id: string; matched: string }[]> {
  const res = await api.request.get(`/jobs?limit=50&q=${encodeURIComponent(q)}`).set(as(member));
  expect(res.status).toBe(200);
  for (const item of res.body) expect(responseSchemas.JobListItem.validate(item).error).toBeUndefined();
  return res.body.map((j: { id: string; matched: string }) => ({ id: j.id, matched: j.matched }));
}

it("finds a job by the 8 characters the console shows, in either case, and says so", async () => {
  const id = await enqueue(alice, { note: "short ids" });
  const short = id.slice(-8);
  expect(await search(short)).toEqual([{ id, matched: "short_id" }]);
  expect(await search(short.toUpperCase())).toEqual([{ id, matched: "short_id" }]);
  expect(await search(id)).toEqual([{ id, matched: "id" }]);
  // Another org's job is not found by its short id.
  const theirs = await enqueue(bob, { note: "theirs" });
  expect(await search(theirs.slice(-8))).toEqual([]);
});

it("finds a value under one field with field:value, a value anywhere without, and names the field that matched", async () => {
  const customer = await enqueue(alice, { invoice: "INV-2026-001", customer: "Globex", lines: [{ sku: "A-1" }] });
  const supplier = await enqueue(alice, { invoice: "INV-2026-002", supplier: "Globex" });
  const nested = await enqueue(alice, { billing: { customer: "Globex" } });
  expect(await search("customer:Globex")).toEqual([
    { id: nested, matched: "payload.billing.customer" },
    { id: customer, matched: "payload.customer" },
  ]);
  expect(await search("billing.customer:Globex")).toEqual([{ id: nested, matched: "payload.billing.customer" }]);
  expect(await search("supplier:Globex")).toEqual([{ id: supplier, matched: "payload.supplier" }]);
  expect(await search("Globex")).toEqual([
    { id: nested, matched: "payload.billing.customer" },
    { id: supplier, matched: "payload.supplier" },
    { id: customer, matched: "payload.customer" },
  ]);
  expect(await search("sku:A-1")).toEqual([{ id: customer, matched: "payload.lines.0.sku" }]);
  expect(await search("customer:Initech")).toEqual([]);
  // Another org's job with the same value stays out.
  await enqueue(bob, { customer: "Globex" });
  expect((await search("customer:Globex")).map((j) => j.id)).not.toContain(undefined);
  expect(await search("customer:Globex")).toHaveLength(2);
});

it("still finds a value that holds a colon as the value it is", async () => {
  const id = await enqueue(alice, { url: "https://example.com/hooks/7", at: "10:30" });
  expect(await search("https://example.com/hooks/7")).toEqual([{ id, matched: "payload.url" }]);
  expect(await search("10:30")).toEqual([{ id, matched: "payload.at" }]);
});

it("says the payload matched when the value's path cannot be told, and never drops the item", async () => {
  // JavaScript writes 1e21 as "1e+21" (the search value); Postgres' text of the stored number is its digits.
  const id = await enqueue(alice, { big: 1e21 });
  expect(await search("1e+21")).toEqual([{ id, matched: "payload" }]);
});

describe("value prefixes", () => {
  it("finds every job holding a value that starts with the prefix before a trailing *, and names the path that matched", async () => {
    const carol = await createOrg(api.database.db, api.deps.config);
    const nested = await enqueue(carol, { invoice: { number: "INV-2024-001" }, customer: "Globex" });
    const top = await enqueue(carol, { ref: "INV-2025-117", customer: "Initech" });
    const listed = await enqueue(carol, { lines: [{ sku: "X" }, { sku: "INV-20-literal" }] });
    await enqueue(carol, { ref: "INV-1999-001" });
    await enqueue(carol, { ref: "inv-2024-002" }); // case is kept: not INV-20…
    await enqueue(bob, { ref: "INV-2024-999" }); // another org's
    expect(await search("INV-20*", carol)).toEqual([
      { id: listed, matched: "payload.lines.1.sku" },
      { id: top, matched: "payload.ref" },
      { id: nested, matched: "payload.invoice.number" },
    ]);
    expect(await search("INV-2024*", carol)).toEqual([{ id: nested, matched: "payload.invoice.number" }]);
    // A number's text.
    const numbered = await enqueue(carol, { amount: 123456 });
    expect(await search("1234*", carol)).toEqual([{ id: numbered, matched: "payload.amount" }]);
    // A whole value is its own prefix.
    expect(await search("INV-2024-001*", carol)).toEqual([{ id: nested, matched: "payload.invoice.number" }]);
    expect(await search("INV-2026*", carol)).toEqual([]);
  });

  it("finds a field-scoped prefix under that key or dotted path only", async () => {
    const dan = await createOrg(api.database.db, api.deps.config);
    const globex = await enqueue(dan, { customer: "Globex", note: "Glory" });
    const global = await enqueue(dan, { billing: { customer: "Global Inc" } });
    await enqueue(dan, { supplier: "Globex" });
    await enqueue(bob, { customer: "Globex" });
    expect(await search("customer:Glo*", dan)).toEqual([
      { id: global, matched: "payload.billing.customer" },
      { id: globex, matched: "payload.customer" },
    ]);
    expect(await search("billing.customer:Glob*", dan)).toEqual([{ id: global, matched: "payload.billing.customer" }]);
    expect(await search("note:Glo*", dan)).toEqual([{ id: globex, matched: "payload.note" }]);
    expect(await search("customer:Ini*", dan)).toEqual([]);
  });

  it("takes a * after fewer than 3 characters literally: a 1 or 2 character prefix would read much of the index", async () => {
    const erin = await createOrg(api.database.db, api.deps.config);
    const literal = await enqueue(erin, { code: "IN*" });
    await enqueue(erin, { code: "INV-2024-001" });
    await enqueue(erin, { code: "I-1" });
    expect(await search("IN*", erin)).toEqual([{ id: literal, matched: "payload.code" }]);
    expect(await search("I*", erin)).toEqual([]);
    expect(await search("code:IN*", erin)).toEqual([{ id: literal, matched: "payload.code" }]);
    // A value that literally ends in * is found by itself, as it starts with what precedes the *.
    const star = await enqueue(erin, { code: "ABC*" });
    expect(await search("ABC*", erin)).toEqual([{ id: star, matched: "payload.code" }]);
  });

  it("never reads quotes, backslashes, spaces, colons or tsquery operators in a value or a prefix as syntax", async () => {
    const frank = await createOrg(api.database.db, api.deps.config);
    const odd = ["it's", "ab\\cd", "back\\", "x y", "a:b", "&|!()<->:*", "'quoted'", "\\'", "Ünïcödé ✓", "  ", "*", "O'Brien & Sons"];
    const ids = new Map<string, string>();
    for (const value of odd) ids.set(value, await enqueue(frank, { value }));
    for (const value of odd) {
      expect(await search(value, frank)).toContainEqual({ id: ids.get(value)!, matched: "payload.value" });
      expect(await search(`value:${value}`, frank)).toContainEqual({ id: ids.get(value)!, matched: "payload.value" });
    }
    // The same characters in prefixes: found, or nothing, never an error.
    expect(await search("it'*", frank)).toEqual([{ id: ids.get("it's")!, matched: "payload.value" }]);
    expect(await search("ab\\*", frank)).toEqual([{ id: ids.get("ab\\cd")!, matched: "payload.value" }]);
    expect(await search("&|!*", frank)).toEqual([{ id: ids.get("&|!()<->:*")!, matched: "payload.value" }]);
    expect(await search("O'Brien &*", frank)).toEqual([{ id: ids.get("O'Brien & Sons")!, matched: "payload.value" }]);
    expect(await search("Ünï*", frank)).toEqual([{ id: ids.get("Ünïcödé ✓")!, matched: "payload.value" }]);
    expect(await search("ünï*", frank)).toEqual([]);
    expect(await search("value:O'Br*", frank)).toEqual([{ id: ids.get("O'Brien & Sons")!, matched: "payload.value" }]);
    for (const q of ["'*", "''':*", "\\\\\\*", ":*:*", "!!!*", "a & b*", "(((*", "<->*", "'\\''*", "***", "x:'*", "x:\\\\*", " * ", "   *"]) {
      const res = await api.request.get(`/jobs?limit=50&q=${encodeURIComponent(q)}`).set(as(frank));
      expect(res.status).toBe(200);
    }
  });

  it("lists a prefix more than 1,000 jobs hold newest first, by the plain condition, with the path that matched", async () => {
    const hana = await createOrg(api.database.db, api.deps.config);
    const ids = Array.from({ length: 1_005 }, () => newId());
    await api.database.db.pool.query(
      `WITH added AS (
         INSERT INTO jobs (id, org_id, type, status, payload, max_retries)
         SELECT id, $2, 'echo_test', 'done', jsonb_build_object('batch', jsonb_build_object('ref', 'BATCH-' || n)), 0 FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, n)
       )
       INSERT INTO job_search (job_id, org_id, search_values) SELECT id, $2, ARRAY['BATCH-' || n, right(id::text, 8)] FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, n)`,
      [ids, hana.orgId],
    );
    const newest = ids.slice(-50).reverse();
    expect(await search("BATCH-*", hana)).toEqual(newest.map((id) => ({ id, matched: "payload.batch.ref" })));
    expect(await search("batch.ref:BAT*", hana)).toEqual(newest.map((id) => ({ id, matched: "payload.batch.ref" })));
    expect(await search("BATCH-100*", hana)).toEqual(
      [1004, 1003, 1002, 1001, 1000, 999, 99].map((n) => ids[n]!).map((id) => ({ id, matched: "payload.batch.ref" })),
    );
  });

  it("cancels the jobs a prefix finds with POST /jobs/bulk, and no other org's", async () => {
    const gina = await createOrg(api.database.db, api.deps.config);
    const hits = [await enqueue(gina, { order: "ORD-7001" }), await enqueue(gina, { order: { ref: "ORD-7002" } })];
    const other = await enqueue(gina, { order: "ORD-8001" });
    const theirs = await enqueue(bob, { order: "ORD-7003" });
    const res = await api.request
      .post("/jobs/bulk")
      .set(as(gina))
      .send({ action: "cancel", filter: { q: "ORD-70*" } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ action: "cancel", matched: 2, affected: 2, has_more: false });
    const statuses = async (ids: string[]) =>
      (await api.database.db.pool.query<{ status: string }>("SELECT status FROM jobs WHERE id = ANY($1::uuid[]) ORDER BY id", [ids])).rows.map((r) => r.status);
    expect(await statuses(hits)).toEqual(["cancelled", "cancelled"]);
    expect(await statuses([other, theirs])).toEqual(["pending", "pending"]);
  });
});

it("keeps items without a search as they were", async () => {
  const res = await api.request.get("/jobs?limit=1").set(as(alice));
  expect(res.body[0]).not.toHaveProperty("matched");
});
