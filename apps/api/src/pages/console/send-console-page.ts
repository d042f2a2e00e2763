// Sending the console's page (docs/reference/tenants.md#the-console): the built index.html, with the jobs list's first
// page written into it when there is one.
import { gzipSync } from "node:zlib";
import type { Request, Response } from "express";
import { sendPage } from "../send";
import { CONSOLE_MISSING_HTML, CONSOLE_PAGE_POLICY, consoleBuild } from "./index";

/** Where the console's page mounts (apps/console/index.html). */
const ROOT_ELEMENT = '<div id="root"></div>';

/**
 * The built page's head for a page whose first rows the API drew (issue 48 #11): its first paint waits for its
 * stylesheet (render-blocking) and for nothing else, since the drawn page is what is shown until the console's script
 * has run. So the stylesheet is asked for first, ahead of the script, and the script's modules are not preloaded: in
 * Chromium's traces their 28 fetches, and their compiles on the page's main thread, came before the stylesheet and
 * delayed the drawn rows' first frame, cold and warm (docs/decisions/2026-12-07-first-rows-stylesheet-first-no-module-preload.md).
 * The script loads its modules itself when it starts.
 */
function headForDrawnPage(index: string): string {
  const stylesheets: string[] = [];
  const rest = index.replace(/\n?[ \t]*<link rel="modulepreload"[^>]*>/g, "").replace(/\n?[ \t]*(<link rel="stylesheet"[^>]*>)/g, (_, link: string) => {
    stylesheets.push(link);
    return "";
  });
  const script = rest.search(/[ \t]*<script type="module"/);
  if (script < 0) return index;
  return `${rest.slice(0, script)}${stylesheets.map((link) => `    ${link}\n`).join("")}${rest.slice(script)}`;
}

/**
 * The console's page (never cached: it names the current assets), or a page saying it was not built. `firstPage`
 * (pages/console/first-page.ts) goes after its root element; a page holding an organization's data is never stored,
 * and is gzipped when the browser accepts it (50 rows are ≈ 140 KB of markup, ≈ 6 KB gzipped).
 */
export function sendConsolePage(req: Request, res: Response, firstPage: string | null = null): void {
  const build = consoleBuild();
  if (!build || !firstPage) {
    sendPage(res, { type: "text/html; charset=utf-8", body: build?.index ?? CONSOLE_MISSING_HTML, policy: CONSOLE_PAGE_POLICY, cache: "no-cache" });
    return;
  }
  // Only a page with a first page is written anew; every other navigation sends the built bytes as they are.
  const body = Buffer.from(headForDrawnPage(build.index.toString("utf8")).replace(ROOT_ELEMENT, () => `${ROOT_ELEMENT}${firstPage}`));
  const gzip = /\bgzip\b/.test(req.get("accept-encoding") ?? "");
  res.setHeader("Vary", "Accept, Accept-Encoding");
  if (gzip) res.setHeader("Content-Encoding", "gzip");
  sendPage(res, { type: "text/html; charset=utf-8", body: gzip ? gzipSync(body) : body, policy: CONSOLE_PAGE_POLICY, cache: "no-store" });
}
