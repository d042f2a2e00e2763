// JWTs: HS256 only, always with an expiry; claims `sub` (user id), `org` (org id) and `ver`, the user's credential
// version when the token was issued (a token without it is version 0). A password change raises the version, which
// ends every token issued before.
import jwt from "jsonwebtoken";
import { isUuid } from "@conveyor/db";
import type { ApiConfig } from "../../env";

export type TokenClaims = { userId: string; orgId: string; /** Default 0. */ version?: number };

export function signToken(claims: TokenClaims, config: Pick<ApiConfig, "JWT_SECRET" | "JWT_TTL">, now: Date): string {
  const iat = Math.floor(now.getTime() / 1000);
  return jwt.sign({ sub: claims.userId, org: claims.orgId, ver: claims.version ?? 0, iat }, config.JWT_SECRET, {
    algorithm: "HS256",
    expiresIn: config.JWT_TTL as jwt.SignOptions["expiresIn"],
  });
}

/** The claims of a valid token, or null: wrong algorithm or signature, expired, no expiry, malformed claims. */
export function verifyToken(token: string, secret: string, now: Date): Required<TokenClaims> | null {
  try {
    const payload = jwt.verify(token, secret, { algorithms: ["HS256"], clockTimestamp: Math.floor(now.getTime() / 1000) });
    if (typeof payload !== "object" || typeof payload.exp !== "number") return null;
    const { sub, org, ver = 0 } = payload as { sub?: unknown; org?: unknown; ver?: unknown };
    if (typeof sub !== "string" || typeof org !== "string" || !isUuid(sub) || !isUuid(org)) return null;
    if (typeof ver !== "number" || !Number.isSafeInteger(ver) || ver < 0) return null;
    return { userId: sub, orgId: org, version: ver };
  } catch {
    return null;
  }
}
