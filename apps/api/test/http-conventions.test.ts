import express from "express";
import supertest from "supertest";
import { createLogger } from "@conveyor/logger";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { errorHandler } from "../src/middleware/error-handler";
import { jsonBody } from "../src/middleware/json-body";
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

describe("JSON bodies read without body-parser (the plain case) answer as body-parser does", () => {
  // An app that echoes the body it parsed, so the plain read (application/json with a Content-Length) and
  // body-parser (the same body under another JSON media type) can be compared byte for byte.
  const echo = express()
    .use(requestContext(createLogger({ service: "api", json: true, stream: new PassThrough().resume() })))
    .use(jsonBody())
    .post("/echo", (req, res) => res.json({ body: req.body as unknown }))
    .use(errorHandler);
  const bodies: Buffer[] = [
    Buffer.from('{"a":1,"b":[true,null,"x"]}'),
    Buffer.from(' \t\r\n{"spaced":1}'),
    Buffer.from('\ufeff{"bom":1}'),
    Buffer.from("[1,2,3]"),
    Buffer.from("42"),
    Buffer.from('"text"'),
    Buffer.from("null"),
    Buffer.from('{"a":'),
    Buffer.from("{} x"),
    Buffer.from('{"é":"ü€😀"}'),
    Buffer.concat([Buffer.from('{"bad":"'), Buffer.from([0xff, 0xc3, 0x28, 0xe2, 0x82]), Buffer.from('"}')]),
    Buffer.from('{"nul":"a\\u0000b"}'),
    Buffer.from('{"__proto__":{"x":1}}'),
  ];
  it.each(bodies.map((body) => [body.toString("latin1"), body] as const))("%j", async (_name, body) => {
    const plain = await supertest(echo).post("/echo").set("Content-Type", "application/json").send(body);
    const general = await supertest(echo).post("/echo").set("Content-Type", "application/vnd.test+json").send(body);
    expect({ status: plain.status, body: plain.text }).toEqual({ status: general.status, body: general.text });
  });

  it("reads a body that arrives in several packets, and refuses one cut short", async () => {
    const server = echo.listen(0);
    try {
      const port = (server.address() as AddressInfo).port;
      const raw = (parts: string[], declared: number) =>
        new Promise<string>((resolve, reject) => {
          const socket = connect(port, "127.0.0.1", () => {
            socket.write(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\nConnection: close\r\n\r\n`);
            parts.forEach((part, i) =>
              setTimeout(() => (i === parts.length - 1 && declared > Buffer.byteLength(parts.join("")) ? socket.end(part) : socket.write(part)), 20 * (i + 1)),
            );
          });
          let text = "";
          socket
            .on("data", (c: Buffer) => (text += c.toString()))
            .on("close", () => resolve(text))
            .on("error", reject);
        });
      const whole = '{"split":"across","packets":[1,2,3]}';
      const answer = await raw([whole.slice(0, 10), whole.slice(10, 25), whole.slice(25)], Buffer.byteLength(whole));
      expect(answer).toMatch(/^HTTP\/1.1 200/);
      expect(answer).toContain('{"body":{"split":"across","packets":[1,2,3]}}');
      // Fewer bytes than declared, then the client hangs up: nothing reaches the route.
      const short = await raw(['{"cut":'], 40);
      expect(short).not.toContain('"body"');
    } finally {
      server.close();
    }
  });
});
