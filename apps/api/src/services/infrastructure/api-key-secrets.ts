// API key material: `cvk_` + 32 random bytes in base62. Only the SHA-256 and the first 8 characters are kept.
import { hash, randomBytes } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
export const API_KEY_PREFIX = "cvk_";
const KEY_SHAPE = /^cvk_[0-9A-Za-z]{40,46}$/;

function base62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString("hex")}`);
  let out = "";
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(43, "0");
}

export function generateApiKey(): { key: string; prefix: string; hash: Buffer } {
  const key = API_KEY_PREFIX + base62(randomBytes(32));
  return { key, prefix: key.slice(0, 8), hash: hashApiKey(key) };
}

export function hashApiKey(key: string): Buffer {
  // The one-shot hash: every authenticated request pays it, and it makes no Hash object.
  return hash("sha256", key, "buffer");
}

/** Whether `value` is shaped like a key at all (saves a database lookup for garbage). */
export function looksLikeApiKey(value: string): boolean {
  return KEY_SHAPE.test(value);
}
