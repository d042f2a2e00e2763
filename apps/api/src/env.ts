// The API's configuration, parsed once at boot from the environment (docs/reference/operations.md#configuration). Nothing else reads process.env.
// Each variable is written once, here; the config's type is derived from this schema and its keys are the
// variables' names.
import { databaseUrl, envSchema, flag, Joi, list, parseEnv, publicUrl, setting, sharedEnv, type ConfigOf, type Env } from "@conveyor/config";

/** JWT_SECRET when it is unset outside production: public, so tokens signed with it prove nothing. */
const DEVELOPMENT_JWT_SECRET = "conveyor-development-secret-do-not-use-in-production";

export const apiEnvSchema = envSchema({
  ...sharedEnv,
  PORT: setting(Joi.number().port()).default(3000),
  /** Unset: http://localhost:${PORT}. */
  PUBLIC_URL: setting(publicUrl()).default(({ PORT }) => `http://localhost:${PORT as number}`),
  /** Trust X-Forwarded-For from this many proxy hops (rate limits are per client IP). */
  TRUST_PROXY: setting(Joi.number().integer().min(0).max(10)).default(0),
  /** Required in production; elsewhere unset means a public development secret (see usesDevelopmentJwtSecret). */
  JWT_SECRET: setting(Joi.string().min(32).when("NODE_ENV", { is: "production", then: Joi.required() })).default(DEVELOPMENT_JWT_SECRET),
  JWT_TTL: setting(Joi.string().pattern(/^\d+(s|m|h|d)$/, "a duration such as 30m, 12h or 7d")).default("12h"),
  /** Lifetime of a console session from its login (fixed, not extended by use). */
  SESSION_TTL: setting(Joi.string().pattern(/^[1-9]\d*(s|m|h|d)$/, "a duration such as 30m, 12h or 7d")).default("12h"),
  BCRYPT_COST: setting(Joi.number().integer().min(4).max(15)).default(12),
  ALLOW_SIGNUP: setting(flag()).default(true),
  AUTH_RATE_LIMIT_PER_MIN: setting(Joi.number().integer().min(0)).default(20),
  API_RATE_LIMIT_PER_SEC: setting(Joi.number().integer().min(0)).default(1000),
  /** Event streams (GET /events, GET /jobs/{id}/events) one organization may hold open on one API process; 0: no cap. */
  EVENT_STREAMS_PER_ORG: setting(Joi.number().integer().min(0).max(100_000)).default(100),
  /** Webhook endpoints one organization may have; 0: no cap. */
  WEBHOOK_ENDPOINTS_PER_ORG: setting(Joi.number().integer().min(0).max(10_000)).default(25),
  /**
   * Origins (scheme://host[:port]) whose pages may read a job with its public token (docs/reference/events.md#progress-and-live-results): CORS is granted to them on
   * GET /jobs/{id}, /jobs/{id}/output and /jobs/{id}/events only. Empty: none.
   */
  PUBLIC_TOKEN_ORIGINS: setting(list({ pattern: /^https?:\/\/[^/\s,]+$/, name: "origin (scheme://host[:port], no path)" })).default([]),
  /** Accept http:// OpenID providers for single sign-on (docs/reference/tenants.md#audit-log): for development and tests only. */
  SSO_ALLOW_HTTP: setting(flag()).default(false),
  /** A replica for lists, search, stats, usage and the audit log (docs/reference/high-availability.md#high-availability); one host or several. Unset: the primary. */
  DATABASE_READ_URL: setting(databaseUrl()).optional(),
  /** After a person or key changes something, their reads go to the primary for this long (read-your-writes). */
  DATABASE_READ_AFTER_WRITE_MS: setting(Joi.number().integer().min(0).max(600_000)).default(5_000),

  /** Backpressure (docs/reference/tenants.md#usage-quotas-and-backpressure): past this many due jobs in the deployment, the organizations holding most of them are refused new jobs (429 overloaded). Unset: off. */
  BACKPRESSURE_DUE_MAX: setting(Joi.number().integer().min(1)).optional(),
  /** Backpressure on Postgres commit latency: past this p99 (ms) of the API's own job inserts over the last few seconds, the organizations asking for most of them are refused new jobs (429 overloaded). Unset: off. */
  BACKPRESSURE_COMMIT_P99_MS: setting(Joi.number().integer().min(1)).optional(),
  /**
   * GET /workers shows every organization the deployment's workers in full — host names, pids, versions (docs/reference/time.md#alerts):
   * for a single-company deployment. Off: an organization sees the shared workers only as capacity per type it uses.
   */
  WORKERS_VISIBLE_TO_ORGS: setting(flag()).default(false),
  /** How long an organization's quotas are kept in each API process: `npm run org:quota` applies within it. */
  QUOTA_CACHE_MS: setting(Joi.number().integer().min(0).max(60_000)).default(2_000),
});

export type ApiConfig = ConfigOf<typeof apiEnvSchema>;

export function loadApiConfig(env: Env): ApiConfig {
  return parseEnv(apiEnvSchema, env);
}

/** Whether tokens are signed with the public development secret (JWT_SECRET unset outside production). */
export function usesDevelopmentJwtSecret(config: Pick<ApiConfig, "JWT_SECRET">): boolean {
  return config.JWT_SECRET === DEVELOPMENT_JWT_SECRET;
}

const DURATION_UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A duration setting (`30m`, `12h`, `7d`; already validated) in milliseconds. */
export function durationMs(value: string): number {
  return Number(value.slice(0, -1)) * DURATION_UNIT_MS[value.slice(-1) as keyof typeof DURATION_UNIT_MS];
}
