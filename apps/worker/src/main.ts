// The worker process: parse configuration, connect, run the job runtime, and stop cleanly on SIGTERM.
// Tracing first: it must be in place before the modules it instruments are loaded.
import "./tracing-init";
import { loadDotEnv, quotaDefaults, runMain, StartupError, templateNames, urlPolicy, usesDevelopmentWebhookKey } from "@conveyor/config";
import { BUILT_IN_TYPES, isBuiltInType } from "@conveyor/contracts";
import { connectDatabase, stkCallbackStore } from "@conveyor/db";
import { createLogger } from "@conveyor/logger";
import { checkRedis, connectRedis, createRedis, redisKeyPrefix, redisTarget } from "@conveyor/queue";
import { loadWorkerConfig } from "./env";
import { createBuiltInHandlers, createInternalHandlers } from "./handlers";
import { startHealthServer } from "./process/health-server";
import { createWorkerMetrics } from "./process/metrics";
import { loadPlugins } from "./process/plugins";
import { AuditRetention } from "./maintenance/audit-retention";
import { unavailableMessage, unavailableTypes } from "./process/availability";
import { PartitionMaker } from "./maintenance/partition-maker";
import { Retention } from "./maintenance/retention";
import { UsageFold } from "./maintenance/usage-fold";
import { Scheduler } from "./maintenance/scheduler";
import { WebhookDeliveryRetention } from "./maintenance/webhook-delivery-retention";
import { WebhookRelay } from "./maintenance/webhook-relay";
import { WaitpointExpiry } from "./maintenance/waitpoint-expiry";
import { WaitpointRetention } from "./maintenance/waitpoint-retention";
import { AlertEvaluator } from "./maintenance/alert-evaluator";
import { ScheduleRunRetention } from "./maintenance/schedule-run-retention";
import { AlertNotifier } from "./maintenance/alert-notifier";
import { startRuntime } from "./process/worker-runtime";
import { stopTracing } from "@conveyor/tracing";

async function main(): Promise<void> {
  loadDotEnv();
  const config = loadWorkerConfig(process.env);
  const logger = createLogger({ service: "worker", level: config.LOG_LEVEL, json: config.NODE_ENV === "production" });
  const plugins = loadPlugins(config.WORKER_PLUGINS);
  const catalogOptions = { ...urlPolicy(config), templateNames: templateNames(config.TEMPLATES_DIR) };

  const db = await connectDatabase({
    url: config.DATABASE_URL,
    directUrl: config.DATABASE_DIRECT_URL,
    poolerPreparedStatements: config.DATABASE_POOLER_PREPARED_STATEMENTS,
    poolSize: config.DATABASE_POOL_SIZE,
    applicationName: "conveyor-worker",
  });
  const redis = await connectRedis(redisTarget(config), "worker").catch(async (error) => {
    await db.close();
    throw error;
  });
  const health = await checkRedis(redis);
  if (!health.ok) {
    redis.disconnect();
    await db.close();
    throw new StartupError(`Refusing to start: ${health.reason}. Run \`redis-cli CONFIG SET maxmemory-policy noeviction\` (and set it in redis.conf).`);
  }
  const producerRedis = await connectRedis(redisTarget(config), "producer");
  const subscriberRedis = createRedis(redisTarget(config), "worker");
  // Reconnection is automatic; a Redis outage is logged once per reconnect, not per command.
  for (const connection of [redis, producerRedis, subscriberRedis])
    connection.on("error", (error: Error) => logger.debug("redis connection error", { error: error.message }));

  const builtIns = config.WORKER_TYPES ? config.WORKER_TYPES.filter(isBuiltInType) : BUILT_IN_TYPES;
  const handlerSet = createBuiltInHandlers({ settings: config, logger, stkCallbacks: stkCallbackStore(db.pool) }, builtIns);
  const metrics = createWorkerMetrics();
  const runtime = await startRuntime({
    db,
    redis,
    producerRedis,
    subscriberRedis,
    logger,
    prefix: redisKeyPrefix(config.REDIS_PREFIX),
    types: config.WORKER_TYPES,
    concurrency: config.WORKER_CONCURRENCY,
    lockMs: config.WORKER_LOCK_MS,
    retryBaseMs: config.RETRY_BASE_MS,
    reconcileIntervalMs: config.RECONCILE_INTERVAL_MS,
    reconcileGraceMs: config.RECONCILE_GRACE_MS,
    catalogOptions,
    handlers: handlerSet.handlers,
    plugins,
    internal: createInternalHandlers({ pool: db.pool, settings: config, logger }),
    orgConcurrencyLimit: config.ORG_CONCURRENCY_LIMIT,
    envelopeMax: config.ENVELOPE_MAX,
    typeRateLimits: config.TYPE_RATE_LIMITS,
    typeTimeouts: config.TYPE_TIMEOUTS,
    heartbeatMs: config.WORKER_HEARTBEAT_MS,
    leaderTasks: [
      new PartitionMaker({ pool: db.pool, logger }),
      new Retention({ pool: db.pool, logger, days: config.JOB_RETENTION_DAYS }),
      new AuditRetention({ pool: db.pool, logger, days: config.AUDIT_RETENTION_DAYS }),
      new WebhookDeliveryRetention({ pool: db.pool, logger, days: config.JOB_RETENTION_DAYS }),
      new Scheduler({ pool: db.pool, logger, quotas: quotaDefaults(config) }),
      new UsageFold({ pool: db.pool, logger }),
      new WebhookRelay({ pool: db.pool, logger }),
      new WaitpointExpiry({ pool: db.pool, logger }),
      new WaitpointRetention({ pool: db.pool, logger, days: config.JOB_RETENTION_DAYS }),
      new ScheduleRunRetention({ pool: db.pool, logger, days: config.JOB_RETENTION_DAYS }),
      new AlertEvaluator({
        pool: db.pool,
        logger,
        notifier: new AlertNotifier({ pool: db.pool, logger, settings: config }),
        intervalMs: config.ALERT_EVALUATION_MS,
        quotas: quotaDefaults(config),
      }),
    ],
    onAttempt: metrics.onAttempt,
    onReenqueued: metrics.onReenqueued,
  });
  metrics.observe({ pool: db.pool, isLeader: runtime.isLeader, knownTypes: runtime.knownTypes, active: runtime.active });

  let running = true;
  const server = await startHealthServer(config.WORKER_METRICS_PORT, () => running, { "/metrics": metrics.serve });
  // Listening before "worker started" is said: a SIGTERM sent as soon as that line is read must find its handler
  // (until a listener exists the signal's default action ends the process at once).
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    running = false;
    logger.info(`${signal} received: taking no new jobs; in-flight jobs have ${config.WORKER_SHUTDOWN_MS} ms to finish`);
    const left = await runtime.close(config.WORKER_SHUTDOWN_MS);
    await handlerSet.close().catch((error: Error) => logger.warn("could not release handler resources", { error: error.message }));
    await server.close();
    await Promise.all([redis.quit().catch(() => redis.disconnect()), producerRedis.quit().catch(() => producerRedis.disconnect())]);
    await db.close();
    await stopTracing();
    logger.info(left ? `worker stopped; ${left} job(s) left to stalled-job recovery` : "worker stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  if (usesDevelopmentWebhookKey(config)) {
    logger.warn("WEBHOOK_SECRETS_KEY is not set: webhook secrets are stored under a built-in development key. Set it before storing real endpoints.");
  }
  logger.info(
    `worker started on Node.js ${process.version}: serving ${runtime.types.join(", ")} (concurrency ${config.WORKER_CONCURRENCY} per type; health on :${server.port})`,
  );
  const cannotRun = unavailableMessage(unavailableTypes(builtIns, config));
  if (cannotRun) logger.warn(cannotRun);
}

runMain(main);
