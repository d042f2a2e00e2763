// JSON bodies only (415 otherwise, and UTF-8 only), at most 1 MiB (413), well-formed (400 invalid_json), and
// made only of values every layer behind can store — before any route sees them (400 validation_failed):
// - nesting at most MAX_JSON_DEPTH levels (deeper values overflow JSON.stringify and Postgres' jsonb parser);
// - no `__proto__`, `constructor` or `prototype` key at any depth (prototype pollution, here or in a worker);
// - no NUL character and no lone UTF-16 surrogate in any string or key (Postgres refuses both in text and
//   jsonb; a lone surrogate cannot even be encoded as UTF-8).
// Query strings get the same character rules.
import express, { type RequestHandler } from "express";
import { MAX_JSON_DEPTH } from "@conveyor/contracts";
import { AppError, validationFailed, type ErrorDetail } from "../services/infrastructure/errors";

export const BODY_LIMIT_BYTES = 1024 * 1024;

const JSON_TYPE = /^application\/([\w.-]+\+)?json$/i;
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);
/** A NUL, or a surrogate that is not half of a pair. */
// eslint-disable-next-line no-control-regex -- matching NUL is the point: Postgres refuses it in text and jsonb
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function hasBody(req: express.Request): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

const requireJson: RequestHandler = (req, _res, next) => {
  if (!hasBody(req)) return next();
  const [mediaType, ...parameters] = (req.headers["content-type"] ?? "").split(";");
  const type = mediaType!.trim();
  if (!JSON_TYPE.test(type)) {
    return next(new AppError("unsupported_media_type", `Request bodies must be JSON (Content-Type: application/json), not ${type || "untyped"}.`));
  }
  const charset = parameters.map((p) => /^\s*charset\s*=\s*"?([^";\s]*)"?\s*$/i.exec(p)?.[1]).find((c) => c !== undefined);
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    return next(new AppError("unsupported_media_type", "JSON bodies must be UTF-8; send Content-Type: application/json without another charset."));
  }
  next();
};

function describe(text: string): string {
  return text.includes("\u0000") ? "must not contain a NUL character (\\u0000)" : "must not contain a lone UTF-16 surrogate";
}

/**
 * The first problem of `value` as a validation detail, or null. Walks with an explicit stack, so a value nested
 * far deeper than the limit is refused rather than overflowing this walk.
 */
export function unstorableJson(value: unknown, root: string): ErrorDetail | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: root, depth: 0 }];
  while (stack.length) {
    const { value: current, path, depth } = stack.pop()!;
    if (typeof current === "string") {
      if (UNSTORABLE.test(current)) return { path, message: describe(current) };
      continue;
    }
    if (current === null || typeof current !== "object") continue;
    if (depth >= MAX_JSON_DEPTH) return { path, message: `nests deeper than ${MAX_JSON_DEPTH} levels` };
    const entries = Array.isArray(current) ? current.map((item, i) => [String(i), item] as const) : Object.entries(current);
    for (const [key, child] of entries) {
      const childPath = path ? `${path}.${key}` : key;
      if (FORBIDDEN_KEYS.has(key)) return { path: childPath, message: "is not an allowed key" };
      if (UNSTORABLE.test(key)) return { path: childPath, message: `is a key that ${describe(key)}` };
      stack.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
  return null;
}

const refuseUnstorableBody: RequestHandler = (req, _res, next) => {
  const problem = unstorableJson(req.body, "");
  if (!problem) return next();
  next(validationFailed([{ path: problem.path || "body", message: problem.message }]));
};

const refuseUnstorableQuery: RequestHandler = (req, _res, next) => {
  const problem = unstorableJson(req.query, "query");
  if (!problem) return next();
  next(validationFailed([problem]));
};

export function jsonBody(): RequestHandler[] {
  return [requireJson, express.json({ limit: BODY_LIMIT_BYTES, type: () => true, strict: true }), refuseUnstorableBody, refuseUnstorableQuery];
}
