// Organization job types (docs/reference/lifecycle.md#your-own-workers, docs/reference/robustness.md#r59) through the API against real Postgres: registration and its checks
// (size, depth, catastrophic patterns, unknown keywords, names of built-in and plugin types), POST /jobs validating
// payloads against the schema with each bad field's path, roles, the audit log — and another organization, which
// neither sees the type nor may enqueue it.
import { createApiKey, type SecondOrg, type TestApi, type TestMember, addMember, startTwoOrgs } from "@conveyor/api/testing";
import { responseSchemas } from "../src/declarations/responses";

let api: TestApi;
let alice: TestMember;
let bob: TestMember;
let aliceKey: string;
let second: SecondOrg;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ api, alice, bob, aliceKey, second, close } = await startTwoOrgs({ jobTypes: ["plugin_type"] }));
});
afterAll(() => close());

const as = (member: TestMember) => ({ Authorization: `Bearer ${member.token}` });
const resizeSchema = {
  type: "object",
  properties: { url: { type: "string", format: "uri" }, size: { type: "object", properties: { width: { type: "integer", minimum: 1 } }, required: ["width"] } },
  required: ["url", "size"],
  additionalProperties: false,
};

describe("registering a type", () => {
  it("registers, reads, changes and deletes a type, each change audited", async () => {
    const created = await api.request
      .post("/job-types")
      .set(as(alice))
      .send({ name: "resize", payload_schema: resizeSchema, description: "Resize", default_timeout_ms: 60_000 });
    expect(created.status).toBe(201);
    expect(responseSchemas.JobType.validate(created.body).error).toBeUndefined();
    expect(created.body).toMatchObject({ name: "resize", description: "Resize", default_timeout_ms: 60_000, payload_schema: resizeSchema });

    const listed = await api.request.get("/job-types").set({ "X-API-Key": aliceKey });
    expect(listed.status).toBe(200);
    expect(listed.body.map((t: { name: string }) => t.name)).toEqual(["resize"]);

    const changed = await api.request.patch("/job-types/resize").set(as(alice)).send({ description: "Resize images" });
    expect(changed.status).toBe(200);
    expect(changed.body.description).toBe("Resize images");

    const again = await api.request.post("/job-types").set(as(alice)).send({ name: "resize", payload_schema: resizeSchema });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("job_type_taken");

    const audit = await api.request.get("/audit-log?action=job_type.").set(as(alice));
    expect(audit.status).toBe(200);
    expect(audit.body.map((e: { action: string }) => e.action).sort()).toEqual(["job_type.create", "job_type.update"]);

    await api.request
      .post("/job-types")
      .set(as(alice))
      .send({ name: "gone_soon", payload_schema: { type: "object" } })
      .expect(201);
    await api.request.delete("/job-types/gone_soon").set(as(alice)).expect(204);
    await api.request.get("/job-types/gone_soon").set(as(alice)).expect(404);
    const refused = await api.request.post("/jobs").set(as(alice)).send({ type: "gone_soon", payload: {} });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("unknown_job_type");
  });

  it("refuses the names of built-in and plugin types", async () => {
    for (const name of ["send_email", "plugin_type"]) {
      const res = await api.request
        .post("/job-types")
        .set(as(alice))
        .send({ name, payload_schema: { type: "object" } });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe("job_type_taken");
    }
  });

  it("refuses a huge schema, a deeply nested one, a catastrophic pattern and an unknown keyword (docs/reference/robustness.md#r59)", async () => {
    const huge = {
      type: "object",
      properties: Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`field_${i}`, { type: "string", description: "x".repeat(20) }])),
    };
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 40; i++) deep = { type: "array", items: deep };
    const cases: [string, unknown, RegExp][] = [
      ["huge", huge, /larger than/],
      ["deep", deep, /nests deeper/],
      ["redos", { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } }, /exponential/],
      ["redos_keys", { type: "object", patternProperties: { "(x*)*y": { type: "string" } } }, /exponential/],
      ["typo", { type: "object", requried: ["a"] }, /unknown keyword/],
      ["bad_regex", { type: "string", pattern: "(" }, /not a valid regular expression/],
    ];
    for (const [name, payload_schema, message] of cases) {
      const res = await api.request.post("/job-types").set(as(alice)).send({ name, payload_schema });
      expect([name, res.status]).toEqual([name, 400]);
      expect(res.body.error.code).toBe("validation_failed");
      expect(res.body.error.details[0].message).toMatch(message);
    }
  });

  it("lets only owners and admins change types; members and API keys read them", async () => {
    const member = await addMember(api.database.db, api.deps.config, alice.orgId, "member");
    await api.request
      .post("/job-types")
      .set(as(member))
      .send({ name: "nope", payload_schema: { type: "object" } })
      .expect(403);
    await api.request
      .post("/job-types")
      .set({ "X-API-Key": aliceKey })
      .send({ name: "nope", payload_schema: { type: "object" } })
      .expect(403);
    await api.request.get("/job-types").set(as(member)).expect(200);
    const admin = await addMember(api.database.db, api.deps.config, alice.orgId, "admin");
    await api.request
      .post("/job-types")
      .set(as(admin))
      .send({ name: "by_admin", payload_schema: { type: "object" } })
      .expect(201);
  });
});

describe("POST /jobs with an organization's type", () => {
  beforeAll(async () => {
    await api.request
      .post("/job-types")
      .set(as(alice))
      .send({ name: "thumbnail", payload_schema: resizeSchema, default_timeout_ms: 5_000, default_max_retries: 4 })
      .expect(201);
  });

  it("accepts a payload the schema accepts, with the type's default timeout and retries unless the job gives its own", async () => {
    const res = await api.request
      .post("/jobs")
      .set({ "X-API-Key": aliceKey })
      .send({ type: "thumbnail", payload: { url: "https://x.test/a.png", size: { width: 10 } } });
    expect(res.status).toBe(202);
    const { rows } = await api.database.db.pool.query("SELECT timeout_ms, max_retries FROM jobs WHERE id = $1", [res.body.id]);
    expect(rows[0]).toEqual({ timeout_ms: 5_000, max_retries: 4 });
    const own = await api.request
      .post("/jobs")
      .set({ "X-API-Key": aliceKey })
      .send({ type: "thumbnail", payload: { url: "u", size: { width: 1 } }, max_retries: 2, timeout_ms: 9_000 });
    const { rows: explicit } = await api.database.db.pool.query("SELECT timeout_ms, max_retries FROM jobs WHERE id = $1", [own.body.id]);
    expect(explicit[0]).toEqual({ timeout_ms: 9_000, max_retries: 2 });
  });

  it("answers 400 with the path of each bad field", async () => {
    const res = await api.request
      .post("/jobs")
      .set({ "X-API-Key": aliceKey })
      .send({ type: "thumbnail", payload: { url: 5, size: {}, extra: true } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_failed");
    const paths = res.body.error.details.map((d: { path: string }) => d.path).sort();
    expect(paths).toEqual(expect.arrayContaining(["payload.url", "payload.size.width"]));
    const batch = await api.request
      .post("/jobs/batch")
      .set({ "X-API-Key": aliceKey })
      .send({ jobs: [{ type: "thumbnail", payload: { url: "u" } }] });
    expect(batch.status).toBe(400);
    expect(batch.body.error.details.map((d: { path: string }) => d.path)).toContain("jobs.0.payload.size");
  });

  it("is another organization's unknown type, and not listed to it", async () => {
    const res = await api.request
      .post("/jobs")
      .set(as(bob))
      .send({ type: "thumbnail", payload: { url: "u", size: { width: 1 } } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("unknown_job_type");
    const listed = await api.request.get("/job-types").set(as(bob));
    expect(listed.body).toEqual([]);
    await api.request.get("/job-types/thumbnail").set(as(bob)).expect(404);
    const bobKey = (await createApiKey(api.database.db, bob)).key;
    await api.request.get("/job-types/thumbnail").set({ "X-API-Key": bobKey }).expect(404);
    expect(second).toBeDefined();
  });
});
