// A small HTTP(S) server whose answers are plain Node handlers, for what the JSON fakes cannot do: stream bodies
// without Content-Length, lie about it, drip bytes, redirect across servers, and serve TLS with a certificate
// made at test time by openssl. It records, per request, the path, the Host header and the TLS SNI name.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TLSSocket } from "node:tls";

export type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;
export type Hit = { path: string; host?: string; servername?: string };

export type RouteServer = {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  port: number;
  hits: Hit[];
  route(path: string, handler: Route): void;
  close(): Promise<void>;
};

export type TestCertificate = { key: string; cert: string };

/** A self-signed certificate for `hostname` (subjectAltName DNS), made with the openssl CLI. */
export function selfSignedCertificate(hostname: string): TestCertificate {
  const dir = mkdtempSync(path.join(tmpdir(), "conveyor-cert-"));
  try {
    const key = path.join(dir, "key.pem");
    const cert = path.join(dir, "cert.pem");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        "1",
        "-subj",
        `/CN=${hostname}`,
        "-addext",
        `subjectAltName=DNS:${hostname}`,
      ],
      { stdio: "ignore" },
    );
    return { key: readFileSync(key, "utf8"), cert: readFileSync(cert, "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startImageServer(options: { tls?: TestCertificate } = {}): Promise<RouteServer> {
  const routes = new Map<string, Route>();
  const hits: Hit[] = [];
  const sockets = new Set<Socket>();
  const handle: Route = (req, res) => {
    const pathname = new URL(req.url ?? "/", "http://x.invalid").pathname;
    hits.push({ path: pathname, host: req.headers.host, servername: (req.socket as TLSSocket).servername || undefined });
    const route = routes.get(pathname);
    if (route) return route(req, res);
    res.writeHead(404, { "content-type": "text/plain" }).end("no such image");
  };
  const server = options.tls ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, handle) : http.createServer(handle);
  server.on(options.tls ? "secureConnection" : "connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  // Failed TLS handshakes are expected in some tests; keep them off the test output.
  server.on("tlsClientError", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${options.tls ? "https" : "http"}://127.0.0.1:${port}`,
    port,
    hits,
    route(routePath, handler) {
      routes.set(routePath, handler);
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers with `body` and its true Content-Length. */
export const serve =
  (body: Buffer, contentType = "application/octet-stream"): Route =>
  (_req, res) =>
    res.writeHead(200, { "content-type": contentType, "content-length": String(body.length) }).end(body);

/** Answers `status` with a Location header. */
export const redirect =
  (location: string, status = 302): Route =>
  (_req, res) =>
    res.writeHead(status, { location }).end();

/**
 * Streams chunks until the client goes away, never ending: chunked, without Content-Length unless `headers`
 * declares one (a lie, since the body never ends). `intervalMs` drips one chunk per interval.
 */
export const endless =
  (options: { chunkBytes?: number; intervalMs?: number; headers?: Record<string, string> } = {}): Route =>
  (req, res) => {
    const { chunkBytes = 64 * 1024, intervalMs = 0 } = options;
    if (!res.headersSent) res.writeHead(200, { "content-type": "image/png", ...options.headers });
    const chunk = Buffer.alloc(chunkBytes, 0x41);
    let stopped = false;
    req.socket.once("close", () => (stopped = true));
    const pump = () => {
      if (stopped) return;
      const more = res.write(chunk);
      if (intervalMs > 0) setTimeout(pump, intervalMs);
      else if (more) setImmediate(pump);
      else res.once("drain", pump);
    };
    pump();
  };

/** Never answers; the socket stays open until the client gives up. */
export const hang: Route = () => undefined;
