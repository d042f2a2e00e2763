// The worker's configuration, parsed once at boot from the environment (SPEC §7). Nothing else reads process.env.
import { Joi, parseEnv, sharedEnv, type Env } from "@conveyor/config";
import { TYPE_NAME_PATTERN } from "@conveyor/contracts";
import { handlerEnv, handlerSettings, type HandlerSettings } from "./handlers/settings";

const list = () => Joi.string().custom((value: string) => value.split(",").map((s) => s.trim()).filter(Boolean));
const typeList = () =>
  Joi.string().custom((value: string, helpers) => {
    const types = value.split(",").map((s) => s.trim()).filter(Boolean);
    const bad = types.find((t) => !TYPE_NAME_PATTERN.test(t));
    return bad ? helpers.message({ custom: `names an invalid job type "${bad}"` }) : types;
  });

export const workerEnvSchema = Joi.object({
  ...sharedEnv,
  /** Job types this replica serves (comma-separated); default: every built-in and plugin type. */
  WORKER_TYPES: typeList(),
  /** Jobs of one type run at once in this process. */
  WORKER_CONCURRENCY: Joi.number().integer().min(1).max(1000).default(10),
  /** Plugin modules (comma-separated paths) exporting {type, handle}. */
  WORKER_PLUGINS: list(),
  /** Grace period for in-flight jobs after SIGTERM before their AbortSignal fires. */
  WORKER_SHUTDOWN_MS: Joi.number().integer().min(0).max(3_600_000).default(25_000),
  /** Port of /healthz and /metrics; 0 picks a free port. */
  WORKER_METRICS_PORT: Joi.number().port().default(9464),
  /** BullMQ lock duration: a job whose worker stops renewing it for this long is given to another worker. */
  WORKER_LOCK_MS: Joi.number().integer().min(1_000).max(600_000).default(30_000),
  /** How often the reconciler looks for jobs Redis has lost. */
  RECONCILE_INTERVAL_MS: Joi.number().integer().min(100).max(3_600_000).default(15_000),
  /** A pending or processing job untouched for this long, and absent from Redis, is re-enqueued. */
  RECONCILE_GRACE_MS: Joi.number().integer().min(0).max(3_600_000).default(30_000),
  ...handlerEnv,
});

export type WorkerConfig = {
  nodeEnv: "development" | "production" | "test";
  logLevel: string;
  databaseUrl: string;
  databasePoolSize: number;
  redisUrl: string;
  redisPrefix: string;
  publicUrl: string | undefined;
  retryBaseMs: number;
  /** Types named in WORKER_TYPES, or undefined for "all". */
  types: string[] | undefined;
  concurrency: number;
  plugins: string[];
  shutdownMs: number;
  metricsPort: number;
  lockMs: number;
  reconcileIntervalMs: number;
  reconcileGraceMs: number;
  urlPolicy: { allowHttp: boolean; allowPrivateNetwork: boolean };
  templatesDir: string | undefined;
  handlers: HandlerSettings;
};

export function loadWorkerConfig(env: Env): WorkerConfig {
  const v = parseEnv(workerEnvSchema, env) as Record<string, any>;
  return {
    nodeEnv: v.NODE_ENV,
    logLevel: v.LOG_LEVEL,
    databaseUrl: v.DATABASE_URL,
    databasePoolSize: v.DATABASE_POOL_SIZE,
    redisUrl: v.REDIS_URL,
    redisPrefix: v.REDIS_PREFIX,
    publicUrl: v.PUBLIC_URL?.replace(/\/+$/, ""),
    retryBaseMs: v.RETRY_BASE_MS,
    types: v.WORKER_TYPES,
    concurrency: v.WORKER_CONCURRENCY,
    plugins: v.WORKER_PLUGINS ?? [],
    shutdownMs: v.WORKER_SHUTDOWN_MS,
    metricsPort: v.WORKER_METRICS_PORT,
    lockMs: v.WORKER_LOCK_MS,
    reconcileIntervalMs: v.RECONCILE_INTERVAL_MS,
    reconcileGraceMs: v.RECONCILE_GRACE_MS,
    urlPolicy: { allowHttp: v.WEBHOOK_ALLOW_HTTP, allowPrivateNetwork: v.ALLOW_PRIVATE_NETWORK },
    templatesDir: v.TEMPLATES_DIR,
    handlers: handlerSettings(v),
  };
}
