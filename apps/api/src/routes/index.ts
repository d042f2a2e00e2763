// Every route group, in one place. Each group is a Router built from the app's dependencies.
import type { Router } from "express";
import type { AppDeps } from "../context";
import { healthRoutes } from "./health";

export function routes(deps: AppDeps): Router[] {
  return [healthRoutes(deps)];
}
