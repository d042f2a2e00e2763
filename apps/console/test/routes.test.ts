// The console's pages are listed twice: the router's paths (CONSOLE_PATHS, which routes.tsx must declare exactly —
// the compiler checks that) and the paths the API answers a browser navigation with the console's page
// (CONSOLE_PAGES). A page missing from the API would answer a reload with JSON; one missing from the console would
// show "not found" at an address the API promises. Both lists must be the same, and the API must act on each.
import { randomUUID } from "node:crypto";
import { CONSOLE_PAGES } from "@conveyor/api";
import { ensureConsoleBuilt } from "@conveyor/console/build";
import { startTestApi, type TestApi } from "@conveyor/api/testing";
import { CONSOLE_PATHS } from "../src/paths";

/** What Chromium sends when a person types an address or follows a link. */
const NAVIGATION = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";

let api: TestApi;
beforeAll(async () => {
  ensureConsoleBuilt();
  api = await startTestApi();
}, 120_000);
afterAll(() => api?.close());

/** The router's `$id` is the API's `:id`. */
const asApiPath = (path: string) => path.replace(/\$(\w+)/g, ":$1");
/** A request path for a page: each parameter filled in. */
const concrete = (page: string) => page.replace(/:\w+/g, randomUUID());

it("lists the same pages in the console's router and in the API", () => {
  expect([...CONSOLE_PATHS].map(asApiPath).sort()).toEqual([...CONSOLE_PAGES].sort());
});

it("answers a browser navigation to each page with the console, and API clients there with the API", async () => {
  const console = await api.request.get("/").set("Accept", NAVIGATION);
  expect(console.status).toBe(200);
  expect(console.headers["content-type"]).toMatch(/^text\/html/);
  expect(console.text).toContain('<div id="root">');

  for (const page of CONSOLE_PATHS.map(asApiPath)) {
    for (const path of [concrete(page), `${concrete(page)}/`.replace(/^\/\/$/, "/")]) {
      const res = await api.request.get(path).set("Accept", NAVIGATION);
      expect({ path, status: res.status, same: res.text === console.text }).toEqual({ path, status: 200, same: true });
    }
  }
  // Beside and below the pages, the API answers as the API (or its own pages), never with the console.
  for (const path of ["/docs", "/openapi.json", "/auth/session", `/jobs/${randomUUID()}/logs`, "/team/x", "/overviews"]) {
    const res = await api.request.get(path).set("Accept", NAVIGATION);
    expect({ path, console: res.text === console.text }).toEqual({ path, console: false });
  }
  // The same paths asked by an API client: JSON.
  const jobs = await api.request.get("/jobs").set("Accept", "application/json");
  expect({ status: jobs.status, type: jobs.headers["content-type"] }).toEqual({ status: 401, type: expect.stringMatching(/^application\/json/) });
});
