// No input makes a 5xx (docs/reference/robustness.md#r23, docs/reference/robustness.md#r39): generated requests to every operation of the live OpenAPI document
// — arbitrary JSON, NUL bytes, lone surrogates, huge numbers, deep nesting, wrong types, odd content types, broken
// percent-encoding, junk and real credentials — must all be answered 2xx–4xx, and every refusal in docs/reference/http.md#errors's shape
// with the status its code maps to.
//
// Replay a failure with the seed it prints: FUZZ_SEED=<seed> npm test -- apps/api/test/fuzz.test.ts
// More cases: FUZZ_RUNS=100000 (CI runs the default).
import http from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import jwt from "jsonwebtoken";
import { Agent, request } from "undici";
import { createApp, createServer } from "../src/app";
import { ERROR_STATUS } from "../src/http/errors";
import { addMember, createApiKey, createOrg, TEST_PASSWORD, type TestMember, startTestApi, type TestApi } from "@conveyor/api/testing";

const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() ^ (Math.random() * 0x7fffffff);

type Operation = {
  method: string;
  path: string;
  pathParams: string[];
  query: { name: string; schema: { enum?: unknown[] } }[];
  hasBody: boolean;
  examples: unknown[];
  authenticated: boolean;
};

type FuzzRequest = { op: Operation; path: string; headers: Record<string, string>; body: string | undefined };

let api: TestApi;
let server: http.Server;
let dispatcher: Agent;
let origin: string;
let operations: Operation[];
let owner: TestMember;
let apiKey: string;
/** A member whose credentials may be spent: POST /auth/password is fuzzed with theirs, not the owner's. */
let fodder: TestMember;
const ids: string[] = [];

beforeAll(async () => {
  api = await startTestApi({ AUTH_RATE_LIMIT_PER_MIN: "0", API_RATE_LIMIT_PER_SEC: "0" });
  owner = await createOrg(api.database.db, api.deps.config);
  apiKey = (await createApiKey(api.database.db, owner)).key;
  // Things a generated id may hit: the org's own job, a member and a key that may be removed, and another
  // org's job and member, which must stay out of reach (404).
  fodder = await addMember(api.database.db, api.deps.config, owner.orgId, "member");
  const fodderKey = await createApiKey(api.database.db, fodder);
  const other = await createOrg(api.database.db, api.deps.config);
  const [own, foreign] = await Promise.all(
    [owner, other].map(
      async (m) =>
        (
          await api.request
            .post("/jobs")
            .set("Authorization", `Bearer ${m.token}`)
            .send({ type: "chat_notify", payload: { channel: "#x", text: "y" } })
        ).body.id as string,
    ),
  );
  // A webhook endpoint of each organization: PATCH, redeliver and test reach a real one, and never the other's.
  const endpoints = await Promise.all(
    [owner, other].map(
      async (m, i) =>
        (
          await api.request
            .post("/webhook-endpoints")
            .set("Authorization", `Bearer ${m.token}`)
            .send({ url: `https://hooks.example.com/fuzz/${i}`, events: ["*"] })
        ).body.id as string,
    ),
  );
  // A waitpoint of each organization (issue 34): complete and cancel reach a real one, and never the other's.
  const waitpoints = await Promise.all(
    [owner, other].map(
      async (m) => (await api.request.post("/waitpoints").set("Authorization", `Bearer ${m.token}`).send({ timeout_seconds: 600 })).body.id as string,
    ),
  );
  ids.push(own!, foreign!, fodder.userId, fodderKey.id, owner.userId, other.userId, ...endpoints, ...waitpoints, "00000000-0000-7000-8000-000000000000");

  server = createServer(createApp(api.deps)).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dispatcher = new Agent({ connections: 4, pipelining: 1 });

  const doc = (await api.request.get("/openapi.json")).body as { paths: Record<string, Record<string, any>> };
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      pathParams: (op.parameters ?? []).filter((p: any) => p.in === "path").map((p: any) => p.name),
      query: (op.parameters ?? []).filter((p: any) => p.in === "query").map((p: any) => ({ name: p.name, schema: p.schema ?? {} })),
      hasBody: Boolean(op.requestBody),
      examples: Object.values(op.requestBody?.content?.["application/json"]?.examples ?? {}).map((e: any) => e.value),
      authenticated: (op.security ?? []).length > 0,
    })),
  );
}, 60_000);

afterAll(async () => {
  await dispatcher?.close();
  await new Promise((resolve) => server?.close(resolve));
  await api?.close();
});

// ---- what the requests are made of -------------------------------------------------------------------------

const nasty = fc.constantFrom(
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udfffy",
  "\ud83d\ude80",
  "__proto__",
  "constructor",
  "prototype",
  "",
  " ",
  "%",
  "%00",
  "../..",
  "<script>alert(1)</script>",
  "' OR 1=1 --",
  // Search prefixes and tsquery syntax (issue 23): q=…* is read as a prefix, quoted as a tsquery lexeme.
  "INV-20*",
  "it's*",
  "a\\b'':*",
  "x:'&|!()<->*",
  "customer:Glo*",
  "x".repeat(5_000),
  "completed",
  "0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01",
);
const weirdString = fc.oneof(fc.string(), fc.string({ unit: "binary", maxLength: 40 }), nasty);
const hugeNumber = fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -0, 0.1, 1e-320, Number.MAX_SAFE_INTEGER, -1, 26, 1001, 3.5);
const leaf = fc.oneof(weirdString, hugeNumber, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, leaf, tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 5 }),
  object: fc.dictionary(
    fc.oneof(
      weirdString,
      fc.constantFrom(
        "type",
        "payload",
        "max_retries",
        "email",
        "password",
        "token",
        "role",
        "name",
        "org_id",
        "__proto__",
        "depends_on",
        "ref",
        "attachments",
        "filter",
        "failure_group",
        "due",
      ),
    ),
    tie("value"),
    { maxKeys: 5 },
  ),
})).value;

/** `value` with one field (at a random path) replaced by `replacement`. */
function mutate(value: unknown, choice: number, replacement: unknown): unknown {
  if (value === null || typeof value !== "object") return replacement;
  const keys = Object.keys(value);
  if (keys.length === 0 || choice % 5 === 0) return replacement;
  const key = keys[choice % keys.length]!;
  const copy: Record<string, unknown> = Array.isArray(value) ? ([...value] as never) : { ...value };
  copy[key] = choice % 3 === 0 ? replacement : mutate((value as Record<string, unknown>)[key], Math.floor(choice / 7), replacement);
  return copy;
}

const rawText = fc.oneof(
  fc.string(),
  fc.constantFrom(
    "",
    "{",
    "[",
    "null",
    "true",
    "1",
    '"x"',
    "{}",
    "[]",
    '{"a":1,}',
    "{'a':1}",
    '{"a":NaN}',
    '{"a":1e999}',
    '{"a":123456789012345678901234567890}',
    "\ufeff{}",
  ),
  fc.integer({ min: 60, max: 20_000 }).map((n) => `${"[".repeat(n)}${"]".repeat(n)}`),
  fc.integer({ min: 60, max: 5_000 }).map((n) => `{"type":"webhook","payload":${'{"a":'.repeat(n)}1${"}".repeat(n)}}`),
);

function bodyFor(op: Operation) {
  const example = op.examples.length ? fc.constantFrom(...op.examples) : fc.constant({});
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: example.map((e) => JSON.stringify(e)) },
    { weight: 6, arbitrary: fc.tuple(example, fc.nat(), jsonValue).map(([e, choice, value]) => JSON.stringify(mutate(e, choice, value))) },
    { weight: 3, arbitrary: jsonValue.map((v) => JSON.stringify(v)) },
    { weight: 2, arbitrary: rawText },
  );
}

/** Percent-encodes any string, lone surrogates included (as the bytes Node would send). */
function encode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return [...Buffer.from(value, "utf8")].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");
  }
}
const brokenEncoding = fc.constantFrom("%", "%zz", "%E0%A4%A", "%ED%A0%80", "%C0%AF", "%00", "%FF%FE", "a%2Fb", "%252F");
const pathValue = () => fc.oneof(fc.constantFrom(...ids), weirdString.map(encode), brokenEncoding);
const queryValue = (schema: { enum?: unknown[] }) =>
  fc.oneof(
    ...(schema.enum?.length ? [fc.constantFrom(...schema.enum.map(String))] : []),
    weirdString.map(encode),
    hugeNumber.map(String),
    brokenEncoding,
    fc.constant(""),
  );

function queryFor(op: Operation) {
  const declared = op.query.map((q) =>
    fc.option(
      queryValue(q.schema).map((v) => `${q.name}=${v}`),
      { nil: undefined },
    ),
  );
  const extra = fc.array(
    fc.tuple(weirdString.map(encode), weirdString.map(encode)).map(([k, v]) => `${k}=${v}`),
    { maxLength: 2 },
  );
  return fc.tuple(fc.tuple(...declared), extra, fc.boolean()).map(([known, more, repeat]) => {
    const parts = [...known.filter((p): p is string => p !== undefined), ...more];
    if (repeat && parts.length) parts.push(parts[0]!);
    return parts.length ? `?${parts.join("&")}` : "";
  });
}

/** Header values Node will put on the wire: tab, visible ASCII and latin-1. */
const headerText = fc.string({ unit: fc.constantFrom(..."\tabc-_ .:;,/=+\"'{}<>%0123456789AZ\u00e9\u00ff"), maxLength: 80 });

/** A password change would end the owner's token for the rest of the run: that operation gets the fodder's. */
const spends = (op: Operation) => op.method === "POST" && op.path === "/auth/password";

const credentials = (op: Operation) =>
  fc.constantFrom<Record<string, string>>(
    {},
    { Authorization: `Bearer ${spends(op) ? fodder.token : owner.token}` },
    { "X-API-Key": apiKey },
    { Authorization: `Bearer ${spends(op) ? fodder.token : owner.token}`, "X-API-Key": "cvk_nonsense" },
    { Authorization: "Bearer not.a.jwt" },
    { Authorization: `Bearer ${jwt.sign({ sub: owner.userId, org: owner.orgId }, "another secret entirely, 32+ chars long")}` },
    { Authorization: `Bearer ${jwt.sign({ sub: owner.userId, org: owner.orgId }, "", { algorithm: "none" })}` },
    { Authorization: "Basic YTpi" },
    { "X-API-Key": "cvk_0000000000000000000000000000000000000000000" },
  );

const contentType = fc.constantFrom(
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=utf-16",
  'application/json; charset="UTF-8"',
  "application/merge-patch+json",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "",
);

function requestFor(op: Operation): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      params: fc.tuple(...op.pathParams.map(() => pathValue())),
      query: queryFor(op),
      auth: credentials(op),
      type: contentType,
      extra: fc.record({ "Idempotency-Key": headerText, "X-Request-Id": headerText, "Last-Event-ID": headerText, Accept: headerText }, { requiredKeys: [] }),
      body: op.hasBody ? bodyFor(op) : fc.option(rawText, { nil: undefined, freq: 4 }),
    })
    .map(({ params, query, auth, type, extra, body }) => {
      let path = op.path;
      op.pathParams.forEach((name, i) => (path = path.replace(`{${name}}`, params[i]!)));
      const headers: Record<string, string> = { ...auth, ...extra };
      if (body !== undefined && type) headers["Content-Type"] = type;
      return { op, path: `${path}${query}`, headers, body };
    });
}

// ---- the property ------------------------------------------------------------------------------------------

const hits = new Map<string, number>();

async function send(req: FuzzRequest): Promise<void> {
  const res = await request(`${origin}${req.path}`, { method: req.op.method as never, headers: req.headers, body: req.body, dispatcher });
  const label = `${req.op.method} ${req.op.path}`;
  hits.set(label, (hits.get(label) ?? 0) + 1);
  // An event stream that was accepted stays open: its status and headers are the answer; stop reading there.
  if (res.statusCode === 200 && String(res.headers["content-type"]).startsWith("text/event-stream")) {
    res.body.destroy();
    if (!res.headers["x-request-id"]) throw new Error(`${label} → 200 event stream without X-Request-Id`);
    return;
  }
  const text = await res.body.text();
  const problem = (why: string) =>
    new Error(
      `${label} → ${res.statusCode}: ${why}\nsent ${req.path} ${JSON.stringify(req.headers)} ${JSON.stringify(req.body?.slice(0, 300))}\ngot ${text.slice(0, 500)}`,
    );
  if (res.statusCode >= 500) throw problem("a server error");
  if (!res.headers["x-request-id"]) throw problem("no X-Request-Id");
  if (res.statusCode < 400) return;
  let body: { error?: { code?: string; message?: unknown; details?: unknown } };
  try {
    body = JSON.parse(text);
  } catch {
    throw problem("a refusal that is not JSON");
  }
  const error = body.error;
  if (!error || Object.keys(body).length !== 1) throw problem("not docs/reference/http.md#errors's error body");
  if (typeof error.code !== "string" || !(error.code in ERROR_STATUS)) throw problem(`unknown error code ${error.code}`);
  if (ERROR_STATUS[error.code as keyof typeof ERROR_STATUS] !== res.statusCode) throw problem(`code ${error.code} with the wrong status`);
  if (typeof error.message !== "string" || !/\.$/.test(error.message)) throw problem("a message that is not a sentence");
  if (
    error.details !== undefined &&
    !(Array.isArray(error.details) && error.details.every((d) => typeof d?.path === "string" && typeof d?.message === "string"))
  ) {
    throw problem("malformed details");
  }
  if (Object.keys(error).some((k) => !["code", "message", "details"].includes(k))) throw problem("extra keys in the error");
}

describe(`fuzzing every operation of /openapi.json (seed ${SEED}, ${RUNS} runs)`, () => {
  it("answers every generated request with 2xx–4xx, and every refusal in docs/reference/http.md#errors's shape", async () => {
    process.stdout.write(`fuzz seed ${SEED} (replay: FUZZ_SEED=${SEED})\n`);
    const anyRequest = fc.constantFrom(...operations).chain((op) => requestFor(op));
    await fc.assert(fc.asyncProperty(anyRequest, send), { numRuns: RUNS, seed: SEED, verbose: 1 });
    // Every documented operation was reached, most of them many times.
    expect([...hits.keys()].sort()).toEqual(operations.map((op) => `${op.method} ${op.path}`).sort());
    expect(Math.min(...hits.values())).toBeGreaterThan(RUNS / operations.length / 4);
  }, 600_000);

  it("still serves the owner afterwards (nothing it did broke the service)", async () => {
    const me = await api.request.get("/me").set("Authorization", `Bearer ${owner.token}`);
    expect(me.status).toBe(200);
    const login = await api.request.post("/auth/login").send({ email: owner.email, password: TEST_PASSWORD });
    expect([200, 429]).toContain(login.status);
  });
});
