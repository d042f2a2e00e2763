// Saved views of the jobs list (issue 38): a person saves, lists and deletes their own named GET /jobs filters. The
// filter is validated like GET /jobs's query, the name's length and uniqueness are checked, a person keeps at most
// SAVED_VIEWS_PER_USER (also when saves race), nobody sees or deletes another person's view (404, like an unknown id,
// also across organizations), an API key is refused, and a removed member's views go with the membership.
import { createApiKey, addMember, createOrg, startTestApi, type TestApi, type TestMember } from "@conveyor/api/testing";
import { responseSchemas } from "../src/declarations/responses";
import { SAVED_VIEWS_PER_USER } from "../src/services/saved-views";
import { expectError } from "./support/expect-error";

let api: TestApi;
let owner: TestMember;
let colleague: TestMember;
let other: TestMember;

beforeAll(async () => {
  api = await startTestApi({ API_RATE_LIMIT_PER_SEC: "0" });
  owner = await createOrg(api.database.db, api.deps.config);
  colleague = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
  other = await createOrg(api.database.db, api.deps.config);
});
afterAll(() => api.close());

const as = (m: TestMember) => ({ Authorization: `Bearer ${m.token}` });
const save = (by: TestMember, body: object) => api.request.post("/saved-views").set(as(by)).send(body);
const list = async (by: TestMember) => {
  const res = await api.request.get("/saved-views").set(as(by));
  expect(res.status).toBe(200);
  for (const view of res.body) expect(responseSchemas.SavedView.validate(view).error).toBeUndefined();
  return res.body as { id: string; name: string; filter: Record<string, string> }[];
};

describe("saved views", () => {
  it("saves the list's filters under a name, as GET /jobs reads them, lists them by name and deletes one", async () => {
    const failed = await save(owner, { name: "  Failed webhooks  ", filter: { status: "failed", type: "webhook", created_after: "2026-11-21" } });
    expect(failed.status).toBe(201);
    expect(responseSchemas.SavedView.validate(failed.body).error).toBeUndefined();
    // Trimmed, and the filter as GET /jobs would use it (the date as an instant).
    expect(failed.body).toMatchObject({ name: "Failed webhooks", filter: { status: "failed", type: "webhook", created_after: "2026-11-21T00:00:00.000Z" } });
    const due = await save(owner, { name: "delayed", filter: { due: "later" } });
    expect(due.status).toBe(201);

    expect((await list(owner)).map((v) => v.name)).toEqual(["delayed", "Failed webhooks"]);
    // The filter opens a valid list.
    const jobs = await api.request.get("/jobs").query(failed.body.filter).set(as(owner));
    expect(jobs.status).toBe(200);

    expect((await api.request.delete(`/saved-views/${due.body.id}`).set(as(owner))).status).toBe(204);
    expect((await list(owner)).map((v) => v.name)).toEqual(["Failed webhooks"]);
    expectError(await api.request.delete(`/saved-views/${due.body.id}`).set(as(owner)), 404, "not_found");
  });

  it("keeps each person's views their own: a colleague and another organization neither see nor delete them", async () => {
    const mine = await save(owner, { name: "mine only", filter: { status: "pending" } });
    expect(mine.status).toBe(201);
    expect((await list(colleague)).map((v) => v.id)).not.toContain(mine.body.id);
    expect((await list(other)).map((v) => v.id)).not.toContain(mine.body.id);
    expectError(await api.request.delete(`/saved-views/${mine.body.id}`).set(as(colleague)), 404, "not_found");
    expectError(await api.request.delete(`/saved-views/${mine.body.id}`).set(as(other)), 404, "not_found");
    expectError(await api.request.delete("/saved-views/not-a-view").set(as(owner)), 404, "not_found");
    // The same name is free for someone else.
    expect((await save(colleague, { name: "mine only", filter: { status: "failed" } })).status).toBe(201);
    expect((await list(owner)).map((v) => v.id)).toContain(mine.body.id);
  });

  it("refuses bad names and filters with docs/reference/http.md#errors's body, naming the path", async () => {
    const cases: [object, string][] = [
      [{ filter: { status: "failed" } }, "name"],
      [{ name: "", filter: { status: "failed" } }, "name"],
      [{ name: "   ", filter: { status: "failed" } }, "name"],
      [{ name: "x".repeat(81), filter: { status: "failed" } }, "name"],
      [{ name: "two\nlines", filter: { status: "failed" } }, "name"],
      [{ name: "no filter" }, "filter"],
      [{ name: "empty filter", filter: {} }, "filter"],
      [{ name: "bad status", filter: { status: "completed" } }, "filter.status"],
      [{ name: "bad date", filter: { created_after: "2026-02-31" } }, "filter.created_after"],
      [{ name: "unknown filter", filter: { colour: "red" } }, "filter.colour"],
      [{ name: "not strings", filter: { status: ["failed"] } }, "filter.status"],
      [{ name: "extra", filter: { status: "failed" }, user_id: colleague.userId }, "user_id"],
    ];
    for (const [body, path] of cases) {
      const res = await save(owner, body);
      expectError(res, 400, "validation_failed");
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    expect((await save(owner, { name: "x".repeat(80), filter: { q: "INV-20*" } })).status).toBe(201);
  });

  it("refuses a name the person already uses (409 saved_view_name_taken)", async () => {
    expect((await save(colleague, { name: "twice", filter: { type: "webhook" } })).status).toBe(201);
    expectError(await save(colleague, { name: "twice", filter: { type: "send_email" } }), 409, "saved_view_name_taken");
  });

  it("caps a person's views, also when saves race for the last places", async () => {
    const person = await addMember(api.database.db, api.deps.config, owner.orgId, "admin");
    for (let i = 0; i < SAVED_VIEWS_PER_USER - 3; i++) expect((await save(person, { name: `view ${i}`, filter: { type: "webhook" } })).status).toBe(201);
    const racing = await Promise.all(Array.from({ length: 10 }, (_, i) => save(person, { name: `race ${i}`, filter: { status: "failed" } })));
    expect(racing.filter((r) => r.status === 201)).toHaveLength(3);
    for (const refused of racing.filter((r) => r.status !== 201)) expectError(refused, 409, "saved_view_limit");
    expect(await list(person)).toHaveLength(SAVED_VIEWS_PER_USER);
    // Deleting one frees a place.
    const [first] = await list(person);
    await api.request.delete(`/saved-views/${first!.id}`).set(as(person)).expect(204);
    expect((await save(person, { name: "again", filter: { status: "done" } })).status).toBe(201);
  });

  it("is for people: an API key is refused (403), no credential is 401", async () => {
    const key = await createApiKey(api.database.db, owner);
    expectError(await api.request.get("/saved-views").set("X-API-Key", key.key), 403, "forbidden");
    expectError(
      await api.request
        .post("/saved-views")
        .set("X-API-Key", key.key)
        .send({ name: "k", filter: { status: "failed" } }),
      403,
      "forbidden",
    );
    expectError(await api.request.get("/saved-views"), 401, "unauthorized");
  });

  it("removes a member's views with the membership", async () => {
    const leaving = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
    expect((await save(leaving, { name: "mine", filter: { status: "failed" } })).status).toBe(201);
    await api.request.delete(`/org/members/${leaving.userId}`).set(as(owner)).expect(204);
    const { rows } = await api.database.db.pool.query("SELECT 1 FROM saved_views WHERE user_id = $1", [leaving.userId]);
    expect(rows).toHaveLength(0);
  });
});
