// Express wiring: request context, security headers, JSON bodies, the routes, and the error body of SPEC §2.
import express from "express";
import helmet from "helmet";
import type { AppDeps } from "./context";
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
  app.use(jsonBody());
  for (const router of routes(deps, metrics)) app.use(router);
  app.use(unknownRoute);
  app.use(errorHandler);
  return app;
}
