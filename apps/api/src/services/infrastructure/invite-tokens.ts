// Invite tokens: 32 random bytes in base64url (43 characters). Only their SHA-256 is stored.
import { createHash, randomBytes } from "node:crypto";

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function generateInviteToken(): { token: string; hash: Buffer } {
  const token = randomBytes(32).toString("base64url");
  return { token, hash: hashInviteToken(token) };
}

export function hashInviteToken(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/** Whether `value` is shaped like a token at all (garbage is answered without a database lookup). */
export function looksLikeInviteToken(value: string): boolean {
  return TOKEN_SHAPE.test(value);
}
