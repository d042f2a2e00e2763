/// <reference lib="dom" />
/// <reference lib="dom.asynciterable" />
// The pages' code is typed with the browser's library; with it, fetch bodies are async iterable only through
// dom.asynciterable (bench/ reads them with for await in the same program).
// Progress and live results for front ends (docs/reference/events.md#progress-and-live-results, docs/reference/robustness.md#r51) through the real API, Redis, Postgres, a worker
// process and Chromium: the example page (examples/live-job), served from an origin listed in PUBLIC_TOKEN_ORIGINS,
// shows a running job's progress and output live with nothing but the job's public token; a page of an unlisted
// origin gets no CORS grant; a revoked or expired token stops the stream; a dropped stream resumes its output with no
// gap and no repeat. A public token reads its own job and nothing else; the second organization stays untouched.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import http from "node:http";
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { OUTPUT_MAX_BYTES, OUTPUT_TRUNCATED_MARKER } from "@conveyor/contracts";
import { subscribeToJob } from "@conveyor/client";
import { openSse, repoRoot, waitFor, CHROMIUM_ARGS, CHROMIUM_PATH } from "@conveyor/testkit";
import { startStack, type Stack } from "@conveyor/api/testing/stack";

const artifacts = path.join(repoRoot, "test-artifacts", "live-results");
const work = path.join(tmpdir(), `conveyor-live-${process.pid}`);

let stack: Stack;
let base: string;
let browser: Browser;
let listed: { origin: string; process: ChildProcess };
let reactPage: { origin: string; server: http.Server };
let unlisted: { origin: string; process: ChildProcess };

/** Starts examples/live-job/serve.mjs on a free port, as a person would; resolves with its origin. */
function serveExample(): Promise<{ origin: string; process: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(repoRoot, "examples/live-job/serve.mjs"), "0"], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (data: Buffer) => {
      out += data.toString();
      const origin = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      if (origin) resolve({ origin, process: child });
    });
    child.once("exit", (code) => reject(new Error(`the example server exited (${code})`)));
  });
}

/** A React page whose component follows a job with useJob (@conveyor/client/react), bundled as a browser app would be. */
async function serveReactPage(): Promise<{ origin: string; server: http.Server }> {
  // esbuild (Vite's bundler, in the workspace) bundles React and the hook's entry point, as an app's build would.
  const esbuild = (await import("esbuild")) as typeof import("esbuild");
  const bundle = await esbuild.build({
    stdin: {
      contents: `
        import { createElement as h } from "react";
        import { createRoot } from "react-dom/client";
        import { useJob } from "@conveyor/client/react";
        function Job() {
          const q = new URLSearchParams(location.search);
          const { job, progress, output, error } = useJob(q.get("job"), q.get("token"), { baseUrl: q.get("api") });
          return h("main", null,
            h("p", { "data-testid": "status" }, job ? job.status : "—"),
            h("p", { "data-testid": "fraction" }, progress ? String(progress.fraction) : ""),
            h("pre", { "data-testid": "output" }, output),
            h("p", { "data-testid": "error" }, error ? error.message : ""));
        }
        createRoot(document.getElementById("root")).render(h(Job));`,
      resolveDir: repoRoot,
      loader: "js",
    },
    bundle: true,
    format: "iife",
    write: false,
    conditions: ["conveyor-source"],
    define: { "process.env.NODE_ENV": '"production"' },
  });
  const script = bundle.outputFiles[0]!.text;
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith("/app.js")) return void res.writeHead(200, { "Content-Type": "text/javascript" }).end(script);
    res.writeHead(200, { "Content-Type": "text/html" }).end('<!doctype html><title>useJob</title><div id="root"></div><script src="/app.js"></script>');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  mkdirSync(work, { recursive: true });
  // The page imports the client's browser build.
  execFileSync(process.execPath, [path.join(repoRoot, "packages/client/scripts/build.mjs")], { stdio: "inherit" });
  [listed, unlisted, reactPage] = await Promise.all([serveExample(), serveExample(), serveReactPage()]);
  stack = await startStack({ apiEnv: { PUBLIC_TOKEN_ORIGINS: `${listed.origin},${reactPage.origin}` } });
  base = await stack.api.listen();
  await stack.registerPluginTypes();
  await stack.startWorker();
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}, 240_000);
afterEach(() => stack.expectOtherOrgUntouched());
afterAll(async () => {
  await browser?.close();
  listed?.process.kill();
  unlisted?.process.kill();
  reactPage?.server.close();
  await stack?.close();
});

const key = () => ({ "X-API-Key": stack.apiKey });

/** A scripted job that reports `steps` steps, then (with `hold`) waits until the test lets it finish. */
async function liveJob(live: Record<string, unknown>, hold?: string): Promise<string> {
  const res = await stack.post("/jobs", { type: "scripted", payload: { live, ...(hold ? { until_file: hold } : {}) } });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

async function publicToken(jobId: string, ttlSeconds?: number): Promise<{ id: string; token: string }> {
  const res = await stack.post(`/jobs/${jobId}/public-token`, ttlSeconds === undefined ? {} : { ttl_seconds: ttlSeconds });
  expect(res.status).toBe(201);
  return res.body;
}

const lines = (from: number, to: number, prefix = "line ") => Array.from({ length: to - from + 1 }, (_, i) => `${prefix}${from + i}\n`).join("");

async function openExample(origin: string, jobId: string, token: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${origin}/?${new URLSearchParams({ api: base, job: jobId, token }).toString()}`);
  return page;
}

const text = (page: Page, id: string) => page.getByTestId(id).textContent();
const fraction = (page: Page) => page.getByTestId("progress").evaluate((el) => (el as unknown as { value: number }).value);

it("shows a running job's progress and output live on a page of a listed origin, with only its public token", async () => {
  const hold = path.join(work, "release-1");
  const gate = path.join(work, "gate-1");
  const id = await liveJob({ steps: 10, gate }, hold);
  const { token } = await publicToken(id);
  const page = await openExample(listed.origin, id, token);

  // Live: each step appears on the page as the worker reports it (each step waits for the test's file).
  await waitFor(async () => (await text(page, "output")) === lines(1, 1), "the page to show the first step", 30_000);
  await waitFor(async () => (await fraction(page)) === 0.1, "the page to show progress 10 %", 30_000);
  for (const step of [2, 5, 10]) {
    for (let i = step === 2 ? 2 : step === 5 ? 3 : 6; i <= step; i++) writeFileSync(`${gate}-${i}`, "");
    await waitFor(async () => (await text(page, "output")) === lines(1, step), `the page to show step ${step} while the job runs`, 30_000);
    // Progress events are coalesced (at most 4 a second, docs/reference/events.md#progress-and-live-results), so the message may trail the output by one window.
    await waitFor(async () => (await text(page, "message")) === `${step * 10} % — step ${step}`, `the page to show progress ${step * 10} %`, 30_000);
  }
  expect(await fraction(page)).toBe(1);
  expect(await text(page, "status")).toBe("processing");
  await page.screenshot({ path: path.join(artifacts, "listed-origin-running.png") });

  writeFileSync(hold, "");
  await waitFor(async () => (await text(page, "status")) === "done", "the page to show the job done", 30_000);
  expect(await text(page, "output")).toBe(lines(1, 10));
  expect(await text(page, "error")).toBe("");
  await page.screenshot({ path: path.join(artifacts, "listed-origin-done.png") });

  // The same output, whole, from the API; and the job carries its last progress.
  const output = await stack.api.request.get(`/jobs/${id}/output`).set(key());
  expect(output.status).toBe(200);
  expect(output.body).toEqual({ job_id: id, output: lines(1, 10), bytes: Buffer.byteLength(lines(1, 10)) });
  const job = await stack.api.request.get(`/jobs/${id}`).set("Authorization", `Bearer ${token}`);
  expect(job.status).toBe(200);
  expect(job.body.progress).toEqual({ fraction: 1, message: "step 10", at: expect.any(String) });
  await page.close();
}, 90_000);

it("useJob (@conveyor/client/react) renders a job's status, progress and output live in a React page", async () => {
  const hold = path.join(work, "release-react");
  const id = await liveJob({ steps: 6, step_ms: 100, chunk: "token " }, hold);
  const { token } = await publicToken(id);
  const page = await browser.newPage();
  await page.goto(`${reactPage.origin}/?${new URLSearchParams({ api: base, job: id, token }).toString()}`);
  await waitFor(async () => (await text(page, "output")) === lines(1, 6, "token "), "the hook to render the whole output", 30_000);
  expect(await text(page, "status")).toBe("processing");
  expect(await text(page, "fraction")).toBe("1");
  writeFileSync(hold, "");
  await waitFor(async () => (await text(page, "status")) === "done", "the hook to render the job done", 30_000);
  expect(await text(page, "error")).toBe("");
  await page.screenshot({ path: path.join(artifacts, "react-use-job.png") });
  await page.close();
}, 60_000);

it("gives a page of an unlisted origin no CORS grant: the browser refuses it the job", async () => {
  const id = await liveJob({ steps: 2 });
  await stack.waitForJob(id, (j) => j.status === "done");
  const { token } = await publicToken(id);
  const page = await openExample(unlisted.origin, id, token);
  await waitFor(async () => (await text(page, "error")) || null, "the page to say its stream was refused", 20_000);
  expect(await text(page, "output")).toBe("");
  expect(await text(page, "status")).toBe("—");
  // fetch from that origin is refused by the browser too, with the token in the header or the query.
  const refused = await page.evaluate(
    async ([url, t]) => {
      const results: string[] = [];
      for (const init of [{ headers: { Authorization: `Bearer ${t}` } }, {}]) {
        try {
          await fetch(init.headers ? url! : `${url}?token=${t}`, init);
          results.push("read");
        } catch {
          results.push("refused");
        }
      }
      return results;
    },
    [`${base}/jobs/${id}`, token],
  );
  expect(refused).toEqual(["refused", "refused"]);
  await page.screenshot({ path: path.join(artifacts, "unlisted-origin.png") });
  await page.close();

  // What the browser saw: no grant for that origin, a grant (without credentials) for the listed one.
  const asUnlisted = await fetch(`${base}/jobs/${id}?token=${token}`, { headers: { Origin: unlisted.origin } });
  expect(asUnlisted.headers.get("access-control-allow-origin")).toBeNull();
  const asListed = await fetch(`${base}/jobs/${id}?token=${token}`, { headers: { Origin: listed.origin } });
  expect(asListed.status).toBe(200);
  expect(asListed.headers.get("access-control-allow-origin")).toBe(listed.origin);
  expect(asListed.headers.get("access-control-allow-credentials")).toBeNull();
  const preflight = await fetch(`${base}/jobs/${id}`, {
    method: "OPTIONS",
    headers: { Origin: listed.origin, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization" },
  });
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get("access-control-allow-headers")).toMatch(/Authorization/);
  // Nothing else is granted to the listed origin: the job list, another org's paths.
  const list = await fetch(`${base}/jobs`, { headers: { Origin: listed.origin, "X-API-Key": stack.apiKey } });
  expect(list.headers.get("access-control-allow-origin")).toBeNull();
}, 60_000);

it("stops the page's stream when its token is revoked, and when it expires", async () => {
  const hold = path.join(work, "release-3");
  const id = await liveJob({ steps: 3 }, hold);
  const revoked = await publicToken(id);
  const expiring = await publicToken(id, 5);
  const [page, other] = await Promise.all([openExample(listed.origin, id, revoked.token), openExample(listed.origin, id, expiring.token)]);
  await waitFor(async () => (await text(page, "output")) === lines(1, 3), "the first page to follow the job");
  await waitFor(async () => (await text(other, "output")) === lines(1, 3), "the second page to follow the job");

  const res = await stack.api.request.delete(`/jobs/${id}/public-tokens/${revoked.id}`).set(key());
  expect(res.status).toBe(204);
  await waitFor(async () => (await text(page, "error")) || null, "the revoked token's page to stop", 20_000);
  // The API's clock (which the test moves) passes the other token's expiry: its stream ends at the next check.
  stack.api.clock.advance(10_000);
  await waitFor(async () => (await text(other, "error")) || null, "the expired token's page to stop", 20_000);
  await page.screenshot({ path: path.join(artifacts, "revoked.png") });
  // Both are refused from now on; a second revocation finds nothing.
  for (const token of [revoked.token, expiring.token]) {
    expect((await stack.api.request.get(`/jobs/${id}`).set("Authorization", `Bearer ${token}`)).status).toBe(401);
  }
  expect((await stack.api.request.delete(`/jobs/${id}/public-tokens/${revoked.id}`).set(key())).status).toBe(404);
  writeFileSync(hold, "");
  await stack.waitForJob(id, (j) => j.status === "done");
  await Promise.all([page.close(), other.close()]);
}, 90_000);

it("resumes a dropped stream with Last-Event-ID: the output has no gap and no repeat (Node, fetch)", async () => {
  const id = await liveJob({ steps: 30, step_ms: 60 });
  const { token } = await publicToken(id);
  // The first two connections are cut after a few hundred bytes, mid-stream.
  let connections = 0;
  const resumedWith: (string | null)[] = [];
  const cutting: typeof fetch = async (input, init) => {
    connections++;
    resumedWith.push(new Headers(init?.headers).get("Last-Event-ID"));
    const res = await fetch(input, init);
    if (connections > 2 || !res.body) return res;
    let seen = 0;
    const cut = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.length;
          controller.enqueue(chunk);
          if (seen > 600) controller.error(new Error("connection cut"));
        },
      }),
    );
    return new Response(cut, { status: res.status, headers: res.headers });
  };
  const pieces: string[] = [];
  let whole = "";
  const ended = new Promise<void>((resolve, reject) => {
    subscribeToJob(
      id,
      token,
      {
        onOutput(chunk, output) {
          pieces.push(chunk);
          whole = output;
        },
        onEnd: () => resolve(),
        onError: reject,
      },
      { baseUrl: base, transport: "fetch", fetch: cutting, retryMs: 50 },
    );
  });
  await Promise.race([ended, new Promise((_, reject) => setTimeout(() => reject(new Error("the subscription did not end")), 40_000))]);
  expect(connections).toBeGreaterThanOrEqual(3);
  expect(resumedWith[0]).toBeNull();
  expect(resumedWith.slice(1).every((id) => id !== null)).toBe(true);
  expect(whole).toBe(lines(1, 30));
  expect(pieces.join("")).toBe(lines(1, 30));
}, 60_000);

it("lets a public token read its own job only: not another job, not the list, not any action", async () => {
  const id = await liveJob({ steps: 1 });
  const otherJob = await liveJob({ steps: 1 });
  const { token } = await publicToken(id);
  const bearer = { Authorization: `Bearer ${token}` };
  for (const target of [id, otherJob]) await stack.waitForJob(target, (j) => j.status === "done");

  expect((await stack.api.request.get(`/jobs/${id}`).set(bearer)).status).toBe(200);
  expect((await stack.api.request.get(`/jobs/${id}?token=${token}`)).status).toBe(200);
  expect((await stack.api.request.get(`/jobs/${id}/output`).set(bearer)).status).toBe(200);
  const own = await openSse(`${base}/jobs/${id}/events?token=${token}`);
  expect(own.status).toBe(200);
  await own.ended;
  // Progress is coalesced (docs/reference/events.md#progress-and-live-results), so its event may be written after the output the handler sent next.
  const names = own.events.map((e) => e.event);
  expect([...names.slice(0, 2), names.at(-1)]).toEqual(["job.created", "job.started", "job.succeeded"]);
  expect(names.slice(2, -1).sort()).toEqual(["job.output", "job.progress"]);

  // Another job of the same org: 404, as if it did not exist.
  for (const p of [`/jobs/${otherJob}`, `/jobs/${otherJob}/output`, `/jobs/${otherJob}/events`]) {
    const res = await stack.api.request.get(p).set(bearer);
    expect([p, res.status, res.body.error.code]).toEqual([p, 404, "not_found"]);
  }
  // The second org's job: 404 too.
  expect((await stack.api.request.get(`/jobs/${stack.otherOrg.jobId}`).set(bearer)).status).toBe(404);
  // Everything else: not a credential at all (401), revealing nothing.
  const elsewhere: [string, Promise<{ status: number; body: any }>][] = [
    ["GET /jobs", stack.api.request.get("/jobs").set(bearer)],
    ["GET /jobs?token=", stack.api.request.get(`/jobs?token=${token}`)],
    ["GET logs", stack.api.request.get(`/jobs/${id}/logs`).set(bearer)],
    ["GET artifact", stack.api.request.get(`/jobs/${id}/artifact`).set(bearer)],
    ["GET /events", stack.api.request.get("/events").set(bearer)],
    ["POST replay", stack.api.request.post(`/jobs/${id}/replay`).set(bearer).send({})],
    ["POST cancel", stack.api.request.post(`/jobs/${id}/cancel`).set(bearer).send({})],
    ["POST public-token", stack.api.request.post(`/jobs/${id}/public-token`).set(bearer).send({})],
    ["POST /jobs", stack.api.request.post("/jobs").set(bearer).send({ type: "scripted", payload: {} })],
    ["GET /me", stack.api.request.get("/me").set(bearer)],
  ];
  for (const [what, request] of elsewhere) {
    const res = await request;
    expect([what, res.status, res.body.error.code]).toEqual([what, 401, "unauthorized"]);
    expect(JSON.stringify(res.body)).not.toContain(id);
  }
  // Bad requests for a token: a TTL past 24 h, a malformed id.
  expect((await stack.post(`/jobs/${id}/public-token`, { ttl_seconds: 86_401 })).status).toBe(400);
  expect((await stack.post(`/jobs/not-a-job/public-token`, {})).status).toBe(404);
  expect((await stack.post(`/jobs/${stack.otherOrg.jobId}/public-token`, {})).status).toBe(404);
  // The token never reaches the logs.
  expect(stack.api.logs()).not.toContain(token.slice(5));
}, 60_000);

it("coalesces progress to at most 4 events a second, ignores bad fractions with a warning, and cuts output past 1 MiB", async () => {
  const id = await liveJob({ steps: 60, step_ms: 10, bad_progress: true });
  const done = await stack.waitForJob(id, (j) => j.status === "done", 30_000);
  expect(done.status).toBe("done");
  const { rows } = await stack.api.database.db.pool.query<{ type: string; time: Date; data: { progress: { fraction: number } | null } }>(
    "SELECT type, time, data FROM events WHERE job_id = $1 AND type = 'job.progress' ORDER BY id",
    [id],
  );
  const ms = rows[rows.length - 1]!.time.getTime() - rows[0]!.time.getTime();
  // 60 reports over about 600 ms: a handful of events, never two within a round (250 ms) — the attempt's last report,
  // when it comes sooner, rides on its terminal event.
  // (One interval of slack: an event's time is its transaction's start, which a busy database can delay.)
  expect(rows.length).toBeLessThanOrEqual(Math.floor(ms / 250) + 2);
  expect(rows.length).toBeLessThan(60);
  const succeeded = await stack.api.database.db.pool.query<{ data: { progress: { fraction: number } | null } }>(
    "SELECT data FROM events WHERE job_id = $1 AND type = 'job.succeeded'",
    [id],
  );
  expect(succeeded.rows[0]!.data.progress?.fraction).toBe(1);
  const warnings = (await stack.logs(id)).filter((l) => l.level === "warn" && l.message.includes("ctx.progress"));
  expect(warnings).toHaveLength(1);
  expect(warnings[0]!.message).toContain("null"); // NaN, as JSON writes it

  // 12 steps of 100,000 characters: cut at 1 MiB with the marker, the job still done.
  const big = await liveJob({ steps: 12, chunk: "x".repeat(100_000) });
  await stack.waitForJob(big, (j) => j.status === "done", 30_000);
  const output = await stack.api.request.get(`/jobs/${big}/output`).set(key());
  expect(output.body.output.endsWith(OUTPUT_TRUNCATED_MARKER)).toBe(true);
  expect(output.body.bytes).toBe(OUTPUT_MAX_BYTES + Buffer.byteLength(OUTPUT_TRUNCATED_MARKER));
  expect(output.body.output.startsWith(`${"x".repeat(100_000)}1\n${"x".repeat(100_000)}2\n`)).toBe(true);
}, 60_000);
