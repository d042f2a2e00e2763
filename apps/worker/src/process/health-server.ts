// The worker's small HTTP server on WORKER_METRICS_PORT: /healthz for container health checks, and any
// extra routes (such as /metrics) the runtime registers.
import http from "node:http";
import type { AddressInfo } from "node:net";

export type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

export type HealthServer = { port: number; close(): Promise<void> };

/** Serves `/healthz` (200 while `healthy()` is true, else 503) and the given routes. */
export async function startHealthServer(port: number, healthy: () => boolean, routes: Record<string, Route> = {}): Promise<HealthServer> {
  const server = http.createServer(async (req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    if (path === "/healthz") {
      const ok = healthy();
      res.writeHead(ok ? 200 : 503, { "content-type": "application/json" }).end(JSON.stringify({ status: ok ? "ok" : "stopping" }));
      return;
    }
    const route = routes[path];
    if (!route) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "not_found", message: "Not found." } }));
      return;
    }
    try {
      await route(req, res);
    } catch {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "internal_error", message: "Something went wrong." } }));
    }
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
