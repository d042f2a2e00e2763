// One HTTP exchange through the SSRF guard, with node:http(s) directly: redirects are never followed here
// (callers decide per hop), and the response body is read under a byte cap while it streams, so a huge or
// endless body costs at most the cap in memory whatever Content-Length claims.
import http from "node:http";
import https from "node:https";
import type { ResolvedListener, SsrfGuard } from "./ssrf-guard";

export type GuardedRequest = {
  url: URL;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  /** Aborts the exchange (job signal combined with the deadline). */
  signal: AbortSignal;
  /** Most bytes of a 2xx body kept in memory. Other statuses' bodies are only read for an excerpt (4 KiB). */
  maxBodyBytes: number;
  /** For a 2xx body: "truncate" keeps the first maxBodyBytes and stops reading; "refuse" throws BodyTooLargeError. */
  overflow: "truncate" | "refuse";
  /** Heard with the addresses the guard checked and handed to the socket for this request. */
  onResolved?: ResolvedListener;
};

export type GuardedResponse = {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The body went on past maxBodyBytes (only with overflow "truncate"). */
  truncated: boolean;
};

/** The body is larger than allowed; `declared` is true when Content-Length said so before any byte was read. */
export class BodyTooLargeError extends Error {
  override name = "BodyTooLargeError";
  constructor(
    readonly limit: number,
    readonly declared: boolean,
  ) {
    super(declared ? `Content-Length is over the ${limit}-byte limit` : `body went past the ${limit}-byte limit`);
  }
}

const ERROR_BODY_BYTES = 4 * 1024;

/** Whether a response status means "look at Location" (callers decide whether to follow). */
export const isRedirect = (status: number): boolean => [301, 302, 303, 307, 308].includes(status);

/** Rejects with the signal's reason when it aborts (for steps that take no signal themselves). */
function untilAborted<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  let onAbort: () => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}

/**
 * The host is resolved and judged for every request; the connection is one the guard keeps alive for exactly the
 * addresses judged (SsrfGuard.pooledAgent), so deliveries to one endpoint share a connection (and a TLS session).
 */
export async function guardedRequest(guard: SsrfGuard, request: GuardedRequest): Promise<GuardedResponse> {
  const { url, signal } = request;
  const secure = url.protocol === "https:";
  const send = secure ? https.request : http.request;
  const agent = await untilAborted(signal, guard.pooledAgent(url, request.onResolved));
  return new Promise<GuardedResponse>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const req = send(url, {
      method: request.method,
      headers: request.body === undefined ? request.headers : { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) },
      agent,
      signal,
    });
    // `on`, not `once`: a late error after the answer (a reset while draining) must not go unhandled.
    req.on("error", (error) => reject(signal.aborted ? signal.reason : error));
    req.once("response", (res) => {
      const success = (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300;
      const read = success
        ? readCapped(res, request.maxBodyBytes, request.overflow, signal)
        : readCapped(res, Math.min(request.maxBodyBytes, ERROR_BODY_BYTES), "truncate", signal);
      read.then(
        ({ body, truncated }) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, truncated }),
        (error: unknown) => {
          req.destroy();
          reject(signal.aborted ? signal.reason : error);
        },
      );
    });
    req.end(request.body);
  });
}

async function readCapped(
  res: http.IncomingMessage,
  limit: number,
  overflow: "truncate" | "refuse",
  signal: AbortSignal,
): Promise<{ body: Buffer; truncated: boolean }> {
  const declared = Number(res.headers["content-length"]);
  if (overflow === "refuse" && Number.isFinite(declared) && declared > limit) throw new BodyTooLargeError(limit, true);
  const chunks: Buffer[] = [];
  let size = 0;
  const onAbort = () => res.destroy(signal.reason as Error);
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      if (size + chunk.length > limit) {
        if (overflow === "refuse") throw new BodyTooLargeError(limit, false);
        chunks.push(chunk.subarray(0, limit - size));
        res.destroy();
        return { body: Buffer.concat(chunks), truncated: true };
      }
      chunks.push(chunk);
      size += chunk.length;
    }
    return { body: Buffer.concat(chunks), truncated: false };
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
