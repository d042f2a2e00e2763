// Gives every request an id (the client's X-Request-Id if sane, else a new one), a logger bound to it,
// and one access-log line when it finishes. Only the path is logged: query strings can carry invite tokens.
import { randomUUID } from "node:crypto";
import type { Request, RequestHandler } from "express";
import { requestLineWriter, type Logger } from "@conveyor/logger";

declare global {
  namespace Express {
    // eslint-disable-next-line @typescript-eslint/consistent-type-definitions -- declaration merging into Express' Request needs an interface
    interface Request {
      id: string;
      log: Logger;
    }
  }
}

const CLIENT_ID = /^[\w\-.:]{1,128}$/;

/**
 * Request ids, a request-bound logger and access lines. The bound logger (`req.log`) is made on first use,
 * by a getter on the app's request prototype: most requests only write their access line, which needs none.
 */
export function requestContext(logger: Logger): RequestHandler {
  const prototypes = new WeakSet<object>();
  const accessLine = requestLineWriter(logger);
  return (req, res, next) => {
    const prototype = Object.getPrototypeOf(req) as object;
    if (!prototypes.has(prototype)) {
      prototypes.add(prototype);
      Object.defineProperty(prototype, "log", {
        configurable: true,
        get(this: Request & { boundLog?: Logger }) {
          return (this.boundLog ??= logger.child({ requestId: this.id }));
        },
      });
    }
    const given = req.get("x-request-id");
    const requestId = given && CLIENT_ID.test(given) ? given : randomUUID();
    req.id = requestId;
    res.setHeader("X-Request-Id", requestId);
    const started = performance.now();
    res.once("finish", () => {
      const ms = performance.now() - started;
      accessLine(res.statusCode >= 500 ? "error" : "info", `${req.method} ${req.path} ${res.statusCode} ${ms.toFixed(1)}ms`, requestId);
    });
    next();
  };
}
