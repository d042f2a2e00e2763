// The jobs list's first page, written into the console's HTML for a browser arriving at /jobs (issue 38: first rows
// on screen ≤ 300 ms): the page's own first GET /jobs, answered by the same validation and service as that endpoint
// for the caller the session cookie proves (as GET /jobs would), as JSON the page's query cache takes over, and the
// page drawn around it by the console's own components — its frame for the session (as GET /auth/session knows it)
// and its rows where the page will draw them — so they are on screen at the page's first paint rather than after
// its script has loaded, run and asked, and nothing moves when it has. What to ask and how to draw it come from the console's build
// (dist/server/first-page.cjs, built from apps/console/src/first-page-server.tsx with the page): they cannot drift. The
// bundle is loaded at runtime and typed by the console's own contract (ConsoleServerBundle), imported as a type only.
// Without a live session, for another page than the list, or when anything fails, the page is served as before.
import { existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { parseCookie } from "cookie";
import type { Request, Response } from "express";
import type { ConsoleServerBundle } from "@conveyor/console/server-contract";
import { listQuery } from "../../declarations/job-fields";
import { AppError } from "../../services/infrastructure/errors";
import { validate } from "../../services/infrastructure/validate";
import type { RouterDeps } from "../../middleware/deps";
import { listJobs } from "../../services/job-reads";
import { describeSession } from "../../services/sessions";
import { CONSOLE_DIST } from "./index";

const loadModule = createRequire(__filename);
let loaded: { file: string; version: number; module: ConsoleServerBundle } | undefined;

/** The console's first-page module, read again when a rebuild replaced it; null when the console was built without it. */
function firstPageModule(dir: string): ConsoleServerBundle | null {
  const file = path.join(dir, "server", "first-page.cjs");
  if (!existsSync(file)) return null;
  const version = statSync(file).mtimeMs;
  if (loaded?.file === file && loaded.version === version) return loaded.module;
  // A rebuilt file replaces the one Node's cache holds.
  delete loadModule.cache[file];
  loaded = { file, version, module: loadModule(file) as ConsoleServerBundle };
  return loaded.module;
}

/** Runs an Express middleware; resolves true when it let the request through. */
const passes = (middleware: (req: Request, res: Response, next: (error?: unknown) => void) => unknown, req: Request, res: Response) =>
  new Promise<boolean>((resolve) => {
    Promise.resolve(middleware(req, res, (error?: unknown) => resolve(error === undefined))).catch(() => resolve(false));
  });

/** JSON inside a `<script type="application/json">`: nothing in it can end the element or open a comment. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");

/** The browser's language (Accept-Language's first) and time zone (the cookie the console sets), to write times as it will. */
function clockOf(req: Request, cookieName: string): { locale?: string; timeZone?: string } {
  const locale = /^\s*([A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*)/.exec(req.get("accept-language") ?? "")?.[1];
  const timeZone = parseCookie(req.get("cookie") ?? "")[cookieName];
  return { locale, timeZone };
}

/**
 * The HTML to put after the page's root element for this navigation to /jobs: the first page's rows and its data; null
 * when there is none to give (no live session, the failures view, a search GET /jobs refuses, no server build).
 */
export async function jobsFirstPage(req: Request, res: Response, deps: RouterDeps, dir = CONSOLE_DIST): Promise<string | null> {
  if (req.method !== "GET" || !req.get("cookie")) return null;
  const module = firstPageModule(dir);
  const queryIndex = req.originalUrl.indexOf("?");
  const request = module?.firstListRequest(queryIndex < 0 ? "" : req.originalUrl.slice(queryIndex));
  if (!module || !request) return null;
  // The session decides, as for GET /jobs: the same credential check and the same organization's rate limit.
  if (!(await passes(deps.authenticate("job"), req, res)) || req.auth?.kind !== "session") return null;
  if (!(await passes(deps.rateLimits.jobsByOrg, req, res))) return null;
  const caller = req.auth;
  let list, session;
  try {
    [list, session] = await Promise.all([listJobs({ caller, query: validate(listQuery, request.query, "query") }, deps), describeSession({ caller }, deps)]);
  } catch (error) {
    // A search the API refuses (400) is the page's to show; anything else is logged and the page asks for itself.
    if (!(error instanceof AppError && error.code === "validation_failed")) req.log.warn("could not read the jobs list's first page", { error });
    return null;
  }
  if (list.kind !== "page") return null;
  const first = {
    search: request.search,
    page: { items: list.items.map((item) => JSON.parse(item) as unknown), next: list.next?.get("cursor") ?? null },
  };
  // The page in its frame (an empty list too: the page says why it is empty). The frame shows who is logged in and
  // where; the CSRF token stays out of the page.
  const { user, org, role, orgs } = session;
  const address = `/jobs${queryIndex < 0 ? "" : req.originalUrl.slice(queryIndex)}`;
  const drawn = await module.renderFirstPage({ address, first, session: { user, org, role, orgs } }, clockOf(req, module.CLOCK_COOKIE));
  // A picture of the page until its script has run: nothing in it can be focused, typed into or clicked (input would
  // be lost when the page replaces it), and assistive technology waits for the page itself.
  const page = drawn ? `<div id="${module.FIRST_ROWS_ID}" inert aria-hidden="true">${drawn}</div>` : "";
  return `${page}<script type="application/json" id="${module.FIRST_PAGE_DATA_ID}">${scriptJson(first)}</script>`;
}
