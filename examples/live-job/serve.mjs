// Serves the live job page (index.html) and the browser modules it imports: the built @conveyor/client
// (`npm run build -w @conveyor/client` first) and its two dependencies. `node examples/live-job/serve.mjs [port]`,
// then open http://localhost:<port>/?api=<API URL>&job=<job id>&token=<public token>. Tests start it the same way.
import { readFile } from "node:fs/promises";
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";

const here = import.meta.dirname;
const require = createRequire(import.meta.url);
const packageDir = (name) => path.dirname(require.resolve(`${name}/package.json`, { paths: [path.join(here, "../../packages/client")] }));

/** URL prefix → folder; nothing outside these folders is served. */
const roots = {
  "/vendor/conveyor-client/": path.join(here, "../../packages/client/dist/esm"),
  "/vendor/eventsource-parser/": path.join(packageDir("eventsource-parser"), "dist"),
  "/vendor/openapi-fetch/": path.join(packageDir("openapi-fetch"), "dist"),
};
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8" };

/** Starts the server on `port` (0: any free one); resolves with its origin. */
export function serveExample(port = 0, host = "127.0.0.1") {
  const server = http.createServer(async (req, res) => {
    const { pathname } = new URL(req.url ?? "/", "http://x");
    let file = pathname === "/" ? path.join(here, "index.html") : undefined;
    for (const [prefix, dir] of Object.entries(roots)) {
      if (!pathname.startsWith(prefix)) continue;
      const candidate = path.join(dir, path.normalize(pathname.slice(prefix.length)));
      if (candidate.startsWith(dir + path.sep)) file = candidate;
    }
    try {
      if (!file) throw new Error("not served");
      const body = await readFile(file);
      res.writeHead(200, { "Content-Type": TYPES[path.extname(file)] ?? "application/octet-stream", "Cache-Control": "no-store" });
      res.end(body);
    } catch {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("not found");
    }
  });
  return new Promise((resolve) => server.listen(port, host, () => resolve({ origin: `http://${host}:${server.address().port}`, close: () => server.close() })));
}

if (process.argv[1] === import.meta.filename) {
  const { origin } = await serveExample(Number(process.argv[2] ?? 5055));
  process.stdout.write(`The live job page: ${origin}/?api=…&job=…&token=… (add ${origin} to the API's PUBLIC_TOKEN_ORIGINS)\n`);
}
