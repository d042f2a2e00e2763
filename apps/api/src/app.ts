// Express wiring: request context, security headers, JSON bodies, the routes, and the error body of SPEC §2.
import { randomUUID } from "node:crypto";
import http from "node:http";
import express from "express";
import helmet from "helmet";
import type { AppDeps } from "./context";
import { AppError } from "./http/errors";
import { errorHandler, unknownRoute } from "./middleware/error-handler";
import { jsonBody } from "./middleware/json-body";
import { requestContext } from "./middleware/request-context";
import { createApiMetrics } from "./observability/metrics";
import { routes } from "./routes";

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("trust proxy", deps.config.trustProxy);
  app.set("query parser", "simple");

  // One registry per app, so tests can run several apps in one process.
  const metrics = createApiMetrics();
  app.use(requestContext(deps.logger));
  app.use(metrics.observeRequests);
  // JSON only: nothing here may load or frame anything. Pages served by the API set their own policy.
  // Only the headers that matter for an API's responses: each header costs every request.
  app.use(
    helmet({
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
      crossOriginOpenerPolicy: false,
      originAgentCluster: false,
      xDnsPrefetchControl: false,
      xDownloadOptions: false,
      xPermittedCrossDomainPolicies: false,
      xXssProtection: false,
    }),
  );
  // Same-origin API: no CORS preflight to answer, and Express' automatic OPTIONS reply is not JSON.
  app.use((req, _res, next) => next(req.method === "OPTIONS" ? new AppError("method_not_allowed", "OPTIONS is not supported: this API does not serve cross-origin requests.") : undefined));
  app.use(jsonBody());
  for (const router of routes(deps, metrics)) app.use(router);
  app.use(unknownRoute);
  app.use(errorHandler);
  return app;
}

/**
 * The HTTP server for `app`. Requests Node's parser refuses before Express sees them (a request line or headers
 * over 16 KiB, malformed HTTP) are answered in SPEC §2's shape too, with a request id, instead of Node's bare
 * status line.
 */
export function createServer(app: express.Express): http.Server {
  const server = http.createServer(app);
  server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || error.code === "ECONNRESET") return void socket.destroy();
    const tooLarge = error.code === "HPE_HEADER_OVERFLOW";
    const refusal = tooLarge
      ? new AppError("headers_too_large", "The request line and headers are larger than 16 KiB; send long values in the body.")
      : new AppError("bad_request", "The request is not valid HTTP.");
    const body = JSON.stringify({ error: { code: refusal.code, message: refusal.message } });
    socket.end(
      `HTTP/1.1 ${refusal.status} ${http.STATUS_CODES[refusal.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}
