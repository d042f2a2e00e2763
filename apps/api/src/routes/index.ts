// Every route group, in one place. Each group is a Router built from the app's dependencies and the
// shared authenticator (one API-key cache per app).
import type { Router } from "express";
import type { AppDeps } from "../context";
import { createAuthenticator } from "../middleware/authenticate";
import { createRateLimits } from "../middleware/rate-limit";
import { apiKeyRoutes } from "./api-keys";
import { authRoutes } from "./auth";
import { callbackRoutes } from "./callbacks";
import { healthRoutes } from "./health";
import { invitePageRoutes } from "./invite-page";
import { inviteRoutes } from "./invites";
import { jobRoutes } from "./jobs";
import { orgRoutes } from "./org";

export type RouteDeps = AppDeps & {
  authenticate: ReturnType<typeof createAuthenticator>;
  /** Shared rate limiters; the job routes use `rateLimits.jobsByOrg` after `authenticate`. */
  rateLimits: ReturnType<typeof createRateLimits>;
};

export function routes(appDeps: AppDeps): Router[] {
  const deps: RouteDeps = { ...appDeps, authenticate: createAuthenticator(appDeps), rateLimits: createRateLimits(appDeps) };
  return [healthRoutes(deps), jobRoutes(deps), authRoutes(deps), apiKeyRoutes(deps), orgRoutes(deps), inviteRoutes(deps), invitePageRoutes(), callbackRoutes(deps)];
}
