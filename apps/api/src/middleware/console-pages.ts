// Console routes share paths with the API (/jobs, /jobs/{id}): a browser navigation, whose Accept prefers
// text/html, gets the console's page; fetch calls and API clients (application/json or */*) go on to the API.
import type { RequestHandler } from "express";
import { sendConsolePage } from "../endpoints/console";
import { CONSOLE_ROUTES } from "../pages/console";

/** Whether the request is a browser navigation: Accept lists text/html and prefers it to JSON. */
export function wantsHtml(accept: string | undefined, preferred: string | false): boolean {
  return preferred === "html" && accept !== undefined && /\btext\/html\b/i.test(accept);
}

export const consolePages: RequestHandler = (req, res, next) => {
  if ((req.method !== "GET" && req.method !== "HEAD") || !CONSOLE_ROUTES.some((route) => route.test(req.path))) return next();
  // The page and the JSON share a URL: no cache may answer one with the other.
  res.setHeader("Vary", "Accept");
  if (!wantsHtml(req.get("accept"), req.accepts("json", "html"))) return next();
  sendConsolePage(res);
};
