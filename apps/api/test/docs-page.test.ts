// GET /docs in a real browser: Scalar renders the document from this API alone (no request leaves the
// machine, no console error under the page's strict policy), and the bundle is served for long caching.
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import { createApp } from "../src/app";
import { DOCS_PAGE_POLICY } from "../src/pages/docs";
import { bundlePath } from "../src/pages/docs/bundle";
import { startTestApi, type TestApi } from "@conveyor/api/testing";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "@conveyor/testkit";

const ARTIFACTS = path.resolve(__dirname, "../../../test-artifacts");
/** Keeps a response body as raw bytes (no decompression by the test client). */
const binary = (res: import("supertest").Response, done: (error: Error | null, body: Buffer) => void) => {
  const stream = res as unknown as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  stream.on("end", () => done(null, Buffer.concat(chunks)));
};

describe("GET /docs", () => {
  let api: TestApi;
  let server: Server;
  let base: string;
  let browser: Browser;
  beforeAll(async () => {
    api = await startTestApi();
    server = createApp(api.deps).listen(0, "127.0.0.1");
    await new Promise<void>((resolve) => server.once("listening", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    await api.close();
  });

  it("renders the job endpoints from this API alone, without a console error", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const requests: string[] = [];
    const problems: string[] = [];
    page.on("request", (request) => requests.push(request.url()));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console: ${message.text()}`);
    });
    page.on("pageerror", (error) => problems.push(`page: ${error.message}`));
    page.on("requestfailed", (request) => problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`));

    const res = await page.goto(`${base}/docs`, { waitUntil: "load" });
    expect(res?.status()).toBe(200);
    await page.getByText("Enqueue a job").first().waitFor({ timeout: 30_000 });
    await page.waitForLoadState("networkidle");
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, "docs-page.png") });

    const text = await page.locator("body").innerText();
    expect(text).toMatch(/POST\s+\/jobs\b/);
    expect(text).toMatch(/GET\s+\/jobs\/\{id\}\/logs/);
    expect(problems).toEqual([]);
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((url) => !url.startsWith(`${base}/`) && !/^(data|blob):/.test(url))).toEqual([]);
    expect(requests).toEqual(
      expect.arrayContaining([`${base}/openapi.json`, `${base}/docs/init.js`, expect.stringMatching(/\/docs\/scalar\.js\?v=[0-9a-f]{16}$/)]),
    );

    // The body of POST /jobs: one option per job type, from the discriminated oneOf.
    await page.getByText("Enqueue a job").first().click();
    await page.getByText("One of").first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(ARTIFACTS, "docs-page-post-jobs.png") });
    // Scalar renders an operation's body lazily: the job types appear once POST /jobs is open.
    expect(await page.locator("body").innerText()).toContain("send_email");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("serves the console, not a redirect, at the API's root (apps/api/test/console-pages.test.ts has the rest)", async () => {
    const res = await fetch(`${base}/`, { redirect: "manual" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
  });

  it("serves the page with a policy that allows scripts from this origin only and nothing external", async () => {
    const res = await api.request.get("/docs");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    const policy = res.headers["content-security-policy"] as string;
    expect(policy).toBe(DOCS_PAGE_POLICY);
    expect(policy).toMatch(/(^|; )default-src 'none'/);
    expect(policy).toMatch(/(^|; )script-src 'self'(;|$)/);
    expect(policy).not.toMatch(/https?:|\*/);
    expect(res.text).toMatch(/<script src="\/docs\/scalar\.js\?v=[0-9a-f]{16}"><\/script>/);
    expect(res.text).not.toMatch(/<script>/);
  });

  it("serves the bundle for a year's caching, gzipped when the client accepts it, and 304 for a known version", async () => {
    const original = readFileSync(bundlePath()!);
    const plain = await api.request.get("/docs/scalar.js").set("Accept-Encoding", "identity").buffer(true).parse(binary);
    expect(plain.status).toBe(200);
    expect(plain.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(plain.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(Buffer.compare(plain.body as Buffer, original)).toBe(0);

    const gzipped = await api.request.get("/docs/scalar.js").set("Accept-Encoding", "gzip, br").buffer(true).parse(binary);
    expect(gzipped.headers["content-encoding"]).toBe("gzip");
    expect(Number(gzipped.headers["content-length"])).toBeLessThan(original.length / 2);

    const again = await api.request.get("/docs/scalar.js").set("If-None-Match", plain.headers.etag as string);
    expect(again.status).toBe(304);
  });
});
