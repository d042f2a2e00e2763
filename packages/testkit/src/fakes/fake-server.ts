// A local HTTP server that stands in for a provider in tests: it listens on 127.0.0.1 on a free port, records
// every request, and answers through a provider behaviour (the fake's model of the real API). Tests script the
// next answers to drive each error class and timeouts. Provider fakes in this folder are built on it.
//
// Rule shared by every fake: a request the provider would refuse (bad auth, wrong encoding, missing field) is
// always refused with the provider's real error, even when an answer was scripted; a scripted answer replaces
// the provider's answer to a valid request (and its side effects: nothing is "sent"). Delays, hangs and drops
// apply before anything else.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export type RecordedRequest = {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  /** Lower-cased header names, as Node parses them. */
  headers: IncomingHttpHeaders;
  /** The body as received, byte for byte (for signature checks). */
  raw: Buffer;
  /** The body decoded as UTF-8. */
  body: string;
  /** When it arrived (Date.now()). */
  receivedAt: number;
};

export type FakeReply = {
  status: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as text/plain; a Buffer as application/octet-stream (unless headers say otherwise). */
  body?: string | Buffer | object;
  /** Instead of `body`: pieces written one by one, `pauseMs` apart (a streamed answer, e.g. server-sent events). */
  stream?: { pieces: string[]; pauseMs: number };
};

export type FakeBehaviour = {
  /** The provider's refusal of an invalid request (its real error answer), or undefined when the request is valid. */
  refuse?: (request: RecordedRequest) => FakeReply | undefined;
  /** The provider's answer to a valid request (may record what was "sent"); skipped when an answer was scripted. */
  answer: (request: RecordedRequest) => FakeReply | Promise<FakeReply>;
  /** Forgets the provider's state (what was sent, idempotency keys); called by FakeServer.reset(). */
  reset?: () => void;
};

type Scripted = { kind: "reply"; reply: FakeReply } | { kind: "delay"; ms: number } | { kind: "hang" } | { kind: "drop" };

export type FakeServer = {
  /** Base URL, e.g. http://127.0.0.1:43123 (no trailing slash). */
  url: string;
  port: number;
  /** Every request received, in arrival order. */
  requests: RecordedRequest[];
  /** The most recent request; throws when none arrived. */
  lastRequest(): RecordedRequest;
  /** The next valid request gets this answer instead of the provider's success answer. */
  replyNext(reply: FakeReply): void;
  /** Shorthand for replyNext({status, body, headers}). */
  failNext(status: number, body?: FakeReply["body"], headers?: Record<string, string>): void;
  /** The next request is answered (normally) only after `ms` milliseconds. */
  delayNext(ms: number): void;
  /** The next request is never answered; the socket stays open until the client gives up or the fake closes. */
  hang(): void;
  /** The next request's connection is destroyed without an answer (a reset). */
  dropNext(): void;
  /** Resolves once at least `count` requests arrived (rejects after `timeoutMs`). */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Forgets recorded requests, pending scripts and the provider's state. */
  reset(): void;
  close(): Promise<void>;
};

export async function startFakeServer(behaviour: FakeBehaviour): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const scripts: Scripted[] = [];
  const waiters = new Set<() => void>();
  const sockets = new Set<Socket>();

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      const raw = Buffer.concat(chunks);
      const url = new URL(req.url ?? "/", "http://fake.invalid");
      const recorded: RecordedRequest = {
        method: req.method ?? "GET",
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        raw,
        body: raw.toString("utf8"),
        receivedAt: Date.now(),
      };
      requests.push(recorded);
      for (const wake of waiters) wake();

      const script = scripts.shift();
      if (script?.kind === "hang") return;
      if (script?.kind === "drop") {
        req.socket.destroy();
        return;
      }
      if (script?.kind === "delay") await new Promise((resolve) => setTimeout(resolve, script.ms));
      if (res.destroyed) return;

      let reply: FakeReply;
      try {
        reply = behaviour.refuse?.(recorded) ?? (script?.kind === "reply" ? script.reply : await behaviour.answer(recorded));
      } catch (error) {
        reply = { status: 500, body: `fake behaviour threw: ${(error as Error).message}` };
      }
      send(res, reply);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    lastRequest() {
      const last = requests.at(-1);
      if (!last) throw new Error("the fake received no request");
      return last;
    },
    replyNext(reply) {
      scripts.push({ kind: "reply", reply });
    },
    failNext(status, body, headers) {
      scripts.push({ kind: "reply", reply: { status, body, headers } });
    },
    delayNext(ms) {
      scripts.push({ kind: "delay", ms });
    },
    hang() {
      scripts.push({ kind: "hang" });
    },
    dropNext() {
      scripts.push({ kind: "drop" });
    },
    waitForRequests(count, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < count) return;
          cleanup();
          resolve(requests.slice());
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`expected ${count} request(s) within ${timeoutMs} ms, got ${requests.length}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    reset() {
      requests.length = 0;
      scripts.length = 0;
      behaviour.reset?.();
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

function send(res: import("node:http").ServerResponse, reply: FakeReply): void {
  if (reply.stream) return void sendStream(res, reply, reply.stream);
  const headers: Record<string, string> = { ...reply.headers };
  const has = (name: string) => Object.keys(headers).some((key) => key.toLowerCase() === name);
  let body: Buffer;
  if (reply.body === undefined) {
    body = Buffer.alloc(0);
  } else if (Buffer.isBuffer(reply.body)) {
    body = reply.body;
    if (!has("content-type")) headers["Content-Type"] = "application/octet-stream";
  } else if (typeof reply.body === "string") {
    body = Buffer.from(reply.body, "utf8");
    if (!has("content-type")) headers["Content-Type"] = "text/plain; charset=utf-8";
  } else {
    body = Buffer.from(JSON.stringify(reply.body), "utf8");
    if (!has("content-type")) headers["Content-Type"] = "application/json; charset=utf-8";
  }
  headers["Content-Length"] = String(body.length);
  res.writeHead(reply.status, headers);
  res.end(body);
}

/** Small readers shared by the provider fakes. */
export function headerValue(request: RecordedRequest, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(", ") : value;
}

/** The media type of the request, lower-cased, without parameters ("application/json"). */
export function mediaType(request: RecordedRequest): string {
  return (headerValue(request, "content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}

/** True when the Accept header admits `type` (absent Accept admits nothing, as the strict providers treat it). */
export function accepts(request: RecordedRequest, type: string): boolean {
  const accept = headerValue(request, "accept");
  if (!accept) return false;
  const [major] = type.split("/");
  return accept.split(",").some((part) => {
    const range = part.split(";")[0]!.trim().toLowerCase();
    return range === type || range === "*/*" || range === `${major}/*`;
  });
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Writes a streamed answer piece by piece (chunked), pausing between pieces; stops if the client goes away. */
async function sendStream(res: import("node:http").ServerResponse, reply: FakeReply, stream: { pieces: string[]; pauseMs: number }): Promise<void> {
  res.writeHead(reply.status, reply.headers);
  res.flushHeaders();
  for (const piece of stream.pieces) {
    if (res.destroyed) return;
    res.write(piece);
    await new Promise((resolve) => setTimeout(resolve, stream.pauseMs));
  }
  res.end();
}
