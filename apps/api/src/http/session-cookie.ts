// The console's session cookie (docs/reference/tenants.md#the-console): HttpOnly (no page script reads it), SameSite=Strict (no other site's page
// sends it), Path=/, Secure when the deployment is served over https or runs in production. Max-Age is the session's
// remaining lifetime; logging out (or presenting a dead session) clears it.
import type { Request } from "express";
import { parseCookie, stringifySetCookie } from "cookie";
import type { ApiConfig } from "../env";

export const SESSION_COOKIE = "conveyor_session";

type CookieConfig = Pick<ApiConfig, "NODE_ENV" | "PUBLIC_URL">;

const secure = (config: CookieConfig) => config.NODE_ENV === "production" || config.PUBLIC_URL.startsWith("https:");

/** The Set-Cookie value that stores `token` for `maxAgeSeconds`. */
export function sessionCookie(token: string, maxAgeSeconds: number, config: CookieConfig): string {
  return stringifySetCookie({
    name: SESSION_COOKIE,
    value: token,
    maxAge: Math.max(0, Math.floor(maxAgeSeconds)),
    path: "/",
    httpOnly: true,
    sameSite: "strict",
    secure: secure(config),
  });
}

/** The Set-Cookie value that removes the cookie. */
export function clearedSessionCookie(config: CookieConfig): string {
  return sessionCookie("", 0, config);
}

/** The session token the request carries, if any (the first, should a client send several). */
export function sessionTokenOf(req: Request): string | undefined {
  const header = req.get("cookie");
  if (!header) return undefined;
  // The token is base64url: nothing to decode, and a malformed escape must not throw.
  return parseCookie(header, { decode: (value) => value })[SESSION_COOKIE];
}

/**
 * The cookie that ties a single sign-on to the browser that started it (docs/reference/tenants.md#audit-log): a random token whose SHA-256 names
 * the sign-in's stored state. SameSite=Lax, because the provider's redirect back is a cross-site navigation, which a
 * Strict cookie would not accompany; HttpOnly, and sent only to /auth/sso.
 */
export const SSO_COOKIE = "conveyor_sso";
const SSO_COOKIE_PATH = "/auth/sso";

export function ssoCookie(token: string, maxAgeSeconds: number, config: CookieConfig): string {
  return stringifySetCookie({
    name: SSO_COOKIE,
    value: token,
    maxAge: Math.max(0, Math.floor(maxAgeSeconds)),
    path: SSO_COOKIE_PATH,
    httpOnly: true,
    sameSite: "lax",
    secure: secure(config),
  });
}

export function clearedSsoCookie(config: CookieConfig): string {
  return ssoCookie("", 0, config);
}

/** The single sign-on token the request carries, if any. */
export function ssoFlowTokenOf(req: Request): string | undefined {
  const header = req.get("cookie");
  if (!header) return undefined;
  return parseCookie(header, { decode: (value) => value })[SSO_COOKIE] || undefined;
}
