// The web console (docs/reference/tenants.md#the-console): its page at / and its hashed assets, served by the API from its own origin. A
// browser navigation to another console route (/jobs, /team, …) gets the same page (pages/console/console-pages.ts).
import { endpoint } from "../declarations/endpoint";
import { notFound } from "../services/infrastructure/errors";
import { CONSOLE_PAGES } from "@conveyor/contracts";
import { CONSOLE_PAGE_POLICY, consoleBuild } from "../pages/console";
import { sendConsolePage } from "../pages/console/send-console-page";

const YEAR_SECONDS = 365 * 24 * 60 * 60;
/** The console's pages besides `/`, as the document writes paths: /login, …, /jobs/{id}, … */
const OTHER_PAGES = CONSOLE_PAGES.filter((page) => page !== "/")
  .map((page) => page.replace(/\$(\w+)/g, "{$1}"))
  .join(", ");

const text = (description: string, type: string) => ({ description, media: { types: [type], schema: { type: "string" } } });

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
