// Public token material (docs/reference/events.md#progress-and-live-results): `cvpt_` + 32 random bytes in base64url. Only the SHA-256 is kept.
import { createHash, randomBytes } from "node:crypto";
import { PUBLIC_TOKEN_PATTERN } from "@conveyor/contracts";

export function generatePublicToken(): { token: string; hash: Buffer } {
  const token = `cvpt_${randomBytes(32).toString("base64url")}`;
  return { token, hash: hashPublicToken(token) };
}

export function hashPublicToken(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/** Whether `value` is shaped like a public token (saves a database lookup for anything else). */
export const looksLikePublicToken = (value: string): boolean => PUBLIC_TOKEN_PATTERN.test(value);
