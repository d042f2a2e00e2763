// The web console (apps/console), built by Vite into apps/console/dist and served by the API from its own origin.
// Read from disk on first use and again whenever index.html changes (a rebuild while the API runs); each asset is
// gzipped once. Assets are looked up by name in what the build wrote, never by joining a request path.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { CONSOLE_PAGES } from "@conveyor/contracts";
import { DOCS_PAGE_POLICY } from "../docs";

/** Where Vite writes the console, relative to this file in src/pages/console/ or dist/pages/console/. */
export const CONSOLE_DIST = path.resolve(__dirname, "../../../../console/dist");

/**
 * The console's pages (CONSOLE_PAGES, the one list, which the console's router declares exactly; `$name` is a path
 * parameter) as patterns of request paths (a trailing slash allowed). A browser navigation to one of them (a GET
 * whose Accept prefers text/html) gets the console's page; everything else, including API clients asking the same
 * paths (`Accept: application/json` or `*` + `/*`), gets the API.
 */
export const CONSOLE_ROUTES: readonly RegExp[] = CONSOLE_PAGES.map((page) => {
  if (page === "/") return /^\/$/;
  const segments = page
    .slice(1)
    .split("/")
    .map((segment) => (segment.startsWith("$") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
  return new RegExp(`^/${segments.join("/")}/?$`);
});

/**
 * The policy of /docs, plus `frame-src blob:` so the job page can preview a PDF artifact it fetched itself
 * (the frame shows a blob: URL the console made; nothing is framed from elsewhere).
 */
export const CONSOLE_PAGE_POLICY = `${DOCS_PAGE_POLICY}; frame-src blob:`;

export type ConsoleAsset = { type: string; raw: Buffer; gzipped: Buffer | null };
export type ConsoleBuild = { index: Buffer; assets: Map<string, ConsoleAsset>; version: number };

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json",
};
const COMPRESSIBLE = new Set([".js", ".css", ".svg", ".json"]);

const cache = new Map<string, ConsoleBuild>();

function read(dir: string, version: number): ConsoleBuild {
  const assets = new Map<string, ConsoleAsset>();
  const assetDir = path.join(dir, "assets");
  for (const name of existsSync(assetDir) ? readdirSync(assetDir) : []) {
    const ext = path.extname(name);
    const type = TYPES[ext];
    if (!type) continue;
    const raw = readFileSync(path.join(assetDir, name));
    assets.set(name, { type, raw, gzipped: COMPRESSIBLE.has(ext) ? gzipSync(raw) : null });
  }
  return { index: readFileSync(path.join(dir, "index.html")), assets, version };
}

/** The built console, or null when apps/console/dist has no index.html (the API works without it). */
export function consoleBuild(dir = CONSOLE_DIST): ConsoleBuild | null {
  let version: number;
  try {
    version = statSync(path.join(dir, "index.html")).mtimeMs;
  } catch {
    cache.delete(dir);
    return null;
  }
  let build = cache.get(dir);
  if (build?.version !== version) cache.set(dir, (build = read(dir, version)));
  return build;
}

/** What `/` shows when the console was not built: the API itself still answers JSON everywhere. */
export const CONSOLE_MISSING_HTML = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Conveyor</title></head>
<body>
  <h1>Conveyor</h1>
  <p>The API is running, but its web console was not built. Build it with <code>npm run build -w @conveyor/console</code>
  (<code>npm start</code> does it for you), then reload.</p>
  <p>The API reference is at <a href="/docs">/docs</a> and the document at <a href="/openapi.json">/openapi.json</a>.</p>
</body>
</html>
`;
