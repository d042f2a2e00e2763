// Express wiring: request context, security headers, JSON bodies, the endpoints, and the error body of docs/reference/http.md#errors.
import { randomUUID } from "node:crypto";
import http from "node:http";
import express from "express";
import { redisKeyPrefix } from "@conveyor/queue";

import { readUsageTotalsByType } from "@conveyor/db";
import helmet from "helmet";
import type { AppDeps } from "./context";
import { endpoints } from "./endpoints";
import { httpStatus } from "./http/errors";
import { AppError } from "./services/infrastructure/errors";
import { buildRouter } from "./endpoints/router";
import { createAuthenticator } from "./middleware/authenticate";
import type { RouterDeps } from "./middleware/deps";
import { consolePages } from "./pages/console/console-pages";
import { errorHandler, unknownRoute } from "./middleware/error-handler";
import { jsonBody } from "./middleware/json-body";
import { publicTokenCors } from "./middleware/public-cors";
import { createRateLimits } from "./middleware/rate-limit";
import { requestContext } from "./middleware/request-context";
import { createApiMetrics } from "./observability/metrics";
import { buildOpenApiDocument } from "./openapi/document";
import { EventHub } from "./services/infrastructure/event-hub";
import { LeaseHub } from "./services/infrastructure/worker-leases";
import { createJobCatalog } from "./services/infrastructure/job-catalog";
import { ReadRouting } from "./services/infrastructure/read-routing";
import { Admission } from "./services/infrastructure/admission";
import { dummyHash } from "./services/infrastructure/passwords";

/** The app, and `stopBackground()`: stops its background work (the event tail) before the pool it reads closes. */
export type ConveyorApp = express.Express & { stopBackground(): Promise<void> };

export function createApp(deps: AppDeps): ConveyorApp {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("trust proxy", deps.config.TRUST_PROXY);
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
  const shared = routerDeps(deps, metrics);
  // Browser navigations to the console's routes get its page; everything else is the API.
  app.use(consolePages(shared));
  app.use(publicTokenCors(deps.config.PUBLIC_TOKEN_ORIGINS));
  app.use(jsonBody());
  app.use(buildRouter(endpoints, shared));
  // Same-origin API: no CORS preflight to answer on paths it does not have either.
  app.use((req, _res, next) =>
    next(req.method === "OPTIONS" ? new AppError("method_not_allowed", "OPTIONS is not supported: this API does not serve cross-origin requests.") : undefined),
  );
  app.use(unknownRoute);
  app.use(errorHandler);
  return Object.assign(app, {
    stopBackground: async () => {
      await shared.events.stop();
      await shared.leases.stop();
      await shared.admission.close();
    },
  });
}

/** What the endpoints' handlers and guards use; one authenticator (with its API-key cache) per app. */
function routerDeps(deps: AppDeps, metrics: ReturnType<typeof createApiMetrics>): RouterDeps {
  const registry = metrics.registry;
  const rateLimits = createRateLimits(deps);
  // Computed once, so the first unknown-email login does not pay for it.
  void dummyHash(deps.config.BCRYPT_COST);
  let document: string | undefined;
  const events = new EventHub({ pool: deps.db.pool, logger: deps.logger, streamsPerOrg: deps.config.EVENT_STREAMS_PER_ORG });
  events.observe(registry);
  const leases = new LeaseHub({ pool: deps.db.pool, logger: deps.logger });
  leases.observe(registry);
  metrics.observeUsage(() => readUsageTotalsByType(deps.db.pool));
  const admission = new Admission(deps);
  return {
    ...deps,
    catalog: createJobCatalog(deps),
    writer: admission.writer,
    failedLogins: rateLimits.failedLogins,
    events,
    reads: new ReadRouting({
      db: deps.db,
      redis: deps.redis,
      prefix: redisKeyPrefix(deps.config.REDIS_PREFIX),
      windowMs: deps.config.DATABASE_READ_AFTER_WRITE_MS,
      logger: deps.logger,
    }),
    admission,
    leases,
    authenticate: createAuthenticator(deps),
    rateLimits,
    openApiDocument: () => (document ??= JSON.stringify(buildOpenApiDocument(deps.config, endpoints))),
    metrics: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
  };
}

/**
 * The HTTP server for `app`. Requests Node's parser refuses before Express sees them (a request line or headers
 * over 16 KiB, malformed HTTP) are answered in docs/reference/http.md#errors's shape too, with a request id, instead of Node's bare
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
      `HTTP/1.1 ${httpStatus(refusal)} ${http.STATUS_CODES[httpStatus(refusal)]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}
