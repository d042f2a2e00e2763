// Passwords (docs/reference/tenants.md#authentication): bcrypt at BCRYPT_COST, 15 characters (NIST SP 800-63B-4) to 72 bytes (bcrypt's input
// limit: anything longer is refused, never silently truncated).
import { randomBytes } from "node:crypto";
import bcrypt from "bcrypt";

export const PASSWORD_MIN_CHARACTERS = 15;
export const PASSWORD_MAX_BYTES = 72;

/** Why `password` cannot be set, or null. Characters are Unicode code points, as a person counts them. */
export function passwordProblem(password: string): string | null {
  if ([...password].length < PASSWORD_MIN_CHARACTERS) return `must be at least ${PASSWORD_MIN_CHARACTERS} characters long`;
  return passwordTooLong(password);
}

/** Refuses what bcrypt would truncate. */
export function passwordTooLong(password: string): string | null {
  const bytes = Buffer.byteLength(password, "utf8");
  return bytes > PASSWORD_MAX_BYTES ? `must be at most ${PASSWORD_MAX_BYTES} bytes long (it is ${bytes} bytes in UTF-8)` : null;
}

export function hashPassword(password: string, cost: number): Promise<string> {
  return bcrypt.hash(password, cost);
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return bcrypt.compare(password, hash);
}

const dummyHashes = new Map<number, Promise<string>>();

/**
 * Spends the time a real password check would take, for a login whose email has no account, so response
 * times do not tell which emails exist. Always false.
 */
export async function verifyAgainstNothing(password: string, cost: number): Promise<false> {
  await bcrypt.compare(password, await dummyHash(cost));
  return false;
}

/** The dummy hash for `cost`, made once; call at start so the first unknown-email login is not slower. */
export function dummyHash(cost: number): Promise<string> {
  let dummy = dummyHashes.get(cost);
  if (!dummy) {
    dummy = bcrypt.hash(randomBytes(24).toString("base64"), cost);
    dummyHashes.set(cost, dummy);
  }
  return dummy;
}
