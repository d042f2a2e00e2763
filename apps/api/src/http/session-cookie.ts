// The console's session cookie (SPEC §11): HttpOnly (no page script reads it), SameSite=Strict (no other site's page
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
