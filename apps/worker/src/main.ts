// The worker process: parse configuration, connect, run the job runtime, and stop cleanly on SIGTERM.
import { loadDotEnv, runMain, StartupError } from "@conveyor/config";
import { connectDatabase } from "@conveyor/db";
import { createLogger } from "@conveyor/logger";
import { checkRedis, connectRedis } from "@conveyor/queue";
import { loadWorkerConfig } from "./env";
import { startHealthServer } from "./runtime/health-server";

async function main(): Promise<void> {
  loadDotEnv();
  const config = loadWorkerConfig(process.env);
  const logger = createLogger({ service: "worker", level: config.logLevel, json: config.nodeEnv === "production" });

  const db = await connectDatabase({ url: config.databaseUrl, poolSize: config.databasePoolSize, applicationName: "conveyor-worker" });
  const redis = await connectRedis(config.redisUrl, "worker").catch(async (error) => {
    await db.close();
    throw error;
  });
  const health = await checkRedis(redis);
  if (!health.ok) {
    redis.disconnect();
    await db.close();
    throw new StartupError(`Refusing to start: ${health.reason}. Run \`redis-cli CONFIG SET maxmemory-policy noeviction\` (and set it in redis.conf).`);
  }

  let running = true;
  const server = await startHealthServer(config.metricsPort, () => running);
  logger.info(`worker started (health on :${server.port})`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    running = false;
    logger.info(`${signal} received: stopping`);
    await server.close();
    await redis.quit().catch(() => redis.disconnect());
    await db.close();
    logger.info("worker stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

runMain(main);
