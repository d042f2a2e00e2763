// Every route group, in one place. Each group is a Router built from the app's dependencies and the
// shared authenticator (one API-key cache per app).
import type { Router } from "express";
import type { AppDeps } from "../context";
import { createAuthenticator } from "../middleware/authenticate";
import { createRateLimits } from "../middleware/rate-limit";
import type { ApiMetrics } from "../observability/metrics";
import { apiKeyRoutes } from "./api-keys";
import { authRoutes } from "./auth";
import { callbackRoutes } from "./callbacks";
import { docsRoutes } from "./docs";
import { healthRoutes } from "./health";
import { invitePageRoutes } from "./invite-page";
import { inviteRoutes } from "./invites";
import { jobRoutes } from "./jobs";
import { metricsRoutes } from "./metrics";
import { openApiRoutes } from "./openapi";
import { orgRoutes } from "./org";

export type RouteDeps = AppDeps & {
  authenticate: ReturnType<typeof createAuthenticator>;
  /** Shared rate limiters; the job routes use `rateLimits.jobsByOrg` after `authenticate`. */
  rateLimits: ReturnType<typeof createRateLimits>;
};

/** Every router is mounted at the root: the HTTP metrics label requests with the route's own path. */
export function routes(appDeps: AppDeps, metrics: ApiMetrics): Router[] {
  const deps: RouteDeps = { ...appDeps, authenticate: createAuthenticator(appDeps), rateLimits: createRateLimits(appDeps) };
  return [
    healthRoutes(deps),
    jobRoutes(deps),
    authRoutes(deps),
    apiKeyRoutes(deps),
    orgRoutes(deps),
    inviteRoutes(deps),
    invitePageRoutes(),
    callbackRoutes(deps),
    metricsRoutes(metrics),
    openApiRoutes(deps),
    docsRoutes(),
  ];
}
