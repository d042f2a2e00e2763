// A client generated from the live document with openapi-typescript (default options) + openapi-fetch must
// accept what the API accepts: every job example of the README, a plugin job and a batch type-check, and the
// API takes each of them. A request the API refuses for its shape must not type-check, or this proves nothing.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import ts from "typescript";
import { createOrg, type TestMember, startTestApi, type TestApi } from "@conveyor/api/testing";

const ROOT = path.resolve(__dirname, "../../..");
const OUT = path.join(ROOT, "test-artifacts", "generated-client");

/**
 * The JSON bodies of POST /jobs in the README: every `'{"type":…}'` between single quotes. A shell variable spliced into
 * one (`"'$WAITPOINT'"`) is given its value from `values`.
 */
function readmeJobs(values: Record<string, string> = {}): { type: string; payload: Record<string, unknown>; max_retries?: number }[] {
  const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
  return [...readme.matchAll(/'(\{"type":[\s\S]*?\})'/g)].map((m) =>
    JSON.parse(m[1]!.replace(/'\$([A-Z_]+)'/g, (_, name: string) => values[name] ?? `$${name}`)),
  );
}

/** openapi-typescript with its default options; it is an ES module, so it runs in a child process. */
function generateTypes(document: unknown): string {
  const script = `import openapiTS, { astToString } from "openapi-typescript";
    let input = ""; for await (const chunk of process.stdin) input += chunk;
    process.stdout.write(astToString(await openapiTS(JSON.parse(input))));`;
  return execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, input: JSON.stringify(document), encoding: "utf8" });
}

function typeErrors(files: Record<string, string>): string[] {
  mkdirSync(OUT, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(OUT, name), text);
  const program = ts.createProgram(
    Object.keys(files)
      .filter((f) => f.endsWith(".ts"))
      .map((f) => path.join(OUT, f)),
    {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: [],
      skipLibCheck: true,
    },
  );
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file ? path.basename(d.file.fileName) : ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
}

let api: TestApi;
let owner: TestMember;
let schema: string;
beforeAll(async () => {
  api = await startTestApi();
  owner = await createOrg(api.database.db, api.deps.config);
  await api.database.db.pool.query("INSERT INTO job_types (name) VALUES ('word_count') ON CONFLICT DO NOTHING");
  const doc = await api.request.get("/openapi.json");
  schema = generateTypes(doc.body);
}, 60_000);
afterAll(() => api.close());

const client = `import createClient from "openapi-fetch";\nimport type { paths } from "./schema";\nexport const client = createClient<paths>({ baseUrl: "http://localhost:3000" });\n`;

describe("a client generated from /openapi.json", () => {
  it("finds the README's job examples, a plugin type among them", () => {
    const types = readmeJobs().map((j) => j.type);
    expect(types).toEqual(
      expect.arrayContaining([
        "send_email",
        "send_sms",
        "webhook",
        "generate_pdf",
        "compress_image",
        "ai_summarize",
        "mobile_money_stk",
        "chat_notify",
        "word_count",
      ]),
    );
  });

  it("type-checks POST /jobs for every README example and POST /jobs/batch with all of them", () => {
    const jobs = readmeJobs();
    const calls = jobs.map((job, i) => `export const r${i} = client.POST("/jobs", { body: ${JSON.stringify(job)} });`);
    calls.push(`export const batch = client.POST("/jobs/batch", { body: { jobs: ${JSON.stringify(jobs)} } });`);
    calls.push(`export const plugin = client.POST("/jobs", { body: { type: "invoice_sync", payload: { anything: [1, "two"] } } });`);
    expect(typeErrors({ "schema.ts": schema, "client.ts": client, "requests.ts": `import { client } from "./client";\n${calls.join("\n")}\n` })).toEqual([]);
  });

  it("does not type-check requests the API refuses for their shape (the check can fail)", () => {
    const wrong = [
      `export const a = client.POST("/jobs", { body: { type: "webhook" } });`,
      `export const b = client.POST("/jobs", { body: { type: "send_email", payload: { to: "a@example.com", subject: "s", body: "b" }, max_retries: "3" } });`,
    ];
    for (const call of wrong) {
      expect(typeErrors({ "schema.ts": schema, "client.ts": client, "wrong.ts": `import { client } from "./client";\n${call}\n` }).length).toBeGreaterThan(0);
    }
  });

  it("is right about the examples: the API accepts each of them", async () => {
    const waitpoint = await api.request.post("/waitpoints").set("Authorization", `Bearer ${owner.token}`).send({});
    expect(waitpoint.status).toBe(201);
    for (const job of readmeJobs({ WAITPOINT: waitpoint.body.id as string })) {
      const res = await api.request.post("/jobs").set("Authorization", `Bearer ${owner.token}`).send(job);
      if (res.status !== 202) throw new Error(`${job.type}: ${res.status} ${JSON.stringify(res.body)}`);
    }
  });
});
