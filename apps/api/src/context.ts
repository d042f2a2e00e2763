// What the API needs from the outside world, created once in server.ts (or by a test) and handed to app.ts.
import type { Logger } from "@conveyor/logger";
import type { Database } from "@conveyor/db";
import type { RedisClient } from "@conveyor/queue";
import type { ApiConfig } from "./env";

export type Clock = { now(): Date };
export const systemClock: Clock = { now: () => new Date() };

export type AppDeps = {
  config: ApiConfig;
  logger: Logger;
  db: Database;
  /** Producer connection: fails fast while Redis is away. */
  redis: RedisClient;
  clock: Clock;
};
