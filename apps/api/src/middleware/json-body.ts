// JSON bodies only (415 otherwise), at most 1 MiB (413), well-formed (400 invalid_json), and without keys
// that could reach an object's prototype (400 validation_failed) — before any route sees them.
import express, { type RequestHandler } from "express";
import { AppError } from "../http/errors";

export const BODY_LIMIT_BYTES = 1024 * 1024;

const JSON_TYPE = /^application\/([\w.-]+\+)?json$/i;

function hasBody(req: express.Request): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

const requireJson: RequestHandler = (req, _res, next) => {
  if (!hasBody(req)) return next();
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim();
  if (!JSON_TYPE.test(type)) {
    return next(new AppError("unsupported_media_type", `Request bodies must be JSON (Content-Type: application/json), not ${type || "untyped"}.`));
  }
  next();
};

/** Finds `__proto__` keys and `constructor.prototype`, at any depth. */
function prototypeKeyPath(value: unknown, path: string[] = [], depth = 0): string | null {
  if (value === null || typeof value !== "object" || depth > 64) return null;
  for (const key of Object.keys(value)) {
    const child = (value as Record<string, unknown>)[key];
    if (key === "__proto__" || (key === "constructor" && child !== null && typeof child === "object" && Object.hasOwn(child, "prototype"))) {
      return [...path, key].join(".");
    }
    const found = prototypeKeyPath(child, [...path, key], depth + 1);
    if (found) return found;
  }
  return null;
}

const refusePrototypeKeys: RequestHandler = (req, _res, next) => {
  const path = prototypeKeyPath(req.body);
  if (path) {
    return next(new AppError("validation_failed", `The key ${path.split(".").pop()} is not allowed in request bodies.`, [{ path, message: "is not allowed" }]));
  }
  next();
};

export function jsonBody(): RequestHandler[] {
  return [requireJson, express.json({ limit: BODY_LIMIT_BYTES, type: () => true, strict: true }), refusePrototypeKeys];
}
