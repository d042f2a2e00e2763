// CORS for a job's public token (docs/reference/events.md#progress-and-live-results): pages of PUBLIC_TOKEN_ORIGINS may read one job — GET /jobs/{id},
// /jobs/{id}/output and /jobs/{id}/events — and nothing else. Any other origin, and any other path, gets no grant, so
// the browser keeps the answer from the page. No cookies are granted (Allow-Credentials is never sent): the token is
// the page's only credential.
import type { RequestHandler } from "express";

/** The paths a public token reads: a job by its id (UUID-shaped, so /jobs/batch and /jobs/failures are not among them). */
const READABLE = /^\/jobs\/[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(\/output|\/events)?$/;

export function publicTokenCors(origins: readonly string[]): RequestHandler {
  const allowed = new Set(origins);
  return (req, res, next) => {
    if (!READABLE.test(req.path)) return next();
    // The answer depends on the origin: caches must not give one origin's answer to another.
    res.vary("Origin");
    const origin = req.get("origin");
    if (origin === undefined || !allowed.has(origin)) return next();
    if (req.method === "OPTIONS" && req.get("access-control-request-method") === "GET") {
      res.setHeader("Access-Control-Allow-Origin", origin);
      res.setHeader("Access-Control-Allow-Methods", "GET");
      res.setHeader("Access-Control-Allow-Headers", "Authorization, Last-Event-ID, Cache-Control");
      res.setHeader("Access-Control-Max-Age", "600");
      return void res.status(204).end();
    }
    if (req.method === "GET") {
      res.setHeader("Access-Control-Allow-Origin", origin);
      res.setHeader("Access-Control-Expose-Headers", "X-Request-Id");
    }
    next();
  };
}
