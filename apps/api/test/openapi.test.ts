// GET /openapi.json: a valid OpenAPI 3.1 document, for every route the app registers, whose request schemas
// are the routes' own joi schemas, whose examples pass the routes' validation, and whose response schemas
// hold for what the API really answers.
import { execFileSync } from "node:child_process";
import path from "node:path";
import type express from "express";
import { BUILT_IN_TYPES, catalog, validatePayload } from "@conveyor/contracts";
import { createApp } from "../src/app";
import { validate } from "../src/services/infrastructure/validate";
import { endpoints } from "../src/endpoints";
import type { Endpoint } from "../src/declarations/endpoint";
import { buildOpenApiDocument } from "../src/openapi/document";
import { catalogOptions } from "../src/services/infrastructure/job-catalog";
import { jobComponent, payloadComponent, payloadExamples } from "../src/openapi/job-types";
import { jsonSchema, withoutDefaults } from "../src/declarations/json-schema";
import { responseSchemas } from "../src/declarations/responses";
import { createOrg, TEST_PASSWORD, uniqueEmail, startTestApi, type TestApi } from "@conveyor/api/testing";

type Doc = { openapi: string; paths: Record<string, Record<string, any>>; components: Record<string, Record<string, any>> };

const oasPath = (expressPath: string) => expressPath.replace(/:(\w+)/g, "{$1}");

/** Every [METHOD, path] Express would route, read from the app's router stack (all routers sit at the root). */
function registeredRoutes(app: express.Express): string[] {
  const found: string[] = [];
  const walk = (stack: any[]) => {
    for (const layer of stack) {
      // `_all` routes are the router's 405 answers for known paths, not endpoints.
      if (layer.route)
        for (const method of Object.keys(layer.route.methods).filter((m) => m !== "_all")) found.push(`${method.toUpperCase()} ${oasPath(layer.route.path)}`);
      else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk((app as any).router.stack);
  return found.sort();
}

const documentedRoutes = (doc: Doc) =>
  Object.entries(doc.paths)
    .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
    .sort();

function validateWithStandardValidator(doc: unknown): { valid: boolean; version: string; errors: unknown } {
  const script = path.join(__dirname, "support/validate-openapi.mjs");
  return JSON.parse(execFileSync(process.execPath, [script], { input: JSON.stringify(doc), encoding: "utf8" }));
}

describe("GET /openapi.json", () => {
  let api: TestApi;
  let doc: Doc;
  beforeAll(async () => {
    api = await startTestApi();
    const res = await api.request.get("/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    doc = res.body as Doc;
  });
  afterAll(() => api.close());

  it("is an OpenAPI 3.1 document a standard validator accepts", () => {
    expect(doc.openapi).toBe("3.1.0");
    const result = validateWithStandardValidator(doc);
    expect(result.errors).toBeNull();
    expect(result).toMatchObject({ valid: true, version: "3.1" });
  });

  it("documents every route the app registers, with its method, and no route it does not", () => {
    expect(documentedRoutes(doc)).toEqual(registeredRoutes(createApp(api.deps)));
    expect(registeredRoutes(createApp(api.deps))).toEqual(
      expect.arrayContaining(["POST /jobs", "GET /metrics", "GET /openapi.json", "GET /docs", "GET /accept-invite"]),
    );
  });

  it("leaves POST /auth/signup out when signup is disabled, as the app does", () => {
    const config = { ...api.deps.config, ALLOW_SIGNUP: false };
    const withoutSignup = buildOpenApiDocument(config, endpoints) as Doc;
    expect(documentedRoutes(withoutSignup)).toEqual(registeredRoutes(createApp({ ...api.deps, config })));
    expect(withoutSignup.paths["/auth/signup"]).toBeUndefined();
  });

  it("describes the POST /jobs body as a oneOf told apart by type, one variant per built-in type from the catalog", () => {
    const schemas = doc.components.schemas!;
    expect(doc.paths["/jobs"]!.post.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/NewJob" });
    // No discriminator: generated clients would pin the plugin variant's type to a made-up name.
    expect(schemas.NewJob.discriminator).toBeUndefined();
    expect(schemas.NewJob.oneOf).toHaveLength(BUILT_IN_TYPES.length + 1);
    const options = catalogOptions(api.deps.config);
    for (const type of BUILT_IN_TYPES) {
      const variant = schemas[jobComponent(type)];
      expect(variant.properties.type).toEqual({ const: type });
      expect(variant.required).toEqual(expect.arrayContaining(["type", "payload"]));
      expect(variant.properties.payload).toEqual({ $ref: `#/components/schemas/${payloadComponent(type)}` });
      const { description, ...payload } = schemas[payloadComponent(type)];
      expect(payload).toEqual(withoutDefaults(jsonSchema(catalog[type].payload(options))));
      expect(description).toBe(catalog[type].description);
    }
    expect(schemas.PluginJob.properties.type.not.enum.sort()).toEqual([...BUILT_IN_TYPES].sort());
  });

  it("documents the artifact with the media types it is served with, and the member path parameter as user_id", () => {
    expect(Object.keys(doc.paths["/jobs/{id}/artifact"]!.get.responses["200"].content).sort()).toEqual(["application/pdf", "image/jpeg"]);
    const remove = doc.paths["/org/members/{user_id}"]!.delete;
    expect(remove.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(["path:user_id", "header:X-CSRF-Token"]);
  });

  it("has an example of every built-in type that the route and the catalog accept", () => {
    const examples = doc.paths["/jobs"]!.post.requestBody.content["application/json"].examples;
    expect(Object.keys(examples).sort()).toEqual([...BUILT_IN_TYPES].sort());
    const options = catalogOptions(api.deps.config);
    for (const type of BUILT_IN_TYPES) {
      const check = validatePayload(type, payloadExamples[type], options);
      if (!check.ok) throw new Error(`${type} example: ${JSON.stringify(check.details)}`);
    }
  });

  it("has request examples that pass the validation their routes apply", () => {
    for (const op of endpoints.served(api.deps.config).filter((o): o is Endpoint & { body: NonNullable<Endpoint["body"]> } => !!o.body)) {
      for (const [name, example] of Object.entries(op.body.examples ?? {})) {
        try {
          validate(op.body.schema, example.value);
        } catch (error) {
          throw new Error(`${op.method.toUpperCase()} ${op.path} example ${name}: ${(error as Error).message}`, { cause: error });
        }
      }
    }
  });

  it("has response examples that match their documented schemas", () => {
    for (const op of endpoints.served(api.deps.config)) {
      for (const [status, spec] of Object.entries(op.responses)) {
        if (!spec.json) continue;
        const schema = responseSchemas[spec.json.component];
        const items = spec.json.array ? (spec.json.example as unknown[]) : [spec.json.example];
        for (const item of items) {
          const { error } = schema.validate(item);
          if (error) throw new Error(`${op.method.toUpperCase()} ${op.path} ${status} example: ${error.message}`);
        }
      }
    }
  });

  it("answers every refusal with the shared error body, and documents 401 wherever a credential is needed", () => {
    const errorResponses = doc.components.responses!;
    for (const [name, response] of Object.entries(errorResponses)) {
      expect([name, response.content["application/json"].schema]).toEqual([name, { $ref: "#/components/schemas/Error" }]);
    }
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const statuses = Object.keys(op.responses);
        expect([method, p, statuses]).toEqual([method, p, expect.arrayContaining(["500"])]);
        for (const status of statuses.filter((s) => Number(s) >= 400)) {
          expect(op.responses[status].$ref).toMatch(/^#\/components\/responses\//);
        }
        if (op.security.length) expect([method, p, statuses]).toEqual([method, p, expect.arrayContaining(["401"])]);
      }
    }
  });

  it("declares the credential kinds (bearer, API key, console session cookie) and which endpoints take which", () => {
    expect(doc.components.securitySchemes).toEqual({
      bearerAuth: expect.objectContaining({ type: "http", scheme: "bearer", bearerFormat: "JWT" }),
      apiKeyAuth: expect.objectContaining({ type: "apiKey", in: "header", name: "X-API-Key" }),
      sessionCookie: expect.objectContaining({ type: "apiKey", in: "cookie", name: "conveyor_session" }),
      publicToken: expect.objectContaining({ type: "http", scheme: "bearer", bearerFormat: "cvpt_…" }),
      publicTokenQuery: expect.objectContaining({ type: "apiKey", in: "query", name: "token" }),
    });
    const job = [{ bearerAuth: [] }, { apiKeyAuth: [] }, { sessionCookie: [] }];
    const user = [{ bearerAuth: [] }, { sessionCookie: [] }];
    expect(doc.paths["/jobs"]!.post.security).toEqual(job);
    expect(doc.paths["/jobs/{id}/logs"]!.get.security).toEqual(job);
    expect(doc.paths["/me"]!.get.security).toEqual(user);
    expect(doc.paths["/api-keys"]!.post.security).toEqual(user);
    expect(doc.paths["/org/invite"]!.post.security).toEqual(user);
    expect(doc.paths["/auth/session"]!.get.security).toEqual([{ sessionCookie: [] }]);
    expect(doc.paths["/auth/session"]!.post.security).toEqual([]);
    expect(doc.paths["/invite/accept"]!.post.security).toEqual([]);
    expect(doc.paths["/metrics"]!.get.security).toEqual([]);
    // A job's public token reads that job, its output and its events (docs/reference/events.md#progress-and-live-results), and nothing else.
    const jobRead = [...job, { publicToken: [] }, { publicTokenQuery: [] }];
    const readable = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.security.some((s: Record<string, unknown>) => "publicToken" in s))
        .map(([method]) => `${method} ${p}`),
    );
    expect(readable.sort()).toEqual(["get /jobs/{id}", "get /jobs/{id}/events", "get /jobs/{id}/output"]);
    expect(doc.paths["/jobs/{id}/output"]!.get.security).toEqual(jobRead);
  });

  it("documents X-CSRF-Token (optional) and a 403 on every state-changing operation a session cookie can call, and on no other", () => {
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const cookie = op.security.some((s: Record<string, unknown>) => "sessionCookie" in s);
        const csrf = (op.parameters ?? []).some((param: { name: string; in: string; required: boolean }) => {
          if (param.name !== "X-CSRF-Token") return false;
          expect([method, p, param.in, param.required]).toEqual([method, p, "header", false]);
          return true;
        });
        expect([method, p, csrf]).toEqual([method, p, cookie && method !== "get"]);
        if (csrf) expect([method, p, Object.keys(op.responses)]).toEqual([method, p, expect.arrayContaining(["403"])]);
      }
    }
  });

  describe("real responses", () => {
    const ops = () => endpoints.served(api.deps.config);

    /** Checks `body` against the schema the document gives for this route and status. */
    function expectDocumented(method: string, route: string, res: { status: number; body: unknown }): void {
      const op = ops().find((o) => o.method === method && o.path === route);
      if (!op) throw new Error(`${method} ${route} is not documented`);
      const documented = op.responses[res.status];
      const schema = documented?.json
        ? responseSchemas[documented.json.component]
        : res.status >= 400 && op.errors.includes(res.status as never)
          ? responseSchemas.Error
          : undefined;
      if (!schema) throw new Error(`${method} ${route} answered ${res.status}, which the document does not list`);
      const items = documented?.json?.array ? (res.body as unknown[]) : [res.body];
      for (const item of items) {
        const { error } = schema.validate(item);
        if (error) throw new Error(`${method} ${route} ${res.status}: ${error.message} in ${JSON.stringify(item)}`);
      }
    }

    it("match the documented schemas, for every JSON endpoint a client calls", async () => {
      const r = api.request;
      const email = uniqueEmail("doc");
      const signup = await r.post("/auth/signup").send({ email, password: TEST_PASSWORD, org_name: "Docs Inc" });
      expectDocumented("post", "/auth/signup", signup);
      const auth = { Authorization: `Bearer ${signup.body.token}` };
      expectDocumented("post", "/auth/login", await r.post("/auth/login").send({ email, password: TEST_PASSWORD }));
      expectDocumented("get", "/me", await r.get("/me").set(auth));

      const key = await r.post("/api-keys").set(auth).send({ name: "docs" });
      expectDocumented("post", "/api-keys", key);
      expectDocumented("get", "/api-keys", await r.get("/api-keys").set(auth));
      const viaKey = { "X-API-Key": key.body.key };

      const job = await r.post("/jobs").set(viaKey).send({ type: "send_email", payload: payloadExamples.send_email });
      expectDocumented("post", "/jobs", job);
      expectDocumented(
        "post",
        "/jobs/batch",
        await r
          .post("/jobs/batch")
          .set(viaKey)
          .send({ jobs: [{ type: "chat_notify", payload: payloadExamples.chat_notify }] }),
      );
      expectDocumented("get", "/jobs", await r.get("/jobs").set(viaKey));
      expectDocumented("get", "/jobs", await r.get("/jobs?limit=1").set(viaKey));
      expectDocumented("get", "/jobs/:id", await r.get(`/jobs/${job.body.id}`).set(viaKey));
      expectDocumented("get", "/jobs/:id/logs", await r.get(`/jobs/${job.body.id}/logs`).set(viaKey));

      expectDocumented("get", "/org/members", await r.get("/org/members").set(auth));
      const invite = await r
        .post("/org/invite")
        .set(auth)
        .send({ email: uniqueEmail("invitee"), role: "member" });
      expectDocumented("post", "/org/invite", invite);
      const token = new URL(invite.body.invite_url).searchParams.get("token")!;
      expectDocumented("get", "/invite", await r.get(`/invite?token=${encodeURIComponent(token)}`));
      expectDocumented("post", "/invite/accept", await r.post("/invite/accept").send({ token, password: TEST_PASSWORD }));

      expectDocumented("get", "/healthz", await r.get("/healthz"));
      expectDocumented("get", "/readyz", await r.get("/readyz"));
    });

    it("match the shared error body for refusals", async () => {
      const owner = await createOrg(api.database.db, api.deps.config);
      const auth = { Authorization: `Bearer ${owner.token}` };
      expectDocumented("post", "/jobs", await api.request.post("/jobs").set(auth).send({ type: "send_email", payload: {} }));
      expectDocumented("post", "/jobs", await api.request.post("/jobs").send({ type: "send_email", payload: {} }));
      expectDocumented("get", "/jobs/:id", await api.request.get("/jobs/0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01").set(auth));
      expectDocumented("get", "/jobs", await api.request.get("/jobs?status=completed").set(auth));
      expectDocumented("get", "/invite", await api.request.get("/invite?token=nope"));
    });
  });
});
