// Search that finds (issue 23): GET /jobs?q= with the 8-character short id the console shows, field-scoped values
// (`customer:Globex`) and plain values, each list item saying what matched — and another organization's jobs never found.
import { createOrg, createSecondOrg, startTestApi, type SecondOrg, type TestApi, type TestMember } from "@conveyor/testkit/api";
import { responseSchemas } from "../src/openapi/responses";

let api: TestApi;
let alice: TestMember;
let bob: TestMember; // another org
let second: SecondOrg;

beforeAll(async () => {
  api = await startTestApi();
  alice = await createOrg(api.database.db, api.deps.config);
  bob = await createOrg(api.database.db, api.deps.config);
  second = await createSecondOrg(api.database.db);
  await api.database.db.pool.query("INSERT INTO job_types (name) VALUES ('echo_test')");
  await second.watch(api.get);
});
afterAll(async () => {
  await second.expectUntouched({ Authorization: `Bearer ${alice.token}` });
  await api.close();
});

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

it("keeps items without a search as they were", async () => {
  const res = await api.request.get("/jobs?limit=1").set(as(alice));
  expect(res.body[0]).not.toHaveProperty("matched");
});
