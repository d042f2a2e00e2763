// This reference: the OpenAPI document, and the page that renders it for people, all served by this API
// (no CDN). The document is built from the same declarations as the router (openapi/document.ts).
import { endpoint } from "../declarations/endpoint";
import { AppError } from "../services/infrastructure/errors";
import { DOCS_PAGE_POLICY, docsBundle, docsHtml, docsInitJs } from "../pages/docs";
import { sendPage } from "../pages/send";

const YEAR_SECONDS = 365 * 24 * 60 * 60;

const text = (description: string, type: string) => ({ description, media: { types: [type], schema: { type: "string" } } });

const notInstalled = () => new AppError("not_found", "The reference page's renderer is not installed in this build; the document is at /openapi.json.");

export const referenceEndpoints = [
  endpoint({
    method: "get",
    path: "/openapi.json",
    operationId: "openapi",
    tag: "Reference",
    summary: "This document",
    description: "OpenAPI 3.1, generated from the same joi schemas the routes validate with.",
    access: "public",
    responses: { 200: { description: "The OpenAPI document.", media: { types: ["application/json"], schema: { type: "object" } } } },
    errors: [500],
    handle({ res }, deps) {
      res.status(200).type("application/json").setHeader("Cache-Control", "no-cache").send(deps.openApiDocument());
    },
  }),
  endpoint({
    method: "get",
    path: "/docs",
    operationId: "docs",
    tag: "Reference",
    summary: "The API reference page",
    description: "This document rendered for people (Scalar), served entirely by the API: no CDN, no external fonts.",
    access: "public",
    responses: { 200: text("The page.", "text/html") },
    errors: [500],
    async handle({ res }) {
      const bundle = await docsBundle();
      sendPage(res, {
        type: "text/html; charset=utf-8",
        body: docsHtml(`/docs/scalar.js?v=${bundle?.hash ?? "missing"}`),
        policy: DOCS_PAGE_POLICY,
        cache: "no-cache",
      });
    },
  }),
  endpoint({
    method: "get",
    path: "/docs/scalar.js",
    operationId: "docsRenderer",
    tag: "Reference",
    summary: "The reference page's renderer",
    description: "Scalar's standalone bundle. Cached for a year; the page links it with a content hash.",
    access: "public",
    responses: { 200: text("JavaScript.", "text/javascript") },
    errors: [500],
    async handle({ req, res }) {
      const bundle = await docsBundle();
      if (!bundle) throw notInstalled();
      const etag = `"${bundle.hash}"`;
      res.setHeader("Cache-Control", `public, max-age=${YEAR_SECONDS}, immutable`);
      res.setHeader("ETag", etag);
      res.setHeader("Vary", "Accept-Encoding");
      if (req.get("if-none-match") === etag) return void res.status(304).end();
      const gzip = /\bgzip\b/.test(req.get("accept-encoding") ?? "");
      res.setHeader("Content-Type", "text/javascript; charset=utf-8");
      if (gzip) res.setHeader("Content-Encoding", "gzip");
      res.status(200).end(gzip ? bundle.gzipped : bundle.raw);
    },
  }),
  endpoint({
    method: "get",
    path: "/docs/init.js",
    operationId: "docsInit",
    tag: "Reference",
    summary: "The reference page's start-up script",
    access: "public",
    responses: { 200: text("JavaScript.", "text/javascript") },
    errors: [500],
    handle: ({ res }) => sendPage(res, { type: "text/javascript; charset=utf-8", body: docsInitJs, policy: DOCS_PAGE_POLICY, cache: "no-cache" }),
  }),
];
