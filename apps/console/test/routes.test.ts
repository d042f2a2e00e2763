// The console's pages are listed once (CONSOLE_PAGES, @conveyor/contracts/console-pages): routes.tsx must declare
// exactly these (the compiler checks it), and the API answers a browser navigation to each with the console's page.
// A page the API did not serve would answer a reload with JSON; the API must act on each, and on nothing beside them.
import { randomUUID } from "node:crypto";
import { ensureConsoleBuilt } from "@conveyor/console/build";
import { startTestApi, type TestApi } from "@conveyor/api/testing";
import { CONSOLE_PAGES } from "@conveyor/contracts/console-pages";

/** What Chromium sends when a person types an address or follows a link. */
const NAVIGATION = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";

let api: TestApi;
beforeAll(async () => {
  ensureConsoleBuilt();
  api = await startTestApi();
}, 120_000);
afterAll(() => api?.close());

/** A request path for a page: each parameter filled in. */
const concrete = (page: string) => page.replace(/\$\w+/g, randomUUID());

it("answers a browser navigation to each page with the console, and API clients there with the API", async () => {
  const console = await api.request.get("/").set("Accept", NAVIGATION);
  expect(console.status).toBe(200);
  expect(console.headers["content-type"]).toMatch(/^text\/html/);
  expect(console.text).toContain('<div id="root">');

  for (const page of CONSOLE_PAGES) {
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
