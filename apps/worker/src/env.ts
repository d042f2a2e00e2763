// The worker's configuration, parsed once at boot from the environment (SPEC §7). Nothing else reads process.env.
import { envSchema, Joi, list, parseEnv, setting, sharedEnv, type ConfigOf, type Env } from "@conveyor/config";
import { TYPE_NAME_PATTERN } from "@conveyor/contracts";
import { handlerEnv } from "./handlers/settings";

/** A job type name, or an internal one (`_webhook_delivery`). */
const SERVED_TYPE_PATTERN = new RegExp(`^_?${TYPE_NAME_PATTERN.source.slice(1)}`);

export const workerEnvSchema = envSchema({
  ...sharedEnv,
  /** Job types this replica serves (comma-separated); unset: every built-in, plugin and internal (`_webhook_delivery`) type. */
  WORKER_TYPES: setting(list({ pattern: SERVED_TYPE_PATTERN, name: "job type" })).optional(),
  /** Jobs of one type run at once in this process. */
  WORKER_CONCURRENCY: setting(Joi.number().integer().min(1).max(1000)).default(10),
  /** Plugin modules (comma-separated paths) exporting {type, handle}. */
  WORKER_PLUGINS: setting(list()).default([]),
  /** Grace period for in-flight jobs after SIGTERM before their AbortSignal fires. */
  WORKER_SHUTDOWN_MS: setting(Joi.number().integer().min(0).max(3_600_000)).default(25_000),
  /** Port of /healthz and /metrics; 0 picks a free port. */
  WORKER_METRICS_PORT: setting(Joi.number().port()).default(9464),
  /** BullMQ lock duration: a job whose worker stops renewing it for this long is given to another worker. */
  WORKER_LOCK_MS: setting(Joi.number().integer().min(1_000).max(600_000)).default(30_000),
  /** Most jobs of one organization running (or handed to BullMQ) at once per type, across all workers; 0 = no cap. */
  ORG_CONCURRENCY_LIMIT: setting(Joi.number().integer().min(0).max(100_000)).default(0),
  /** How often the reconciler looks for jobs Redis has lost. */
  RECONCILE_INTERVAL_MS: setting(Joi.number().integer().min(100).max(3_600_000)).default(15_000),
  /** A pending or processing job untouched for this long, and absent from Redis, is re-enqueued. */
  RECONCILE_GRACE_MS: setting(Joi.number().integer().min(0).max(3_600_000)).default(30_000),
  /** Finished jobs older than this many days are deleted with their logs, events and artifacts; 0 keeps everything. */
  JOB_RETENTION_DAYS: setting(Joi.number().integer().min(0).max(36_500)).default(30),
  /** Audit log entries older than this many days are deleted (SPEC §16); 0 keeps them all. */
  AUDIT_RETENTION_DAYS: setting(Joi.number().integer().min(0).max(36_500)).default(400),
  ...handlerEnv,
});

export type WorkerConfig = ConfigOf<typeof workerEnvSchema>;

export function loadWorkerConfig(env: Env): WorkerConfig {
  return parseEnv(workerEnvSchema, env);
}
