import express from "express";
import supertest from "supertest";
import { createLogger } from "@conveyor/logger";
import { PassThrough } from "node:stream";
import { errorHandler } from "../src/middleware/error-handler";
import { requestContext } from "../src/middleware/request-context";
import { startTestApi, type TestApi } from "@conveyor/api/testing";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

const errorShape = {
  error: { code: expect.stringMatching(/^[a-z_]+$/), message: expect.stringMatching(/\.$/) },
};

describe("HTTP conventions (docs/reference/http.md#errors)", () => {
  it("answers an unknown route with 404 not_found and the error body", async () => {
    const res = await api.request.get("/no/such/route");
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject(errorShape);
    expect(res.body.error.code).toBe("not_found");
  });

  it("answers malformed JSON with 400 invalid_json", async () => {
    const res = await api.request.post("/no/such/route").set("Content-Type", "application/json").send('{"type": ');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_json");
  });

  it("answers a non-JSON body with 415 unsupported_media_type", async () => {
    const res = await api.request.post("/healthz").set("Content-Type", "text/plain").send("type=webhook");
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe("unsupported_media_type");
  });

  it("answers a form-encoded body with 415 as well", async () => {
    const res = await api.request.post("/healthz").type("form").send({ a: "b" });
    expect(res.status).toBe(415);
  });

  it("answers a body over 1 MiB with 413 payload_too_large", async () => {
    const big = JSON.stringify({ text: "x".repeat(1024 * 1024) });
    const res = await api.request.post("/healthz").set("Content-Type", "application/json").send(big);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("payload_too_large");
  });

  it("accepts a body just under 1 MiB (it is the route, not the parser, that answers)", async () => {
    const body = JSON.stringify({ text: "x".repeat(1024 * 1024 - 100) });
    const res = await api.request.post("/no/such/route").set("Content-Type", "application/json").send(body);
    expect(res.status).toBe(404);
  });

  it("refuses __proto__ and constructor.prototype keys anywhere in a body", async () => {
    for (const body of ['{"payload":{"__proto__":{"polluted":true}}}', '{"a":[{"constructor":{"prototype":{"polluted":true}}}]}']) {
      const res = await api.request.post("/no/such/route").set("Content-Type", "application/json").send(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("echoes a client's X-Request-Id and generates one otherwise", async () => {
    const echoed = await api.request.get("/healthz").set("X-Request-Id", "client-abc.123");
    expect(echoed.headers["x-request-id"]).toBe("client-abc.123");
    const generated = await api.request.get("/no/such/route");
    expect(generated.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    const refused = await api.request.get("/healthz").set("X-Request-Id", "bad id with spaces and {braces}");
    expect(refused.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("logs the request id on the access line and never the query string", async () => {
    await api.request.get("/no/such/route?token=very-secret-invite-token").set("X-Request-Id", "trace-me-1");
    const line = api
      .logs()
      .split("\n")
      .find((l) => l.includes("trace-me-1") && l.includes("GET /no/such/route"));
    expect(line).toBeDefined();
    expect(api.logs()).not.toContain("very-secret-invite-token");
  });
});

describe("unexpected errors", () => {
  it("become 500 internal_error without a stack, SQL or host name in the body", async () => {
    let logged = "";
    const stream = new PassThrough().on("data", (c: Buffer) => (logged += c));
    const app = express()
      .use(requestContext(createLogger({ service: "api", json: true, stream })))
      .get("/boom", () => {
        throw new Error('relation "secret_table" does not exist at db.internal.example:5432 SELECT * FROM secret_table');
      })
      .use(errorHandler);
    const res = await supertest(app).get("/boom");
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe("internal_error");
    const text = JSON.stringify(res.body);
    for (const leak of ["secret_table", "db.internal", "SELECT", "at ", ".ts:"]) expect(text).not.toContain(leak);
    expect(logged).toContain("secret_table");
  });
});
