// The web console (docs/reference/tenants.md#the-console): its page at / and its hashed assets, served by the API from its own origin. A
// browser navigation to another console route (/jobs, /team, …) gets the same page (middleware/console-pages.ts).
import { gzipSync } from "node:zlib";
import type { Request, Response } from "express";
import { endpoint } from "../http/endpoint";
import { notFound } from "../http/errors";
import { CONSOLE_MISSING_HTML, CONSOLE_PAGE_POLICY, CONSOLE_PAGES, consoleBuild } from "../pages/console";
import { sendPage } from "../pages/send";

const YEAR_SECONDS = 365 * 24 * 60 * 60;
/** The console's pages besides `/`, as the document writes paths: /login, …, /jobs/{id}, … */
const OTHER_PAGES = CONSOLE_PAGES.filter((page) => page !== "/")
  .map((page) => page.replace(/:(\w+)/g, "{$1}"))
  .join(", ");

const text = (description: string, type: string) => ({ description, media: { types: [type], schema: { type: "string" } } });

/** Where the console's page mounts (apps/console/index.html). */
const ROOT_ELEMENT = '<div id="root"></div>';

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
  const body = Buffer.from(build.index.toString("utf8").replace(ROOT_ELEMENT, () => `${ROOT_ELEMENT}${firstPage}`));
  const gzip = /\bgzip\b/.test(req.get("accept-encoding") ?? "");
  res.setHeader("Vary", "Accept, Accept-Encoding");
  if (gzip) res.setHeader("Content-Encoding", "gzip");
  sendPage(res, { type: "text/html; charset=utf-8", body: gzip ? gzipSync(body) : body, policy: CONSOLE_PAGE_POLICY, cache: "no-store" });
}

export const consoleEndpoints = [
  endpoint({
    method: "get",
    path: "/",
    operationId: "console",
    tag: "Console",
    summary: "The web console",
    description:
      "The console's page, for people. A browser navigation (a GET whose Accept prefers text/html) to one of the console's " +
      `routes (${OTHER_PAGES}) gets this ` +
      "page too; API clients asking those paths (Accept: application/json, or */*) get the API's JSON as documented. " +
      "When the console was not built, a short page says so; the API works either way.",
    access: "public",
    responses: { 200: text("The page.", "text/html") },
    errors: [500],
    handle: ({ req, res }) => sendConsolePage(req, res),
  }),
  endpoint({
    method: "get",
    path: "/assets/:file",
    operationId: "consoleAsset",
    tag: "Console",
    summary: "One of the console's files",
    description: "Scripts, styles and images of the console. Names carry a content hash, so each is cached for a year.",
    access: "public",
    params: { file: { description: "The file's name, as the console's page links it.", schema: { type: "string" } } },
    responses: { 200: text("The file (JavaScript, CSS, SVG, PNG or WOFF2).", "text/javascript") },
    errors: [404, 500],
    handle({ req, res, params }) {
      const asset = consoleBuild()?.assets.get(params.file);
      if (!asset) throw notFound(`Console file ${params.file}`);
      const gzip = asset.gzipped !== null && /\bgzip\b/.test(req.get("accept-encoding") ?? "");
      res.setHeader("Content-Type", asset.type);
      res.setHeader("Cache-Control", `public, max-age=${YEAR_SECONDS}, immutable`);
      res.setHeader("Vary", "Accept-Encoding");
      res.setHeader("Content-Security-Policy", CONSOLE_PAGE_POLICY);
      if (gzip) res.setHeader("Content-Encoding", "gzip");
      res.status(200).end(gzip ? asset.gzipped : asset.raw);
    },
  }),
];
