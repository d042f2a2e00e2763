// Sealed secrets (webhook endpoint secrets at rest): AES-256-GCM, bound to their row, refused when anything differs.
import { randomBytes } from "node:crypto";
import { newId, openSecret, sealSecret } from "@conveyor/db";

const key = randomBytes(32);
const secret = `whsec_${randomBytes(32).toString("base64")}`;

describe("sealed secrets", () => {
  it("opens what it sealed, and never holds the secret in clear", () => {
    const row = newId();
    const sealed = sealSecret(key, secret, row);
    expect(openSecret(key, sealed, row)).toBe(secret);
    expect(sealed.toString("latin1")).not.toContain(secret.slice(6, 20));
    // A fresh IV each time: the same secret never seals to the same bytes.
    expect(sealSecret(key, secret, row).equals(sealed)).toBe(false);
  });

  it("refuses another key, another row, a changed byte and an unknown format", () => {
    const row = newId();
    const sealed = sealSecret(key, secret, row);
    expect(() => openSecret(randomBytes(32), sealed, row)).toThrow();
    expect(() => openSecret(key, sealed, newId())).toThrow();
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => openSecret(key, tampered, row)).toThrow();
    const versioned = Buffer.from(sealed);
    versioned[0] = 9;
    expect(() => openSecret(key, versioned, row)).toThrow("not a sealed secret of a known format");
    expect(() => openSecret(key, Buffer.alloc(10), row)).toThrow("not a sealed secret of a known format");
  });
});
