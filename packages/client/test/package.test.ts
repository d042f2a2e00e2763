// @conveyor/client as a service gets it: `npm pack` of the package (its prepack builds dist/ from nothing),
// installed with npm into a new project under the system's temporary folder (outside this repository, so nothing
// resolves from the workspace), type-checked there by the installed TypeScript with the package's declarations
// checked too, and run as an ES module and as CommonJS against a real API and worker: enqueue, poll until done,
// list, read the job's events. A built-in payload missing a field must not compile.
//
// The machine may have no network: the project installs with `--offline` and an empty cache, from the packed
// client plus tarballs packed from the workspace's own copies of its dependencies (and TypeScript, @types/node).
import { execFile } from "node:child_process";
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startSlackFake, type SlackFake } from "@conveyor/testkit/fakes";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, "../../..");
const PACKAGE = path.resolve(__dirname, "..");

/** npm without the settings `npm test` passes down (npm_config_*), which would point it back at the workspace. */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
}

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run("npm", args, { cwd, env: npmEnv(), maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** A command's exit code and output, failing or not. */
async function outcome(file: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === "number" ? failed.code : -1, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

/** Where Node would find `name` from `dir`: the nearest node_modules holding it. */
function installedDir(name: string, dir: string): string {
  for (let at = dir; ; at = path.dirname(at)) {
    const candidate = path.join(at, "node_modules", name);
    if (existsSync(path.join(candidate, "package.json"))) return candidate;
    if (at === path.dirname(at)) throw new Error(`${name} is not installed (looked from ${dir})`);
  }
}

/** The installed folders of `names` and of everything they depend on, one version per name. */
function dependencyClosure(names: string[], from: string, found = new Map<string, string>()): Map<string, string> {
  for (const name of names) {
    const dir = installedDir(name, from);
    const seen = found.get(name);
    if (seen && seen !== dir) throw new Error(`two copies of ${name} are needed (${seen}, ${dir}): a flat offline install cannot hold both`);
    if (seen) continue;
    found.set(name, dir);
    const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
    dependencyClosure(Object.keys(manifest.dependencies ?? {}), dir, found);
  }
  return found;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

const CONSUMER_TSCONFIG = {
  // A Node service's settings: no DOM library, and the libraries' declarations checked too (skipLibCheck off),
  // so a declaration the package does not ship is an error rather than a silent `any`.
  compilerOptions: {
    target: "es2022",
    module: "nodenext",
    moduleResolution: "nodenext",
    strict: true,
    skipLibCheck: false,
    lib: ["es2023"],
    types: ["node"],
    rootDir: "src",
    outDir: "out",
  },
  include: ["src"],
};

/** A built-in job missing a required payload field, through each typed helper; `fixed` adds the field back. */
const wrongPayload = (fixed: boolean) => `import { createConveyorClient, newJob } from "@conveyor/client";
const conveyor = createConveyorClient({ baseUrl: "http://localhost:3000", apiKey: "cvk_example" });
export const enqueued = await conveyor.enqueue("send_email", { to: "ada@example.com", subject: "Welcome"${fixed ? ', body: "Hi"' : ""} });
export const body = newJob("send_email", { to: "ada@example.com", subject: "Welcome"${fixed ? ', body: "Hi"' : ""} }, { max_retries: 3 });
`;

let work: string;
let project: string;
let tarball: string;
let tsc: string;
let compiled: { code: number; output: string };

beforeAll(async () => {
  work = mkdtempSync(path.join(os.tmpdir(), "conveyor-client-package-"));
  project = path.join(work, "service");
  mkdirSync(path.join(project, "src"), { recursive: true });
  mkdirSync(path.join(work, "deps"));

  // From nothing built: what the tarball holds comes from prepack.
  rmSync(path.join(PACKAGE, "dist"), { recursive: true, force: true });
  const packed = await npm(["pack", "-w", "@conveyor/client", "--pack-destination", work], ROOT);
  tarball = path.join(work, packed.trim().split("\n").at(-1)!);

  const client = JSON.parse(readFileSync(path.join(PACKAGE, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  const deps = dependencyClosure([...Object.keys(client.dependencies), "typescript", "@types/node"], PACKAGE);
  for (const dir of deps.values()) await npm(["pack", "--ignore-scripts", "--pack-destination", path.join(work, "deps"), dir], work);
  const depTarballs = readdirSync(path.join(work, "deps")).map((name) => path.join(work, "deps", name));

  writeFileSync(path.join(project, "package.json"), `${JSON.stringify({ name: "a-service", version: "1.0.0", private: true }, null, 2)}\n`);
  // An empty cache and --offline: npm fails rather than fetch anything.
  await npm(["install", "--offline", "--cache", path.join(work, "npm-cache"), "--ignore-scripts", "--no-audit", "--no-fund", tarball, ...depTarballs], project);

  writeFileSync(path.join(project, "tsconfig.json"), JSON.stringify(CONSUMER_TSCONFIG, null, 2));
  for (const extension of ["mts", "cts"]) cpSync(path.join(__dirname, "consumer/consumer.mts"), path.join(project, `src/consumer.${extension}`));
  tsc = path.join(project, "node_modules/typescript/bin/tsc");
  compiled = await outcome(process.execPath, [tsc, "-p", "tsconfig.json"], project);
}, 300_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the packed package", () => {
  it("carries both builds with their declarations and the generated schema", async () => {
    const { stdout } = await run("tar", ["-tzf", tarball]);
    const files = stdout.split("\n").map((name) => name.replace(/^package\//, ""));
    for (const build of ["esm", "cjs"]) {
      expect(files).toEqual(
        expect.arrayContaining([`dist/${build}/index.js`, `dist/${build}/index.d.ts`, `dist/${build}/schema.d.ts`, `dist/${build}/package.json`]),
      );
    }
    expect(files.filter((name) => name.startsWith("test/") || name.startsWith("scripts/") || name.startsWith("tsconfig"))).toEqual([]);
  });

  it("needs nothing from this repository once installed", () => {
    const installed = path.join(project, "node_modules/@conveyor/client");
    const manifest = JSON.parse(readFileSync(path.join(installed, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;
    const runtime = { ...manifest.dependencies, ...manifest.peerDependencies, ...manifest.optionalDependencies };
    expect(Object.keys(runtime).filter((name) => name.startsWith("@conveyor/"))).toEqual([]);
    const mentions = filesUnder(installed).filter((file) => /tsconfig\.base|["']@conveyor\/(?!client)/.test(readFileSync(file, "utf8")));
    expect(mentions.map((file) => path.relative(installed, file))).toEqual([]);
    // Installed as files, not a link into the workspace.
    expect(lstatSync(installed).isSymbolicLink()).toBe(false);
    expect(path.relative(ROOT, realpathSync(installed)).startsWith("..")).toBe(true);
  });
});

describe("a service's TypeScript", () => {
  it("compiles the consumer as an ES module and as CommonJS, the package's declarations included", () => {
    expect(compiled).toEqual({ code: 0, output: "" });
    expect(readFileSync(path.join(project, "out/consumer.cjs"), "utf8")).toContain('require("@conveyor/client")');
    expect(readFileSync(path.join(project, "out/consumer.mjs"), "utf8")).toContain('from "@conveyor/client"');
  });

  it("refuses a built-in payload without a required field, and takes it with the field", async () => {
    const check = async (fixed: boolean) => {
      const dir = path.join(project, fixed ? "fixed" : "wrong");
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, "job.mts"), wrongPayload(fixed));
      const tsconfig = { extends: "../tsconfig.json", compilerOptions: { rootDir: ".", noEmit: true }, include: ["."] };
      writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify(tsconfig));
      return outcome(process.execPath, [tsc, "-p", path.join(dir, "tsconfig.json")], project);
    };
    const [wrong, fixed] = await Promise.all([check(false), check(true)]);
    const errors = wrong.output.split("\n").filter((line) => /error TS/.test(line));
    expect(errors).toEqual([
      expect.stringMatching(/^wrong\/job\.mts\(3,\d+\): error TS2345/),
      expect.stringMatching(/^wrong\/job\.mts\(4,\d+\): error TS2345/),
    ]);
    expect(wrong.output).toMatch(/Property 'body' is missing/);
    expect(fixed).toEqual({ code: 0, output: "" });
  }, 240_000);
});

describe("the consumer against a real API and worker", () => {
  let stack: Stack;
  let slack: SlackFake;
  let base: string;
  beforeAll(async () => {
    slack = await startSlackFake({ channels: ["ops"] });
    stack = await startStack({ workerEnv: { WORKER_TYPES: "chat_notify,word_count", CHAT_WEBHOOK_URL: slack.webhookUrl } });
    await stack.startWorker();
    base = await stack.api.listen();
  }, 120_000);
  afterEach(() => stack?.expectOtherOrgUntouched());
  afterAll(async () => {
    await stack?.close();
    await slack?.close();
  });

  it.each(["mjs", "cjs"])("%s: enqueues, polls until done, lists and reads the job's events", async (extension) => {
    const { code, output } = await outcome(process.execPath, [path.join(project, `out/consumer.${extension}`), base, stack.apiKey, extension], project);
    expect({ code, output: code === 0 ? "" : output }).toEqual({ code: 0, output: "" });
    const report = JSON.parse(output) as {
      types: string[];
      jobs: { id: string; type: string; status: string; result: unknown }[];
      listed: string[];
      events: { type: string; job_id: string }[];
    };
    const [notify, counted] = report.jobs;
    expect(report.jobs).toEqual([
      { id: expect.any(String), type: "chat_notify", status: "done", result: expect.objectContaining({}) },
      { id: expect.any(String), type: "word_count", status: "done", result: expect.objectContaining({ words: 6 }) },
    ]);
    expect(slack.posted.map((message) => message.text)).toContain(`from the ${extension} consumer`);
    expect(report.listed).toEqual(expect.arrayContaining([notify!.id, counted!.id]));
    expect(report.events).toEqual(["job.created", "job.started", "job.succeeded"].map((type) => ({ type, job_id: notify!.id })));
    expect(report.types).toContain("send_email");
  });
});
