// The security headers of every API response (helmet's, app.ts chooses which). Helmet runs a middleware per header
// on every request; with settings whose values are all constants (no nonce, no function of the request) the result is
// the same for every request, so it is recorded once and replayed in one loop: the same headers in the same order.
import type { Request, RequestHandler, Response } from "express";

type HeaderOp = { set: string; value: string } | { remove: string };

/** `middleware`'s header writes replayed, or `middleware` itself when it did not finish at once or looked at the request. */
export function constantHeaders(middleware: RequestHandler): RequestHandler {
  const ops: HeaderOp[] = [];
  let finished = false;
  let failed: unknown;
  const request = new Proxy({} as Request, {
    get: () => {
      failed = new Error("reads the request");
      return undefined;
    },
  });
  const response = {
    setHeader: (name: string, value: unknown) => ops.push({ set: name, value: String(value) }),
    removeHeader: (name: string) => ops.push({ remove: name }),
  } as unknown as Response;
  try {
    void middleware(request, response, (error?: unknown) => {
      finished = true;
      failed ??= error;
    });
  } catch (error) {
    failed = error;
  }
  if (!finished || failed !== undefined) return middleware;
  return (_req, res, next) => {
    for (const op of ops) {
      if ("set" in op) res.setHeader(op.set, op.value);
      else res.removeHeader(op.remove);
    }
    next();
  };
}
