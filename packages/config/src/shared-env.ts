// The variables both the API and the worker read (SPEC §7), declared once, with their defaults.
import Joi from "joi";
import type { UrlPolicy } from "@conveyor/contracts";
import { setting, type ConfigOf } from "./env-schema";
import { flag, oneOf, publicUrl } from "./rules";

export const sharedEnv = {
  NODE_ENV: setting(oneOf("development", "production", "test")).default("development"),
  LOG_LEVEL: setting(oneOf("error", "warn", "info", "debug")).default("info"),
  DATABASE_URL: setting(Joi.string().uri({ scheme: ["postgres", "postgresql"] })).default("postgresql://postgres@localhost:5432/conveyor"),
  /** Connections in this process' Postgres pool. */
  DATABASE_POOL_SIZE: setting(Joi.number().integer().min(1).max(200)).default(10),
  REDIS_URL: setting(Joi.string().uri({ scheme: ["redis", "rediss"] })).default("redis://localhost:6379"),
  REDIS_PREFIX: setting(Joi.string().pattern(/^[A-Za-z0-9_.-]{1,64}$/)).default("conveyor"),
  RETRY_BASE_MS: setting(Joi.number().integer().min(1).max(3_600_000)).default(1000),
  /** Where clients reach the API; the API defaults it from its PORT, the worker has no default. */
  PUBLIC_URL: setting(publicUrl()).optional(),
  WEBHOOK_ALLOW_HTTP: setting(flag()).default(false),
  ALLOW_PRIVATE_NETWORK: setting(flag()).default(false),
  /** Operators' generate_pdf templates (`<name>.hbs`); see templateNames(). */
  TEMPLATES_DIR: setting(Joi.string()).optional(),
};

export type SharedConfig = ConfigOf<typeof sharedEnv>;

/** The URL rules for job targets (webhook, compress_image), which the API applies at enqueue and the worker again. */
export function urlPolicy(config: Pick<SharedConfig, "WEBHOOK_ALLOW_HTTP" | "ALLOW_PRIVATE_NETWORK">): UrlPolicy {
  return { allowHttp: config.WEBHOOK_ALLOW_HTTP, allowPrivateNetwork: config.ALLOW_PRIVATE_NETWORK };
}
