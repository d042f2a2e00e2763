// Gives every request an id (the client's X-Request-Id if sane, else a new one), a logger bound to it,
// and one access-log line when it finishes. Only the path is logged: query strings can carry invite tokens.
import { randomUUID } from "node:crypto";
import type { RequestHandler } from "express";
import type { Logger } from "@conveyor/logger";

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      id: string;
      log: Logger;
    }
  }
}

const CLIENT_ID = /^[\w\-.:]{1,128}$/;

export function requestContext(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const given = req.get("x-request-id");
    req.id = given && CLIENT_ID.test(given) ? given : randomUUID();
    req.log = logger.child({ requestId: req.id });
    res.setHeader("X-Request-Id", req.id);
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const level = res.statusCode >= 500 ? "error" : "info";
      req.log.log(level, `${req.method} ${req.path} ${res.statusCode} ${ms.toFixed(1)}ms`);
    });
    next();
  };
}
