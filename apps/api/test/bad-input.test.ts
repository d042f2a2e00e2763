// Bad input that once answered 500 (issue 12): bodies that are absent, characters Postgres cannot store, nesting
// that overflows the stack, prototype keys at any depth, other charsets, OPTIONS, broken percent-encoding.
// Each must be a 4xx in docs/reference/http.md#errors's shape, and nothing already accepted may be lost.
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { MAX_JSON_DEPTH } from "@conveyor/contracts";
import { createApp, createServer } from "../src/app";
import { expectError } from "./support/expect-error";
import { createOrg, type TestMember, startTestApi, type TestApi } from "@conveyor/api/testing";

let api: TestApi;
let owner: TestMember;
let server: http.Server;
let port: number;

beforeAll(async () => {
  api = await startTestApi({ AUTH_RATE_LIMIT_PER_MIN: "0" });
  owner = await createOrg(api.database.db, api.deps.config);
  server = createServer(createApp(api.deps)).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await api.close();
});

/**
 * A request written byte for byte on a socket: exactly the headers given (no Content-Length, no chunking unless
 * named), as `curl -X POST` without data sends it. The answer is read until the server closes.
 */
function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: any; headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const head = [`${method} ${path} HTTP/1.1`, "Host: localhost", "Connection: close", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    socket.write(`${head.join("\r\n")}\r\n\r\n${body ?? ""}`);
    let text = "";
    socket.setEncoding("utf8").on("data", (c: string) => (text += c));
    socket.on("error", reject);
    socket.on("close", () => {
      const [top, ...rest] = text.split("\r\n\r\n");
      const lines = top!.split("\r\n");
      const responseHeaders = Object.fromEntries(lines.slice(1).map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
      const payload = rest.join("\r\n\r\n");
      resolve({ status: Number(lines[0]!.split(" ")[1]), body: payload ? JSON.parse(payload) : undefined, headers: responseHeaders });
    });
  });
}

function expectShape(res: { status: number; body: any; headers: Record<string, string> }, status: number, code: string): void {
  if (res.status !== status || res.body?.error?.code !== code) throw new Error(`expected ${status} ${code}, got ${res.status} ${JSON.stringify(res.body)}`);
  expect(Object.keys(res.body)).toEqual(["error"]);
  expect(res.body.error.message).toMatch(/\.$/);
  expect(res.headers["x-request-id"]).toBeTruthy();
}

const JSON_ROUTES: { path: string; auth: "none" | "jwt" | "any" }[] = [
  { path: "/jobs", auth: "any" },
  { path: "/jobs/batch", auth: "any" },
  { path: "/auth/login", auth: "none" },
  { path: "/auth/signup", auth: "none" },
  { path: "/invite/accept", auth: "none" },
  { path: "/org/invite", auth: "jwt" },
  { path: "/api-keys", auth: "jwt" },
];

describe("a POST without any body", () => {
  it.each(JSON_ROUTES)("is 400 validation_failed naming the body on $path, with or without a credential", async ({ path, auth }) => {
    const credentialed = await raw("POST", path, auth === "none" ? {} : { Authorization: `Bearer ${owner.token}` });
    expectShape(credentialed, 400, "validation_failed");
    expect(credentialed.body.error.details).toEqual([{ path: "body", message: expect.stringContaining("is required") }]);
    const anonymous = await raw("POST", path, {});
    expect(anonymous.status).toBe(auth === "none" ? 400 : 401);
  });

  it("is also refused with Content-Length: 0 and a JSON content type", async () => {
    const res = await raw("POST", "/auth/login", { "Content-Type": "application/json", "Content-Length": "0" });
    expectShape(res, 400, "validation_failed");
  });
});

describe("characters Postgres cannot store", () => {
  const cases: [string, string, Record<string, unknown>, string][] = [
    ["NUL in a payload string", "/jobs", { type: "webhook", payload: { url: "https://example.com/a\u0000b", payload: {} } }, "payload.url"],
    [
      "NUL in a plugin payload key",
      "/jobs",
      { type: "send_email", payload: { to: "a@example.com", subject: "s", body: "b", "x\u0000": 1 } },
      "payload.x\u0000",
    ],
    ["a lone high surrogate in a payload", "/jobs", { type: "send_email", payload: { to: "a@example.com", subject: "\ud800", body: "b" } }, "payload.subject"],
    [
      "a lone low surrogate in a nested array",
      "/jobs",
      { type: "webhook", payload: { url: "https://example.com/", payload: { list: ["ok", "\udc00x"] } } },
      "payload.payload.list.1",
    ],
    ["NUL in an API key name", "/api-keys", { name: "billing\u0000" }, "name"],
  ];
  it.each(cases)("refuses %s with 400 naming the path", async (_what, path, body, detailPath) => {
    const res = await api.request.post(path).set("Authorization", `Bearer ${owner.token}`).send(body);
    expectError(res, 400, "validation_failed");
    expect(res.body.error.details[0].path).toBe(detailPath);
  });

  it("refuses NUL and lone surrogates in an org name at signup", async () => {
    for (const org_name of ["Acme\u0000", "Acme \udfff"]) {
      const res = await api.request.post("/auth/signup").send({ email: `nul-${Date.now()}@example.test`, password: "correct horse battery staple", org_name });
      expectError(res, 400, "validation_failed");
      expect(res.body.error.details[0].path).toBe("org_name");
    }
  });

  it("keeps well-formed surrogate pairs (emoji) and stores them", async () => {
    const res = await api.request
      .post("/jobs")
      .set("Authorization", `Bearer ${owner.token}`)
      .send({ type: "send_email", payload: { to: "a@example.com", subject: "Ship it 🚀", body: "𝄞" } });
    expect(res.status).toBe(202);
    const job = await api.request.get(`/jobs/${res.body.id}`).set("Authorization", `Bearer ${owner.token}`);
    expect(job.body.payload.subject).toBe("Ship it 🚀");
  });

  it("refuses NUL in a query string", async () => {
    const res = await api.request.get("/jobs?status=pending%00").set("Authorization", `Bearer ${owner.token}`);
    expectError(res, 400, "validation_failed");
    expect(res.body.error.details[0].path).toBe("query.status");
  });
});

describe("nesting", () => {
  const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

  it("refuses a body nested 10,000 deep with 400, naming where the limit was passed", async () => {
    const body = `{"type":"webhook","payload":{"url":"https://example.com/","payload":${nested(10_000)}}}`;
    const res = await api.request.post("/jobs").set("Authorization", `Bearer ${owner.token}`).set("Content-Type", "application/json").send(body);
    expectError(res, 400, "validation_failed");
    expect(res.body.error.details[0].message).toBe(`nests deeper than ${MAX_JSON_DEPTH} levels`);
    expect(res.body.error.details[0].path).toMatch(/^payload\.payload(\.a)+$/);
  });

  it("accepts exactly the documented depth and refuses one level more", async () => {
    // The body is level 1, payload level 2: payload.payload may hold MAX_JSON_DEPTH − 2 levels.
    const fits = `{"type":"webhook","payload":{"url":"https://example.com/","payload":${nested(MAX_JSON_DEPTH - 2)}}}`;
    const ok = await api.request.post("/jobs").set("Authorization", `Bearer ${owner.token}`).set("Content-Type", "application/json").send(fits);
    expect(ok.status).toBe(202);
    const over = `{"type":"webhook","payload":{"url":"https://example.com/","payload":${nested(MAX_JSON_DEPTH - 1)}}}`;
    expectError(
      await api.request.post("/jobs").set("Authorization", `Bearer ${owner.token}`).set("Content-Type", "application/json").send(over),
      400,
      "validation_failed",
    );
  });

  it("refuses a million nested arrays on a public route without a credential", async () => {
    const body = `${"[".repeat(500_000)}${"]".repeat(500_000)}`;
    expectShape(
      await raw("POST", "/auth/login", { "Content-Type": "application/json", "Content-Length": String(body.length) }, body),
      400,
      "validation_failed",
    );
  });
});

describe("prototype keys", () => {
  it.each(["__proto__", "constructor", "prototype"])("refuses %s at depth 100 as well as at the top", async (key) => {
    const deep = `${'{"a":'.repeat(40)}{"${key}":{"polluted":true}}${"}".repeat(40)}`;
    for (const body of [`{"${key}":{"polluted":true}}`, deep]) {
      const res = await api.request.post("/auth/login").set("Content-Type", "application/json").send(body);
      expectError(res, 400, "validation_failed");
      expect(res.body.error.details[0].path.split(".").pop()).toBe(key);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("content types and methods", () => {
  it("answers a UTF-16 (or any non-UTF-8) JSON body with 415", async () => {
    for (const type of ["application/json; charset=utf-16", "application/json;charset=UTF-16LE", "application/json; charset=latin1"]) {
      const res = await api.request.post("/auth/login").set("Content-Type", type).send(Buffer.from('{"email":"a@b.c","password":"x"}', "utf16le"));
      expectError(res, 415, "unsupported_media_type");
    }
    const utf8 = await api.request
      .post("/auth/login")
      .set("Content-Type", "application/json; charset=utf-8")
      .send({ email: "nobody@example.test", password: "x" });
    expect(utf8.status).toBe(401);
  });

  it("answers OPTIONS in the JSON error shape", async () => {
    for (const path of ["/jobs", "/auth/login", "/no/such/route"]) {
      const res = await api.request.options(path);
      expectError(res, 405, "method_not_allowed");
    }
  });

  it("answers a request line over 16 KiB in the JSON error shape, with a request id", async () => {
    const res = await raw("GET", `/jobs?status=${"x".repeat(20_000)}`, { Authorization: `Bearer ${owner.token}` });
    expectShape(res, 431, "headers_too_large");
  });

  it("answers a malformed percent-encoding in the path with 400", async () => {
    const res = await raw("GET", "/jobs/%E0%A4%A", { Authorization: `Bearer ${owner.token}` });
    expectShape(res, 400, "validation_failed");
  });
});
