// The API's configuration, parsed once at boot from the environment (SPEC §7). Nothing else reads process.env.
import { Joi, parseEnv, sharedEnv, booleanVar, type Env } from "@conveyor/config";

const DEV_JWT_SECRET = "conveyor-development-secret-do-not-use-in-production";

export const apiEnvSchema = Joi.object({
  ...sharedEnv,
  PORT: Joi.number().port().default(3000),
  /** Trust X-Forwarded-For from this many proxy hops (rate limits are per client IP). */
  TRUST_PROXY: Joi.number().integer().min(0).max(10).default(0),
  JWT_SECRET: Joi.string().min(32).when("NODE_ENV", { is: "production", then: Joi.required() }),
  JWT_TTL: Joi.string().pattern(/^\d+(s|m|h|d)$/, "a duration such as 30m, 12h or 7d").default("12h"),
  BCRYPT_COST: Joi.number().integer().min(4).max(15).default(12),
  ALLOW_SIGNUP: booleanVar().default(true),
  AUTH_RATE_LIMIT_PER_MIN: Joi.number().integer().min(0).default(20),
  API_RATE_LIMIT_PER_SEC: Joi.number().integer().min(0).default(1000),
});

export type ApiConfig = {
  nodeEnv: "development" | "production" | "test";
  logLevel: string;
  port: number;
  publicUrl: string;
  trustProxy: number;
  databaseUrl: string;
  databasePoolSize: number;
  redisUrl: string;
  redisPrefix: string;
  jwt: { secret: string; ttl: string; insecureDefault: boolean };
  bcryptCost: number;
  allowSignup: boolean;
  authRateLimitPerMin: number;
  apiRateLimitPerSec: number;
  retryBaseMs: number;
  urlPolicy: { allowHttp: boolean; allowPrivateNetwork: boolean };
  templatesDir: string | undefined;
};

export function loadApiConfig(env: Env): ApiConfig {
  const v = parseEnv(apiEnvSchema, env) as Record<string, any>;
  return {
    nodeEnv: v.NODE_ENV,
    logLevel: v.LOG_LEVEL,
    port: v.PORT,
    publicUrl: (v.PUBLIC_URL ?? `http://localhost:${v.PORT}`).replace(/\/+$/, ""),
    trustProxy: v.TRUST_PROXY,
    databaseUrl: v.DATABASE_URL,
    databasePoolSize: v.DATABASE_POOL_SIZE,
    redisUrl: v.REDIS_URL,
    redisPrefix: v.REDIS_PREFIX,
    jwt: { secret: v.JWT_SECRET ?? DEV_JWT_SECRET, ttl: v.JWT_TTL, insecureDefault: !v.JWT_SECRET },
    bcryptCost: v.BCRYPT_COST,
    allowSignup: v.ALLOW_SIGNUP,
    authRateLimitPerMin: v.AUTH_RATE_LIMIT_PER_MIN,
    apiRateLimitPerSec: v.API_RATE_LIMIT_PER_SEC,
    retryBaseMs: v.RETRY_BASE_MS,
    urlPolicy: { allowHttp: v.WEBHOOK_ALLOW_HTTP, allowPrivateNetwork: v.ALLOW_PRIVATE_NETWORK },
    templatesDir: v.TEMPLATES_DIR,
  };
}
