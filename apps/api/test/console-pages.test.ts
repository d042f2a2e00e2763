// The console served by the API (docs/reference/tenants.md#the-console): its page at / and at the console's routes for browser navigations,
// under the policy of /docs; API clients asking the same paths get the API; hashed assets cached for a year,
// gzipped when accepted; nothing outside the build is readable through /assets; and a clear page when the
// console was not built.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createOrg, startTestApi, type TestApi, type TestMember } from "@conveyor/api/testing";
import { CONSOLE_DIST, CONSOLE_MISSING_HTML, CONSOLE_PAGE_POLICY, consoleBuild } from "../src/pages/console";
import { DOCS_PAGE_POLICY } from "../src/pages/docs";

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
const built = consoleBuild() !== null;

let api: TestApi;
let owner: TestMember;
beforeAll(async () => {
  api = await startTestApi();
  owner = await createOrg(api.database.db, api.deps.config);
});
afterAll(() => api.close());

describe("the console's page", () => {
  it("is served at / under the policy of /docs (plus blob: frames for PDF previews)", async () => {
    const res = await api.request.get("/").set("Accept", BROWSER_ACCEPT);
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(res.headers["cache-control"]).toBe("no-cache");
    expect(res.headers["content-security-policy"]).toBe(CONSOLE_PAGE_POLICY);
    expect(CONSOLE_PAGE_POLICY.startsWith(`${DOCS_PAGE_POLICY}; `)).toBe(true);
    expect(CONSOLE_PAGE_POLICY).not.toMatch(/https?:|\*|'unsafe-eval'/);
    if (built) {
      // Scripts only from files on this origin: the policy would block an inline one.
      expect(res.text).toMatch(/<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js"><\/script>/);
      expect(res.text).not.toMatch(/<script>|<script type="module">/);
      expect(res.text).not.toMatch(/https?:\/\//);
    }
  });

  it.each([
    "/jobs",
    "/jobs/0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01",
    "/team",
    "/login",
    "/schedules",
    "/api-keys",
    "/webhooks",
    "/overview",
    "/account",
    "/signup",
  ])("is what a browser navigating to %s gets, without a credential", async (route) => {
    const res = await api.request.get(route).set("Accept", BROWSER_ACCEPT);
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(res.headers.vary).toMatch(/Accept/);
  });

  it("leaves the same paths to the API for API clients (JSON or */*)", async () => {
    for (const accept of ["application/json", "*/*", undefined]) {
      const request = api.request.get("/jobs").set("Authorization", `Bearer ${owner.token}`);
      const res = accept ? await request.set("Accept", accept) : await request;
      expect([accept, res.status, res.headers["content-type"]]).toEqual([accept, 200, "application/json; charset=utf-8"]);
      expect(res.headers.vary).toMatch(/Accept/);
    }
    const anonymous = await api.request.get("/jobs").set("Accept", "application/json");
    expect(anonymous.status).toBe(401);
    // A navigation to a path that is not the console's stays the API's.
    const docs = await api.request.get("/openapi.json").set("Accept", BROWSER_ACCEPT);
    expect(docs.headers["content-type"]).toMatch(/^application\/json/);
    const artifact = await api.request.get("/jobs/0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01/artifact").set("Accept", BROWSER_ACCEPT);
    expect(artifact.status).toBe(401);
    // Only reads are pages: a form post to a console path is the API's.
    const post = await api.request.post("/jobs").set("Accept", BROWSER_ACCEPT).send({});
    expect(post.status).toBe(401);
  });
});

(built ? describe : describe.skip)("the console's assets (built)", () => {
  const files = () => readdirSync(path.join(CONSOLE_DIST, "assets")).filter((f) => f.endsWith(".js"));

  it("are served for a year's caching, gzipped when accepted", async () => {
    const name = files()[0]!;
    const original = readFileSync(path.join(CONSOLE_DIST, "assets", name));
    const plain = await api.request.get(`/assets/${name}`).set("Accept-Encoding", "identity").buffer(true);
    expect(plain.status).toBe(200);
    expect(plain.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(plain.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(plain.text).toBe(original.toString("utf8"));

    // The test client inflates the body; the length on the wire is the compressed one.
    const gzipped = await api.request.get(`/assets/${name}`).set("Accept-Encoding", "gzip").buffer(true);
    expect(gzipped.headers["content-encoding"]).toBe("gzip");
    expect(Number(gzipped.headers["content-length"])).toBeLessThan(original.length / 2);
    expect(gzipped.text).toBe(original.toString("utf8"));
  });

  it("answer 404 in the API's error shape for anything the build did not write", async () => {
    for (const name of ["nope.js", "..%2F..%2Fpackage.json", "%2e%2e%2findex.html", "index.html"]) {
      const res = await api.request.get(`/assets/${name}`);
      expect([name, res.status, res.body.error?.code]).toEqual([name, 404, "not_found"]);
    }
  });
});

describe("without a built console", () => {
  it("finds no build in an empty folder, and / says how to build it", () => {
    const empty = mkdtempSync(path.join(tmpdir(), "console-"));
    expect(consoleBuild(empty)).toBeNull();
    expect(CONSOLE_MISSING_HTML).toContain("npm run build -w @conveyor/console");
    expect(CONSOLE_MISSING_HTML).toContain('href="/docs"');
  });

  it("reads a build again when its index.html changes", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "console-"));
    mkdirSync(path.join(dir, "assets"));
    writeFileSync(path.join(dir, "index.html"), "<!doctype html><p>one</p>");
    writeFileSync(path.join(dir, "assets", "a-1.js"), "console.log(1)");
    expect(consoleBuild(dir)?.assets.has("a-1.js")).toBe(true);
    writeFileSync(path.join(dir, "index.html"), "<!doctype html><p>two, longer</p>");
    writeFileSync(path.join(dir, "assets", "b-2.js"), "console.log(2)");
    const later = new Date(Date.now() + 5_000);
    utimesSync(path.join(dir, "index.html"), later, later);
    const again = consoleBuild(dir);
    expect(again?.index.toString()).toContain("two");
    expect(again?.assets.has("b-2.js")).toBe(true);
  });
});
