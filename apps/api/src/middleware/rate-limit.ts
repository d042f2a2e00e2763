// Rate limits (docs/reference/tenants.md#authentication), counted in Redis under `{REDIS_PREFIX}:rl:` so every API replica shares them:
// - the public auth endpoints: AUTH_RATE_LIMIT_PER_MIN per client IP and endpoint (0 = off);
// - failed password checks: 10 per account per 15 minutes, whichever IP sends them;
// - the job endpoints: API_RATE_LIMIT_PER_SEC per organization (0 = off).
// Refusals are 429 `rate_limited` with Retry-After and the IETF RateLimit-* headers.
// When Redis is away the auth limits fall back to per-process memory counters (still limited, not shared),
// and the job limit lets requests through: jobs are safe in Postgres and must still be accepted (docs/reference/robustness.md#r1).
import { createHash } from "node:crypto";
import type { RequestHandler, Response } from "express";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, RLWrapperTimeouts } from "rate-limiter-flexible";
import { redisKeyPrefix } from "@conveyor/queue";
import type { AppDeps } from "../context";
import type { AuthEndpoint } from "../declarations/endpoint";
import { AppError } from "../services/infrastructure/errors";
import type { FailedLoginGuard } from "../services/infrastructure/login-guard";

/** Failed password checks allowed per account per window. */
export const FAILED_LOGINS_PER_ACCOUNT = 10;
export const FAILED_LOGIN_WINDOW_SECONDS = 15 * 60;
/** A Redis call slower than this counts as Redis being away. */
const AUTH_REDIS_TIMEOUT_MS = 1_000;
const JOBS_REDIS_TIMEOUT_MS = 300;
/** At most one "limiter unavailable" warning per this interval. */
const WARN_INTERVAL_MS = 30_000;

export type RateLimits = {
  /** AUTH_RATE_LIMIT_PER_MIN per client IP on one public auth endpoint. */
  authByIp(endpoint: AuthEndpoint): RequestHandler;
  /** Failed password checks per account; hand it to the login and invite services. */
  failedLogins: FailedLoginGuard;
  /**
   * API_RATE_LIMIT_PER_SEC per organization for the job endpoints. Place it after `authenticate` (it keys
   * on the caller's org). Fails open when Redis is unreachable.
   */
  jobsByOrg: RequestHandler;
};

type Limit = { points: number; duration: number };

function setLimitHeaders(res: Response, limit: Limit, result: RateLimiterRes): void {
  res.setHeader("RateLimit-Limit", String(limit.points));
  res.setHeader("RateLimit-Remaining", String(Math.max(0, result.remainingPoints)));
  res.setHeader("RateLimit-Reset", String(Math.max(0, Math.ceil(result.msBeforeNext / 1000))));
  res.setHeader("RateLimit-Policy", `${limit.points};w=${limit.duration}`);
}

function rateLimited(limit: Limit, result: RateLimiterRes, message: string): AppError {
  const seconds = String(Math.max(1, Math.ceil(result.msBeforeNext / 1000)));
  return new AppError("rate_limited", message, undefined, {
    "Retry-After": seconds,
    "RateLimit-Limit": String(limit.points),
    "RateLimit-Remaining": "0",
    "RateLimit-Reset": seconds,
    "RateLimit-Policy": `${limit.points};w=${limit.duration}`,
  });
}

const passThrough: RequestHandler = (_req, _res, next) => next();

/** Keys that identify a person are stored hashed. */
const accountKey = (email: string) => createHash("sha256").update(email).digest("hex").slice(0, 32);

export function createRateLimits({ config, redis, logger }: AppDeps): RateLimits {
  const prefix = `${redisKeyPrefix(config.REDIS_PREFIX)}:rl`;
  let lastWarning = 0;
  const warnUnavailable = (what: string, error: unknown) => {
    if (Date.now() - lastWarning < WARN_INTERVAL_MS) return;
    lastWarning = Date.now();
    logger.warn(`rate limiter store unavailable: ${what}`, { error: { message: (error as Error)?.message } });
  };

  /** A Redis-backed limiter; with `insured`, an in-memory one takes over while Redis is away. */
  function limiter(name: string, limit: Limit, options: { insured: boolean; timeoutMs: number }) {
    const keyPrefix = `${prefix}:${name}`;
    const store = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix,
      ...limit,
      // Do not queue commands behind a reconnect: answer from the fallback (or fail open) at once.
      rejectIfRedisNotReady: true,
      insuranceLimiter: options.insured ? new RateLimiterMemory({ keyPrefix, ...limit }) : undefined,
    });
    return new RLWrapperTimeouts({ limiter: store, timeoutMs: options.timeoutMs });
  }

  const perIp: Limit = { points: config.AUTH_RATE_LIMIT_PER_MIN, duration: 60 };
  function authByIp(endpoint: AuthEndpoint): RequestHandler {
    if (perIp.points === 0) return passThrough;
    const ipLimiter = limiter(`auth:${endpoint}`, perIp, { insured: true, timeoutMs: AUTH_REDIS_TIMEOUT_MS });
    return async (req, res, next) => {
      try {
        setLimitHeaders(res, perIp, await ipLimiter.consume(req.ip ?? "unknown"));
        next();
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) {
          return next(rateLimited(perIp, rejection, "Too many requests from your address. Try again after the Retry-After delay."));
        }
        warnUnavailable(`auth:${endpoint}`, rejection);
        next();
      }
    };
  }

  const perAccount: Limit = { points: FAILED_LOGINS_PER_ACCOUNT, duration: FAILED_LOGIN_WINDOW_SECONDS };
  const accountLimiter = limiter("failed-logins", perAccount, { insured: true, timeoutMs: AUTH_REDIS_TIMEOUT_MS });
  const failedLogins: FailedLoginGuard = {
    async attempt(email) {
      // consume() is one atomic increment in Redis: of N parallel guesses, at most the limit get through.
      await accountLimiter.consume(accountKey(email)).catch((rejection: unknown) => {
        if (rejection instanceof RateLimiterRes) {
          throw rateLimited(perAccount, rejection, "Too many failed password attempts for this account. Try again after the Retry-After delay.");
        }
        warnUnavailable("failed-logins", rejection);
      });
    },
    async succeeded(email) {
      await accountLimiter.delete(accountKey(email)).catch((error: unknown) => warnUnavailable("failed-logins", error));
    },
  };

  const perOrg: Limit = { points: config.API_RATE_LIMIT_PER_SEC, duration: 1 };
  let jobsByOrg: RequestHandler = passThrough;
  if (perOrg.points > 0) {
    const orgLimiter = limiter("jobs", perOrg, { insured: false, timeoutMs: JOBS_REDIS_TIMEOUT_MS });
    jobsByOrg = async (req, res, next) => {
      if (!req.auth) return next();
      try {
        setLimitHeaders(res, perOrg, await orgLimiter.consume(req.auth.orgId));
        next();
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) {
          return next(
            rateLimited(perOrg, rejection, "Your organization is over its request rate for the job endpoints. Try again after the Retry-After delay."),
          );
        }
        // Fail open: refusing jobs because the limiter's store is away would lose work Postgres can hold.
        warnUnavailable("jobs", rejection);
        next();
      }
    };
  }

  return { authByIp, failedLogins, jobsByOrg };
}
