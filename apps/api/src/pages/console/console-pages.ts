// Console routes share paths with the API (/jobs, /jobs/{id}): a browser navigation, whose Accept prefers
// text/html, gets the console's page; fetch calls and API clients (application/json or */*) go on to the API.
import type { RequestHandler } from "express";
import type { RouterDeps } from "../../middleware/deps";
import { CONSOLE_ROUTES } from "./index";
import { jobsFirstPage } from "./first-page";
import { sendConsolePage } from "./send-console-page";

/** Whether the request is a browser navigation: Accept lists text/html and prefers it to JSON. */
export function wantsHtml(accept: string | undefined, preferred: string | false): boolean {
  return preferred === "html" && accept !== undefined && /\btext\/html\b/i.test(accept);
}

/** The console's page for browser navigations; on /jobs with a live session, with the list's first page in it. */
export function consolePages(deps: RouterDeps): RequestHandler {
  return async (req, res, next) => {
    if ((req.method !== "GET" && req.method !== "HEAD") || !CONSOLE_ROUTES.some((route) => route.test(req.path))) return next();
    // The page and the JSON share a URL: no cache may answer one with the other.
    res.setHeader("Vary", "Accept");
    if (!wantsHtml(req.get("accept"), req.accepts("json", "html"))) return next();
    let firstPage: string | null = null;
    try {
      if (/^\/jobs\/?$/.test(req.path)) firstPage = await jobsFirstPage(req, res, deps);
    } catch (error) {
      // The page still works without it: it asks for its list itself.
      req.log.warn("could not write the jobs list's first page into the console's page", { error });
    }
    sendConsolePage(req, res, firstPage);
  };
}
