// The API process: parse configuration, connect to Postgres and Redis, serve HTTP, and stop cleanly.
// Tracing first: it must be in place before the modules it instruments are loaded.
import "./tracing-init";
import type { Server } from "node:http";
import { loadDotEnv, runMain, usesDevelopmentWebhookKey } from "@conveyor/config";
import { connectDatabase } from "@conveyor/db";
import { createLogger } from "@conveyor/logger";
import { connectRedis, redisTarget } from "@conveyor/queue";
import { createApp, createServer } from "./app";
import { systemClock, type AppDeps } from "./context";
import { loadApiConfig, usesDevelopmentJwtSecret } from "./env";
import { stopTracing } from "@conveyor/tracing";

/** How long in-flight requests get to finish after SIGTERM before their connections are closed. */
const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  loadDotEnv();
  const config = loadApiConfig(process.env);
  const logger = createLogger({ service: "api", level: config.LOG_LEVEL, json: config.NODE_ENV === "production" });
  const db = await connectDatabase({
    url: config.DATABASE_URL,
    directUrl: config.DATABASE_DIRECT_URL,
    readUrl: config.DATABASE_READ_URL,
    poolerPreparedStatements: config.DATABASE_POOLER_PREPARED_STATEMENTS,
    poolSize: config.DATABASE_POOL_SIZE,
    applicationName: "conveyor-api",
  });
  const redis = await connectRedis(redisTarget(config), "producer").catch(async (error) => {
    await db.close();
    throw error;
  });
  // Keep running while Redis is away: the API writes no job to Redis (the dispatcher hands jobs over from Postgres);
  // Redis serves rate limits, cancellation messages and readiness.
  redis.on("error", (error: Error) => logger.debug("redis connection error", { error }));

  const deps: AppDeps = {
    config,
    logger,
    db,
    redis,
    clock: systemClock,
  };
  const app = createApp(deps);
  const server = createServer(app).listen(config.PORT);
  await new Promise<void>((resolve, reject) => server.once("listening", resolve).once("error", reject));
  // Listening before "API listening" is said: a SIGTERM sent as soon as that line is read must find its handler
  // (until a listener exists the signal's default action ends the process at once).
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal} received: finishing in-flight requests`);
    await closeServer(server);
    await app.stopBackground();
    await redis.quit().catch(() => redis.disconnect());
    await db.close();
    await stopTracing();
    logger.info("API stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  logger.info(`API listening on http://localhost:${config.PORT} (public URL ${config.PUBLIC_URL}; Node.js ${process.version})`);
  if (usesDevelopmentWebhookKey(config)) {
    logger.warn("WEBHOOK_SECRETS_KEY is not set: webhook secrets are stored under a built-in development key. Set it before storing real endpoints.");
  }
  if (usesDevelopmentJwtSecret(config)) {
    logger.warn("JWT_SECRET is not set: tokens are signed with a built-in development secret. Set JWT_SECRET before exposing this API.");
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

runMain(main);
