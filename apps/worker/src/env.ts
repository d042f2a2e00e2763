// The worker's configuration, parsed once at boot from the environment (docs/reference/operations.md#configuration). Nothing else reads process.env.
import { envSchema, Joi, list, parseEnv, setting, sharedEnv, type ConfigOf, type Env } from "@conveyor/config";
import { parseTypeRateLimits, parseTypeTimeouts, TYPE_NAME_PATTERN, type TypeRateLimit } from "@conveyor/contracts";
import { handlerEnv } from "./handlers/settings";

/** A `type=value,…` setting parsed by `parse`, whose message names the bad entry. */
function perType<T>(parse: (text: string) => Map<string, T>): Joi.AnySchema<Map<string, T>> {
  const rule = Joi.string()
    .allow("")
    .custom((value: string, helpers) => {
      try {
        return parse(value);
      } catch (error) {
        return helpers.message({ custom: (error as Error).message });
      }
    });
  return rule as Joi.AnySchema as Joi.AnySchema<Map<string, T>>;
}

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
  /** How often the leader evaluates every organization's alert rules (docs/reference/time.md#alerts). */
  ALERT_EVALUATION_MS: setting(Joi.number().integer().min(200).max(10_000)).default(10_000),
  /** How often this worker heartbeats into the worker registry (the console's Workers view); silent for 3 of them, it is shown as gone. */
  WORKER_HEARTBEAT_MS: setting(Joi.number().integer().min(200).max(60_000)).default(5_000),
  /** Most jobs of one organization running (or handed to BullMQ) at once per type, across all workers; 0 = no cap. */
  ORG_CONCURRENCY_LIMIT: setting(Joi.number().integer().min(0).max(100_000)).default(0),
  /** Most jobs one envelope (one BullMQ job) carries; the leader's dispatcher sizes envelopes up to it (docs/reference/lifecycle.md#envelopes). */
  ENVELOPE_MAX: setting(Joi.number().integer().min(1).max(1000)).default(64),
  /** How often the reconciler looks for jobs Redis has lost. */
  RECONCILE_INTERVAL_MS: setting(Joi.number().integer().min(100).max(3_600_000)).default(15_000),
  /** A pending or processing job untouched for this long, and absent from Redis, is re-enqueued. */
  RECONCILE_GRACE_MS: setting(Joi.number().integer().min(0).max(3_600_000)).default(30_000),
  /**
   * Starts per period per type across the deployment, for the deployment's own provider keys, e.g.
   * `send_email=10/s,send_sms=50/s,ai_summarize=500/m` (the leader's setting applies).
   */
  TYPE_RATE_LIMITS: setting(perType<TypeRateLimit>(parseTypeRateLimits)).default(new Map()),
  /** Each attempt's timeout per type, e.g. `generate_pdf=2m,webhook=30s` (a job's timeout_ms wins); otherwise 15 minutes. */
  TYPE_TIMEOUTS: setting(perType<number>(parseTypeTimeouts)).default(new Map()),
  /** Finished jobs older than this many days are deleted with their logs, events and artifacts; 0 keeps everything. */
  JOB_RETENTION_DAYS: setting(Joi.number().integer().min(0).max(36_500)).default(30),
  /** Audit log entries older than this many days are deleted (docs/reference/tenants.md#audit-log); 0 keeps them all. */
  AUDIT_RETENTION_DAYS: setting(Joi.number().integer().min(0).max(36_500)).default(400),
  ...handlerEnv,
});

export type WorkerConfig = ConfigOf<typeof workerEnvSchema>;

export function loadWorkerConfig(env: Env): WorkerConfig {
  return parseEnv(workerEnvSchema, env);
}
