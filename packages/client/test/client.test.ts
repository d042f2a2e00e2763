// The typed client: its generated files (made at install, never committed) match a generation from the document the
// API's declarations give now, a stale one is found, git keeps them out, the README's example compiles against it (and a wrong payload does not), and it talks to a real API
// with an API key — typed success, docs/reference/http.md#errors errors, the CSRF header on state-changing requests only.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { createApiKey, createOrg, startTestApi, type TestApi } from "@conveyor/api/testing";
import { BUILT_IN_JOB_TYPES, createConveyorClient, newJob } from "../src";

const ROOT = path.resolve(__dirname, "../../..");
const OUT = path.join(ROOT, "test-artifacts/client-example");

function typeErrors(source: string): string[] {
  mkdirSync(OUT, { recursive: true });
  // An ES module, as a service using top-level await is.
  const file = path.join(OUT, "example.mts");
  writeFileSync(file, source);
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    customConditions: ["conveyor-source"],
    lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
    types: ["node"],
    skipLibCheck: true,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
}

const readmeExample = () => {
  const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Typed client"));
  return /```ts\n([\s\S]*?)```/.exec(section)![1]!;
};

describe("the generated schema", () => {
  const node = (...args: string[]) =>
    execFileSync(process.execPath, ["--conditions=conveyor-source", "--import", "tsx", ...args], { cwd: ROOT, encoding: "utf8", stdio: "pipe" });
  const check =
    (...args: string[]) =>
    () =>
      node("packages/client/scripts/generate.ts", "--check", ...args);
  const FRESH = path.join(OUT, "openapi.json");

  // The document the API writes now, from its endpoint declarations, not the copy the install wrote.
  beforeAll(() => {
    mkdirSync(OUT, { recursive: true });
    node("apps/api/src/cli/openapi.ts", FRESH);
  }, 60_000);

  it("matches a generation from the API's document as its declarations give it now (after an endpoint change: npm run openapi && npm run generate -w @conveyor/client)", () => {
    expect(check("--document", FRESH)).not.toThrow();
  }, 60_000);

  it("is found stale when a generated file differs from what the document gives (the check can fail)", () => {
    const stale = path.join(OUT, "stale");
    mkdirSync(path.join(stale, "src"), { recursive: true });
    for (const name of ["src/schema.d.ts", "src/job-types.ts"]) {
      writeFileSync(path.join(stale, name), readFileSync(path.join(ROOT, "packages/client", name), "utf8"));
    }
    writeFileSync(path.join(stale, "src/schema.d.ts"), readFileSync(path.join(stale, "src/schema.d.ts"), "utf8").replace("/jobs", "/jobz"));
    expect(check("--document", FRESH, "--out", stale)).toThrow(/schema\.d\.ts differs/);
  }, 60_000);

  it("is build output: git ignores it and tracks no copy", () => {
    const files = ["packages/client/openapi.json", "packages/client/src/schema.d.ts", "packages/client/src/job-types.ts"];
    const git = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" });
    expect(git("ls-files", "--", ...files)).toBe("");
    expect(
      git("check-ignore", ...files)
        .trim()
        .split("\n"),
    ).toEqual(files);
  });
});

describe("the README's example", () => {
  it("type-checks against the client", () => {
    expect(typeErrors(`export {};\n${readmeExample()}`)).toEqual([]);
  }, 60_000);

  it("does not type-check with a wrong body (the check can fail)", () => {
    const wrong = readmeExample().replace("max_retries: 3", 'max_retries: "3"');
    expect(wrong).not.toBe(readmeExample());
    expect(typeErrors(`export {};\n${wrong}`).join("\n")).toMatch(/max_retries|not assignable/);
  }, 60_000);
});

describe("the README's example without a built-in payload's required field", () => {
  it("does not type-check (enqueue tells a built-in type from a plugin type)", () => {
    const wrong = readmeExample().replace(', body: "Hi Ada!"', "");
    expect(wrong).not.toBe(readmeExample());
    expect(typeErrors(`export {};\n${wrong}`).join("\n")).toMatch(/Property 'body' is missing/);
  }, 60_000);
});

describe("against a real API", () => {
  let api: TestApi;
  let base: string;
  let key: string;
  beforeAll(async () => {
    api = await startTestApi();
    const owner = await createOrg(api.database.db, api.deps.config);
    key = (await createApiKey(api.database.db, owner)).key;
    base = await api.listen();
  });
  afterAll(() => api.close());

  it("enqueues a typed send_email job with an API key and reads it back", async () => {
    const conveyor = createConveyorClient({ baseUrl: base, apiKey: key });
    const { data, error, response } = await conveyor.POST("/jobs", {
      body: { type: "send_email", payload: { to: "ada@example.com", subject: "Welcome", body: "Hi" }, max_retries: 3 },
    });
    expect([response.status, error]).toEqual([202, undefined]);
    const job = await conveyor.GET("/jobs/{id}", { params: { path: { id: data!.id } } });
    expect(job.data).toMatchObject({ id: data!.id, type: "send_email", max_retries: 3, payload: { to: "ada@example.com" } });
  });

  it("enqueue: sends the typed body and the idempotency key, and answers a refusal with its error", async () => {
    const conveyor = createConveyorClient({ baseUrl: base, apiKey: key });
    const payload = { to: "+254712345678", message: "Your code is 482913." };
    const first = await conveyor.enqueue("send_sms", payload, { max_retries: 2, priority: 9, idempotencyKey: "client-test-1" });
    expect([first.response.status, first.error]).toEqual([202, undefined]);
    const repeat = await conveyor.enqueue("send_sms", payload, { max_retries: 2, priority: 9, idempotencyKey: "client-test-1" });
    expect([repeat.response.status, repeat.data?.id]).toEqual([200, first.data!.id]);
    const stored = await conveyor.GET("/jobs/{id}", { params: { path: { id: first.data!.id } } });
    expect(stored.data).toMatchObject({ type: "send_sms", payload, max_retries: 2, priority: 9 });
    const refused = await conveyor.enqueue("send_sms", { to: "not a number", message: "m" });
    expect([refused.response.status, refused.data, refused.error?.error.code]).toEqual([400, undefined, "validation_failed"]);
  });

  it("newJob builds bodies POST /jobs/batch takes, and BUILT_IN_JOB_TYPES is what the API accepts as built in", async () => {
    const conveyor = createConveyorClient({ baseUrl: base, apiKey: key });
    const { data, response } = await conveyor.POST("/jobs/batch", {
      body: { jobs: [newJob("send_email", { to: "ada@example.com", subject: "s", body: "b" }), newJob("chat_notify", { channel: "#ops", text: "t" })] },
    });
    expect([response.status, data?.length]).toEqual([202, 2]);
    const types = await Promise.all(data!.map(async ({ id }) => (await conveyor.GET("/jobs/{id}", { params: { path: { id } } })).data?.type));
    expect(types).toEqual(["send_email", "chat_notify"]);
    const document = (await api.request.get("/openapi.json")).body as {
      components: { schemas: Record<string, { properties?: { type?: { const?: string } } }> };
    };
    const variants = Object.values(document.components.schemas).flatMap((schema) => schema.properties?.type?.const ?? []);
    expect([...BUILT_IN_JOB_TYPES].sort()).toEqual([...new Set(variants)].sort());
  });

  it("answers a refusal with docs/reference/http.md#errors's body", async () => {
    const conveyor = createConveyorClient({ baseUrl: base, apiKey: key });
    const { error, response } = await conveyor.POST("/jobs", { body: { type: "send_email", payload: { to: "not an email", subject: "s", body: "b" } } });
    expect(response.status).toBe(400);
    expect(error?.error.code).toBe("validation_failed");
    const anonymous = await createConveyorClient({ baseUrl: base }).GET("/jobs", {});
    expect(anonymous.response.status).toBe(401);
  });

  it("sends the CSRF token on state-changing requests only, read when each is made", async () => {
    const seen: { method: string; csrf: string | null }[] = [];
    let token = "first";
    const conveyor = createConveyorClient({
      baseUrl: base,
      apiKey: key,
      csrfToken: () => token,
      fetch: (input, init) => {
        const request = new Request(input, init);
        seen.push({ method: request.method, csrf: request.headers.get("x-csrf-token") });
        return fetch(request);
      },
    });
    await conveyor.GET("/jobs", { params: { query: { limit: 1 } } });
    await conveyor.POST("/jobs", { body: { type: "send_email", payload: { to: "a@example.com", subject: "s", body: "b" } } });
    token = "second";
    await conveyor.POST("/jobs", { body: { type: "send_email", payload: { to: "a@example.com", subject: "s", body: "b" } } });
    expect(seen).toEqual([
      { method: "GET", csrf: null },
      { method: "POST", csrf: "first" },
      { method: "POST", csrf: "second" },
    ]);
  });
});
