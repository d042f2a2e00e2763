// Console session material. The cookie carries 32 random bytes (base64url); only their SHA-256 is stored. The CSRF
// token is derived, not stored: HMAC-SHA-256 of the session token's hash under a key derived from JWT_SECRET. It is
// not the session token and reveals nothing of it; a page script can read it from GET /auth/session and must send it
// as X-CSRF-Token with every state-changing request, which a cross-site page cannot do.
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function generateSessionToken(): { token: string; hash: Buffer } {
  const token = randomBytes(32).toString("base64url");
  return { token, hash: hashSessionToken(token) };
}

export function hashSessionToken(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/** Whether `value` is shaped like a session token at all (garbage is refused without a database lookup). */
export function looksLikeSessionToken(value: string): boolean {
  return TOKEN_SHAPE.test(value);
}

/** The key CSRF tokens are made with: its own key, derived from the signing secret, so the two uses never mix. */
export function csrfKey(secret: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "", "conveyor console csrf v1", 32));
}

/** The CSRF token of the session whose token has this hash. */
export function csrfToken(key: Buffer, tokenHash: Buffer): string {
  return createHmac("sha256", key).update(tokenHash).digest("base64url");
}

/** Whether `given` is the session's CSRF token, compared in constant time. */
export function csrfMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(expected, "utf8");
  const b = Buffer.from(given, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}
