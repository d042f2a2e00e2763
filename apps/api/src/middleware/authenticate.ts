// Who is calling, checked against the database on every request (SPEC §3):
// - `Authorization: Bearer <jwt>`: HS256 signature and expiry, then the membership is read, so a removed
//   member's token stops working at once and a role change applies at once.
// - `X-API-Key: cvk_…`: looked up by SHA-256; acts as `member` of its org. Cached for at most
//   API_KEY_CACHE_MS, so a revocation takes effect within that time.
// Both headers present: the bearer token decides.
import type { RequestHandler } from "express";
import type { Role } from "@conveyor/contracts";
import { findLiveApiKey, findMembership, touchApiKey, type ApiKeyOwner } from "@conveyor/db";
import type { AppDeps } from "../context";
import type { Access } from "../http/endpoint";
import { forbidden, unauthorized } from "../http/errors";
import type { Caller } from "../services/deps";
import { hashApiKey, looksLikeApiKey } from "../services/api-key-secrets";
import { verifyToken } from "../services/tokens";

declare global {
  namespace Express {
    // eslint-disable-next-line @typescript-eslint/consistent-type-definitions -- declaration merging into Express' Request needs an interface
    interface Request {
      auth?: Caller;
    }
  }
}

/** Upper bound of how long a revoked key may still be accepted (SPEC §3: within 5 s). */
export const API_KEY_CACHE_MS = 4_000;
/** last_used_at is written at most this often per key. */
const TOUCH_INTERVAL_MS = 60_000;

/** The credential check of an endpoint that is not public: API keys are for the job endpoints only. */
export type Authenticator = (access: Exclude<Access, "public">) => RequestHandler;

/** Builds the authentication middleware; one instance (and one key cache) per app. */
export function createAuthenticator(deps: AppDeps): Authenticator {
  // Each entry remembers when it was read by the process clock and by the app's clock (which tests move);
  // it expires when either says API_KEY_CACHE_MS have passed, or went backwards.
  const keyCache = new Map<string, { owner: ApiKeyOwner | null; readAt: number; appReadAt: number }>();
  const fresh = (since: number, now: number) => now >= since && now - since < API_KEY_CACHE_MS;
  const lastTouched = new Map<string, number>();

  async function apiKeyOwner(key: string): Promise<ApiKeyOwner | null> {
    const hash = hashApiKey(key);
    const cacheKey = hash.toString("base64");
    const readAt = Date.now();
    const now = deps.clock.now().getTime();
    const cached = keyCache.get(cacheKey);
    if (cached && fresh(cached.readAt, readAt) && fresh(cached.appReadAt, now)) return cached.owner;
    const owner = await findLiveApiKey(deps.db.pool, hash);
    if (keyCache.size > 10_000) keyCache.clear();
    keyCache.set(cacheKey, { owner, readAt, appReadAt: now });
    const touched = owner ? lastTouched.get(owner.apiKeyId) : undefined;
    if (owner && (touched === undefined || touched < now - TOUCH_INTERVAL_MS || touched > now)) {
      lastTouched.set(owner.apiKeyId, now);
      if (lastTouched.size > 10_000) lastTouched.clear();
      touchApiKey(deps.db.pool, owner.apiKeyId, new Date(now)).catch((error: unknown) => deps.logger.warn("could not record API key use", { error }));
    }
    return owner;
  }

  return function authenticate(access) {
    return async (req, _res, next) => {
      const authorization = req.get("authorization");
      const apiKey = req.get("x-api-key");

      if (authorization !== undefined) {
        const match = /^Bearer\s+(\S+)$/i.exec(authorization);
        const claims = match ? verifyToken(match[1]!, deps.config.JWT_SECRET, deps.clock.now()) : null;
        if (!claims) return next(unauthorized("The bearer token is missing, malformed, expired or not signed by this service."));
        const membership = await findMembership(deps.db.pool, claims.orgId, claims.userId);
        if (!membership) return next(unauthorized("This token's user is no longer a member of its organization."));
        req.auth = { kind: "jwt", orgId: membership.orgId, userId: membership.userId, role: membership.role };
        return next();
      }

      if (apiKey !== undefined) {
        const owner = looksLikeApiKey(apiKey) ? await apiKeyOwner(apiKey) : null;
        if (!owner) return next(unauthorized("The API key is not valid or has been revoked."));
        if (access !== "job") return next(forbidden("API keys can only be used on the job endpoints; use a user token here."));
        req.auth = { kind: "api_key", orgId: owner.orgId, userId: owner.userId, role: "member", apiKeyId: owner.apiKeyId };
        return next();
      }

      next(unauthorized());
    };
  };
}

/** Refuses (403) callers whose role is not in `roles`. Place after an authenticate middleware. */
export function requireRole(...roles: Role[]): RequestHandler {
  return (req, _res, next) => {
    if (!req.auth) return next(unauthorized());
    if (!roles.includes(req.auth.role)) return next(forbidden(`This requires the ${roles.join(" or ")} role.`));
    next();
  };
}
