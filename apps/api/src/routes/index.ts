// Every route group, in one place. Each group is a Router built from the app's dependencies and the
// shared authenticator (one API-key cache per app).
import type { Router } from "express";
import type { AppDeps } from "../context";
import { createAuthenticator } from "../middleware/authenticate";
import { healthRoutes } from "./health";

export type RouteDeps = AppDeps & { authenticate: ReturnType<typeof createAuthenticator> };

export function routes(appDeps: AppDeps): Router[] {
  const deps: RouteDeps = { ...appDeps, authenticate: createAuthenticator(appDeps) };
  return [healthRoutes(deps)];
}
