// Secrets that must be read back (webhook endpoint secrets: HMAC signing needs the secret itself, so a hash will
// not do) are stored sealed with AES-256-GCM under WEBHOOK_SECRETS_KEY. The sealed form is bound to the row it
// belongs to (the associated data), so a sealed secret copied into another row does not open there.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** Format 1: version byte, 12-byte IV, 16-byte tag, ciphertext. */
const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Seals `secret` for the row `boundTo` (e.g. the endpoint id). */
export function sealSecret(key: Buffer, secret: string, boundTo: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(boundTo, "utf8"));
  const ciphertext = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), ciphertext]);
}

/** Opens what sealSecret made for `boundTo`; throws when the key, the row or the bytes are not the ones it was sealed with. */
export function openSecret(key: Buffer, sealed: Buffer, boundTo: string): string {
  if (sealed.length < 1 + IV_BYTES + TAG_BYTES || sealed[0] !== VERSION) throw new Error("not a sealed secret of a known format");
  const iv = sealed.subarray(1, 1 + IV_BYTES);
  const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv("aes-256-gcm", key, iv);
  decipher.setAAD(Buffer.from(boundTo, "utf8"));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
}
