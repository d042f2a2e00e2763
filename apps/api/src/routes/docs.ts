// GET /docs: the API reference page, its renderer and its start-up script, all from this API (no CDN).
import { Router, type Response } from "express";
import { AppError } from "../http/errors";
import { DOCS_PAGE_POLICY, docsBundle, docsHtml, docsInitJs } from "../pages/docs";

const YEAR_SECONDS = 365 * 24 * 60 * 60;

const notInstalled = () =>
  new AppError("not_found", "The reference page's renderer is not installed in this build; the document is at /openapi.json.");

function page(res: Response, type: string, body: string): void {
  res.setHeader("Content-Type", type);
  res.setHeader("Cache-Control", "no-cache");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("Content-Security-Policy", DOCS_PAGE_POLICY);
  res.send(body);
}

export function docsRoutes(): Router {
  const router = Router();

  // Until the console lives at /, a browser pointed at the API lands on its reference.
  router.get("/", (_req, res) => res.redirect(302, "/docs"));

  router.get("/docs", async (_req, res) => {
    const bundle = await docsBundle();
    page(res, "text/html; charset=utf-8", docsHtml(`/docs/scalar.js?v=${bundle?.hash ?? "missing"}`));
  });

  router.get("/docs/init.js", (_req, res) => page(res, "text/javascript; charset=utf-8", docsInitJs));

  router.get("/docs/scalar.js", async (req, res) => {
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
  });

  return router;
}
