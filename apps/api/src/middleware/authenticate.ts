// Who is calling, checked against the database on every request (docs/reference/tenants.md#authentication, docs/reference/tenants.md#the-console):
// - `Authorization: Bearer <jwt>`: HS256 signature and expiry, then the membership and the user's credential version
//   are read, so a removed member's token stops working at once, a role change applies at once, and a password change
//   ends every token issued before it.
// - `X-API-Key: cvk_…`: looked up by SHA-256; acts as `member` of its org. Cached for at most
//   API_KEY_CACHE_MS, so a revocation takes effect within that time.
// - the `conveyor_session` cookie (the console): looked up by SHA-256 with the same membership and version checks, and
//   for POST, PATCH, PUT and DELETE the session's CSRF token in `X-CSRF-Token` (else 403 csrf_failed).
// A bearer token wins over an API key, and either wins over the cookie. The session endpoints take the cookie only.
import type { Request, RequestHandler, Response } from "express";
import type { Role } from "@conveyor/contracts";
import { findLiveApiKey, findLivePublicToken, findLiveSession, findMembership, touchApiKey, type ApiKeyOwner } from "@conveyor/db";
import type { AppDeps } from "../context";
import type { Access } from "../declarations/endpoint";
import { AppError, forbidden, ssoRequired, unauthorized } from "../services/infrastructure/errors";
import { requestOrigin } from "../http/request-origin";
import { clearedSessionCookie, sessionTokenOf } from "../http/session-cookie";
import type { Caller } from "../services/infrastructure/deps";
import { hashApiKey, looksLikeApiKey } from "../services/infrastructure/api-key-secrets";
import { csrfKey, csrfMatches, csrfToken, hashSessionToken, looksLikeSessionToken } from "../services/infrastructure/session-secrets";
import { verifyToken } from "../services/infrastructure/tokens";
import { hashPublicToken, looksLikePublicToken } from "../services/infrastructure/public-token-secrets";

declare global {
  namespace Express {
    // eslint-disable-next-line @typescript-eslint/consistent-type-definitions -- declaration merging into Express' Request needs an interface
    interface Request {
      auth?: Caller;
    }
  }
}

/** Upper bound of how long a revoked key may still be accepted (docs/reference/tenants.md#authentication: within 5 s). */
export const API_KEY_CACHE_MS = 4_000;
/** last_used_at is written at most this often per key. */
const TOUCH_INTERVAL_MS = 60_000;
/** Methods that change state: with a session cookie they need the CSRF header. */
const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const CSRF_HEADER = "X-CSRF-Token";

/** The credential check of an endpoint that is not public: API keys are for the job endpoints only. */
export type Authenticator = (access: Exclude<Access, "public">) => RequestHandler;

/** Builds the authentication middleware; one instance (and one key cache) per app. */
export function createAuthenticator(deps: AppDeps): Authenticator {
  // Each entry remembers when it was read by the process clock and by the app's clock (which tests move);
  // it expires when either says API_KEY_CACHE_MS have passed, or went backwards.
  const keyCache = new Map<string, { owner: ApiKeyOwner | null; readAt: number; appReadAt: number }>();
  const fresh = (since: number, now: number) => now >= since && now - since < API_KEY_CACHE_MS;
  const lastTouched = new Map<string, number>();
  const csrf = csrfKey(deps.config.JWT_SECRET);

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

  async function bearer(req: Request, authorization: string): Promise<Caller> {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    const claims = match ? verifyToken(match[1]!, deps.config.JWT_SECRET, deps.clock.now()) : null;
    if (!claims) throw unauthorized("The bearer token is missing, malformed, expired or not signed by this service.");
    const membership = await findMembership(deps.db.pool, claims.orgId, claims.userId);
    if (!membership) throw unauthorized("This token's user is no longer a member of its organization.");
    if (membership.credentialVersion !== claims.version) throw unauthorized("This token was issued before the password changed; log in again.");
    // Tokens come from password logins: once the organization requires single sign-on, only its owner's still work.
    if (membership.ssoEnforced && membership.role !== "owner") throw ssoRequired();
    return { kind: "jwt", orgId: membership.orgId, userId: membership.userId, role: membership.role, request: requestOrigin(req) };
  }

  /** The caller of a session cookie; a dead session's cookie is cleared with the refusal. */
  async function session(req: Request, token: string): Promise<Caller> {
    const tokenHash = looksLikeSessionToken(token) ? hashSessionToken(token) : null;
    const live = tokenHash ? await findLiveSession(deps.db.pool, tokenHash, deps.clock.now()) : null;
    if (!live || !tokenHash) {
      throw new AppError("unauthorized", "The console session has ended or expired; log in again.", undefined, {
        "Set-Cookie": clearedSessionCookie(deps.config),
      });
    }
    const expected = csrfToken(csrf, tokenHash);
    if (STATE_CHANGING.has(req.method) && !csrfMatches(expected, req.get(CSRF_HEADER))) {
      throw new AppError(
        "csrf_failed",
        `A request made with the console's session cookie must send the session's CSRF token in ${CSRF_HEADER} (from GET /auth/session).`,
      );
    }
    return {
      kind: "session",
      orgId: live.orgId,
      userId: live.userId,
      role: live.role,
      session: { id: live.id, csrfToken: expected, viaSso: live.viaSso },
      request: requestOrigin(req),
    };
  }

  /** The caller of a job's public token: the job it reads, as the member who made it (docs/reference/events.md#progress-and-live-results). */
  async function publicToken(req: Request, token: string): Promise<Caller> {
    const grant = looksLikePublicToken(token) ? await findLivePublicToken(deps.db.pool, hashPublicToken(token), deps.clock.now()) : null;
    if (!grant) throw unauthorized("The public token is not valid, has expired or has been revoked.");
    return {
      kind: "public_token",
      orgId: grant.orgId,
      userId: grant.createdBy,
      role: "member",
      publicToken: { id: grant.id, jobId: grant.jobId, expiresAt: grant.expiresAt },
      request: requestOrigin(req),
    };
  }

  async function identify(req: Request, access: Exclude<Access, "public">): Promise<Caller> {
    // A public token is taken on the endpoints that read one job only; anywhere else it is no credential at all (401).
    if (access === "job_read") {
      const token = publicTokenOf(req);
      if (token !== undefined) return publicToken(req, token);
    }
    const token = sessionTokenOf(req);
    if (access === "session") {
      if (token === undefined) throw unauthorized("No console session: log in with POST /auth/session.");
      return session(req, token);
    }
    const authorization = req.get("authorization");
    // A worker's key may come as a bearer token too (SDKs of other languages send it so).
    const bearerKey = access === "worker" ? /^Bearer\s+(cvk_\S+)$/i.exec(authorization ?? "")?.[1] : undefined;
    if (authorization !== undefined && bearerKey === undefined) {
      if (access === "worker") throw forbidden('The worker protocol takes an API key of the worker role (POST /api-keys {role: "worker"}).');
      return bearer(req, authorization);
    }
    const apiKey = bearerKey ?? req.get("x-api-key");
    if (apiKey !== undefined) {
      const owner = looksLikeApiKey(apiKey) ? await apiKeyOwner(apiKey) : null;
      if (!owner) throw unauthorized("The API key is not valid or has been revoked.");
      // docs/reference/lifecycle.md#your-own-workers: a worker key does nothing but the worker protocol, and only a worker key does that.
      if (owner.role === "worker" && access !== "worker") throw forbidden("A worker API key can only be used for the worker protocol (/worker/*).");
      if (owner.role !== "worker" && access === "worker")
        throw forbidden('The worker protocol takes an API key of the worker role (POST /api-keys {role: "worker"}).');
      if (access !== "job" && access !== "job_read" && access !== "worker")
        throw forbidden("API keys can only be used on the job endpoints; use a user token here.");
      return {
        kind: "api_key",
        orgId: owner.orgId,
        userId: owner.userId,
        role: "member",
        apiKeyId: owner.apiKeyId,
        ...(owner.role === "worker" ? { worker: true as const } : {}),
        request: requestOrigin(req),
      };
    }
    if (access === "worker") throw unauthorized("The worker protocol takes an API key of the worker role.");
    if (token !== undefined) return session(req, token);
    throw unauthorized();
  }

  return function authenticate(access) {
    return async (req: Request, _res: Response, next) => {
      try {
        req.auth = await identify(req, access);
        next();
      } catch (error) {
        next(error);
      }
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

/** A public token sent as `Authorization: Bearer cvpt_…` or as `?token=` (EventSource cannot send headers). */
function publicTokenOf(req: Request): string | undefined {
  const match = /^Bearer\s+(cvpt_\S+)$/i.exec(req.get("authorization") ?? "");
  if (match) return match[1];
  const query: unknown = req.query.token;
  return typeof query === "string" && query.startsWith("cvpt_") ? query : undefined;
}
