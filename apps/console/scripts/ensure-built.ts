// Builds the console (vite build) when apps/console/dist is missing or older than its sources: `npm start`, the
// browser tests and CI call it, so a fresh clone's `npm ci && npm start` serves the console without a separate
// step. "Older" is decided by a hash of the inputs (sources, config, the client package, the lockfile), kept in
// dist/.build-hash, not by file times, which a checkout rewrites. A lock keeps parallel test files from building
// at once.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

const CONSOLE = path.resolve(__dirname, "..");
const ROOT = path.resolve(CONSOLE, "../..");
export const CONSOLE_DIST = path.join(CONSOLE, "dist");
const HASH_FILE = path.join(CONSOLE_DIST, ".build-hash");
const LOCK = path.join(CONSOLE, ".build-lock");
const INPUTS = [
  "apps/console/src",
  "apps/console/index.html",
  "apps/console/vite.config.mts",
  "apps/console/package.json",
  "packages/client/src",
  "packages/contracts/src/console-pages.ts",
  "package-lock.json",
];

function files(entry: string): string[] {
  const full = path.join(ROOT, entry);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [entry];
  return readdirSync(full)
    .sort()
    .flatMap((name) => files(path.join(entry, name)));
}

/** A hash of everything the build reads from this repository. */
export function inputHash(): string {
  const hash = createHash("sha256");
  for (const file of INPUTS.flatMap(files))
    hash
      .update(file)
      .update("\0")
      .update(readFileSync(path.join(ROOT, file)))
      .update("\0");
  return hash.digest("hex");
}

export function isConsoleFresh(): boolean {
  return existsSync(path.join(CONSOLE_DIST, "index.html")) && existsSync(HASH_FILE) && readFileSync(HASH_FILE, "utf8") === inputHash();
}

function lock(timeoutMs: number): () => void {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(LOCK);
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch {
      // A lock left by a killed build is taken over after two minutes.
      if (existsSync(LOCK) && Date.now() - statSync(LOCK).mtimeMs > 120_000) rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`Timed out waiting for another console build (${LOCK}).`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
}

/** Builds the console unless dist/ matches the sources; says which it did. */
export function ensureConsoleBuilt(log: (line: string) => void = () => {}): "fresh" | "built" {
  if (isConsoleFresh()) return "fresh";
  const release = lock(180_000);
  try {
    if (isConsoleFresh()) return "fresh";
    log("Building the console (apps/console, vite build and vite build --ssr)…");
    const hash = inputHash();
    // The page, then the first rows of /jobs the API draws with it (dist/server; the first build empties dist/).
    for (const ssr of [[], ["--ssr", "src/first-page-server.tsx"]])
      execFileSync(process.execPath, [path.join(ROOT, "node_modules/vite/bin/vite.js"), "build", ...ssr, "--logLevel", "warn"], {
        cwd: CONSOLE,
        stdio: ["ignore", "inherit", "inherit"],
        // A production build whatever the caller runs as (jest sets NODE_ENV=test, which would select React's development build).
        env: { ...process.env, NODE_ENV: "production" },
      });
    writeFileSync(HASH_FILE, hash);
    log("Console built into apps/console/dist.");
    return "built";
  } finally {
    release();
  }
}

if (require.main === module) {
  try {
    const outcome = ensureConsoleBuilt((line) => process.stdout.write(`${line}\n`));
    if (outcome === "fresh") process.stdout.write("The console in apps/console/dist is up to date.\n");
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
