// Scalar's standalone bundle (~4 MB). `npm run build` copies it into dist/assets (scripts/copy-docs-bundle.js),
// because @scalar/api-reference is a dev dependency and production images install none; running from source
// (tests, `npm start`) reads it from node_modules. Loaded once, hashed for the cache-busting URL, gzipped once.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { gzip } from "node:zlib";

export type DocsBundle = { hash: string; raw: Buffer; gzipped: Buffer };

/** Where `npm run build` puts the bundle, relative to this file in dist/pages/docs/. */
const COPIED = path.resolve(__dirname, "../../assets/scalar-standalone.js");

function installed(): string | null {
  try {
    return path.join(path.dirname(require.resolve("@scalar/api-reference")), "browser", "standalone.js");
  } catch {
    return null;
  }
}

/** The bundle's file, or null when neither the build's copy nor the dev dependency is there. */
export function bundlePath(): string | null {
  if (existsSync(COPIED)) return COPIED;
  const fromModules = installed();
  return fromModules && existsSync(fromModules) ? fromModules : null;
}

let loading: Promise<DocsBundle | null> | undefined;

/** The bundle, read on first use and kept; null when it is not installed. */
export function docsBundle(): Promise<DocsBundle | null> {
  loading ??= (async () => {
    const file = bundlePath();
    if (!file) return null;
    const raw = await readFile(file);
    const gzipped = await promisify(gzip)(raw);
    return { hash: createHash("sha256").update(raw).digest("hex").slice(0, 16), raw, gzipped };
  })().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}
