import type { Role } from "@conveyor/contracts";
import type { AppDeps } from "../context";

/** What account and team services need: the database, the configuration and the clock (no Redis). */
export type ServiceDeps = Pick<AppDeps, "db" | "config" | "clock">;

/** The authenticated user a service acts for. */
export type Caller = { orgId: string; userId: string; role: Role };
