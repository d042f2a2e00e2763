// The variables both the API and the worker read (docs/reference/operations.md#configuration), declared once, with their defaults.
import Joi from "joi";
import type { UrlPolicy } from "@conveyor/contracts";
import { setting, type ConfigOf } from "./env-schema";
import { databaseUrl } from "./database-url";
import { flag, oneOf, publicUrl } from "./rules";

/** WEBHOOK_SECRETS_KEY when it is unset outside production: public, so it protects nothing (see usesDevelopmentWebhookKey). */
const DEVELOPMENT_WEBHOOK_SECRETS_KEY = Buffer.from("conveyor-development-key-0000000").toString("base64");

export const sharedEnv = {
  NODE_ENV: setting(oneOf("development", "production", "test")).default("development"),
  LOG_LEVEL: setting(oneOf("error", "warn", "info", "debug")).default("info"),
  /** One host, or several for failover (`h1:5432,h2:5432/db?target_session_attrs=read-write`: the read-write one is used). */
  DATABASE_URL: setting(databaseUrl()).default("postgresql://postgres@localhost:5432/conveyor"),
  /** Connections in this process' Postgres pool. */
  DATABASE_POOL_SIZE: setting(Joi.number().integer().min(1).max(200)).default(10),
  /**
   * Postgres itself, not a pooler, for what needs a session (LISTEN, the dispatch lock, migrations). Setting it says
   * DATABASE_URL is a pooler in transaction mode (PgBouncer): statements there are unnamed and keep no session state.
   */
  DATABASE_DIRECT_URL: setting(databaseUrl()).optional(),
  /** The pooler at DATABASE_URL keeps prepared statements across its connections (PgBouncer ≥ 1.21 with max_prepared_statements). */
  DATABASE_POOLER_PREPARED_STATEMENTS: setting(flag()).default(false),
  REDIS_URL: setting(Joi.string().uri({ scheme: ["redis", "rediss"] })).default("redis://localhost:6379"),
  /** Redis Sentinel: `host:port,host:port` of the sentinels; REDIS_URL then gives only the credentials and database. */
  REDIS_SENTINELS: setting(Joi.string().pattern(/^\s*[^\s,:]+(:\d{1,5})?\s*(,\s*[^\s,:]+(:\d{1,5})?\s*)*$/, "host:port,host:port")).optional(),
  /** The master name the sentinels monitor. */
  REDIS_SENTINEL_NAME: setting(Joi.string().pattern(/^[A-Za-z0-9_.-]{1,64}$/)).default("mymaster"),
  /** The sentinels' own password, if they require one. */
  REDIS_SENTINEL_PASSWORD: setting(Joi.string()).optional(),
  /** Redis Cluster: `host:port,host:port` of some of its nodes; REDIS_URL then gives only the credentials (and TLS). */
  REDIS_CLUSTER_NODES: setting(Joi.string().pattern(/^\s*[^\s,:]+(:\d{1,5})?\s*(,\s*[^\s,:]+(:\d{1,5})?\s*)*$/, "host:port,host:port")).optional(),
  /** Every key and channel lives under the hash tag `{REDIS_PREFIX}` (see redisKeyPrefix in @conveyor/queue). */
  REDIS_PREFIX: setting(Joi.string().pattern(/^[A-Za-z0-9_.-]{1,64}$/)).default("conveyor"),
  RETRY_BASE_MS: setting(Joi.number().integer().min(1).max(3_600_000)).default(1000),
  /** Where clients reach the API; the API defaults it from its PORT, the worker has no default. */
  PUBLIC_URL: setting(publicUrl()).optional(),
  WEBHOOK_ALLOW_HTTP: setting(flag()).default(false),
  ALLOW_PRIVATE_NETWORK: setting(flag()).default(false),
  /** Operators' generate_pdf templates (`<name>.hbs`); see templateNames(). */
  TEMPLATES_DIR: setting(Joi.string()).optional(),
  /** AES-256-GCM key (32 bytes, base64) that webhook endpoint secrets are stored under; required in production. */
  WEBHOOK_SECRETS_KEY: setting(
    Joi.string()
      .custom((value: string, helpers) =>
        Buffer.from(value, "base64").length === 32 ? value : helpers.message({ custom: "must be 32 bytes, base64-encoded" }),
      )
      .when("NODE_ENV", { is: "production", then: Joi.required() }),
  ).default(DEVELOPMENT_WEBHOOK_SECRETS_KEY),
  /** Quotas (docs/reference/tenants.md#usage-quotas-and-backpressure): every organization's default, unset = unlimited; `npm run org:quota` sets one organization's. */
  QUOTA_JOBS_PER_DAY: setting(Joi.number().integer().min(1)).optional(),
  QUOTA_JOBS_PER_MONTH: setting(Joi.number().integer().min(1)).optional(),
  /** Pending jobs one organization may hold at once. */
  QUOTA_PENDING_MAX: setting(Joi.number().integer().min(1)).optional(),
  /** Payload bytes (as JSON text) of the jobs one organization has stored at once; retention frees them. */
  QUOTA_PAYLOAD_BYTES_MAX: setting(Joi.number().integer().min(1)).optional(),
};

/** The QUOTA_* defaults as limits per quota (null: unlimited). */
export function quotaDefaults(config: Pick<SharedConfig, "QUOTA_JOBS_PER_DAY" | "QUOTA_JOBS_PER_MONTH" | "QUOTA_PENDING_MAX" | "QUOTA_PAYLOAD_BYTES_MAX">) {
  return {
    jobs_per_day: config.QUOTA_JOBS_PER_DAY ?? null,
    jobs_per_month: config.QUOTA_JOBS_PER_MONTH ?? null,
    pending_max: config.QUOTA_PENDING_MAX ?? null,
    payload_bytes_max: config.QUOTA_PAYLOAD_BYTES_MAX ?? null,
  };
}

export type SharedConfig = ConfigOf<typeof sharedEnv>;

/** The URL rules for job targets (webhook, compress_image), which the API applies at enqueue and the worker again. */
export function urlPolicy(config: Pick<SharedConfig, "WEBHOOK_ALLOW_HTTP" | "ALLOW_PRIVATE_NETWORK">): UrlPolicy {
  return { allowHttp: config.WEBHOOK_ALLOW_HTTP, allowPrivateNetwork: config.ALLOW_PRIVATE_NETWORK };
}

/** The key webhook endpoint secrets are encrypted with (WEBHOOK_SECRETS_KEY, decoded). */
export function webhookSecretsKey(config: Pick<SharedConfig, "WEBHOOK_SECRETS_KEY">): Buffer {
  return Buffer.from(config.WEBHOOK_SECRETS_KEY, "base64");
}

/** Whether webhook secrets are stored under the public development key (WEBHOOK_SECRETS_KEY unset outside production). */
export function usesDevelopmentWebhookKey(config: Pick<SharedConfig, "WEBHOOK_SECRETS_KEY">): boolean {
  return config.WEBHOOK_SECRETS_KEY === DEVELOPMENT_WEBHOOK_SECRETS_KEY;
}
