// JSON bodies only (415 otherwise, and UTF-8 only), at most 1 MiB (413), well-formed (400 invalid_json), and
// made only of values every layer behind can store — before any route sees them (400 validation_failed):
// - nesting at most MAX_JSON_DEPTH levels (deeper values overflow JSON.stringify and Postgres' jsonb parser);
// - no `__proto__`, `constructor` or `prototype` key at any depth (prototype pollution, here or in a worker);
// - no NUL character and no lone UTF-16 surrogate in any string or key (Postgres refuses both in text and
//   jsonb; a lone surrogate cannot even be encoded as UTF-8).
// Query strings get the same character rules.
import { StringDecoder } from "node:string_decoder";
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

/** A Content-Length of 1 byte to BODY_LIMIT_BYTES, in plain decimal. */
const PLAIN_LENGTH = /^[1-9]\d{0,6}$/;
/** The first character that is not JSON whitespace. */
const FIRST_CHAR = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d])/;

/** An error body-parser would raise, by its `type` (what the error handler maps to docs/reference/http.md#errors). */
const bodyError = (type: string, cause?: unknown) => Object.assign(new Error(`request body: ${type}`, { cause }), { type, status: 400, expose: true });

/**
 * The common body read without body-parser's generality (content types, charsets, decompression, streams of unknown
 * length), which is most of its cost per request: `application/json` (or with `charset=utf-8`), no Content-Encoding
 * nor Transfer-Encoding, a Content-Length within the limit. Decoded as body-parser decodes UTF-8 (a leading BOM
 * dropped, bad bytes as U+FFFD) and parsed as its strict mode does; its refusals carry body-parser's `type`, so they are
 * answered alike. Every other body goes to body-parser.
 */
function plainJson(general: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const { headers } = req;
    const length = headers["content-length"];
    const type = headers["content-type"];
    if (
      (type !== "application/json" && type?.toLowerCase() !== "application/json; charset=utf-8") ||
      headers["content-encoding"] !== undefined ||
      headers["transfer-encoding"] !== undefined ||
      length === undefined ||
      !PLAIN_LENGTH.test(length) ||
      Number(length) > BODY_LIMIT_BYTES ||
      req.readableDidRead ||
      req.readableEnded
    ) {
      return general(req, res, next);
    }
    const expected = Number(length);
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (error: Error | null) => {
      req.off("data", onData).off("end", onEnd).off("aborted", onAborted).off("error", onError);
      if (error) return next(error);
      const decoder = new StringDecoder("utf8");
      let text = decoder.write(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received)) + decoder.end();
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      const first = text[0] === "{" || text[0] === "[" ? text[0] : FIRST_CHAR.exec(text)?.[1];
      if (first !== "{" && first !== "[") return next(bodyError("entity.parse.failed"));
      try {
        req.body = JSON.parse(text) as unknown;
      } catch (parseError) {
        return next(bodyError("entity.parse.failed", parseError));
      }
      next();
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
    };
    const onEnd = () => finish(received === expected ? null : bodyError("request.size.invalid"));
    const onAborted = () => finish(bodyError("request.aborted"));
    const onError = (error: Error) => finish(bodyError("request.aborted", error));
    req.on("data", onData).on("end", onEnd).on("aborted", onAborted).on("error", onError);
  };
}

export function jsonBody(): RequestHandler[] {
  const general = express.json({ limit: BODY_LIMIT_BYTES, type: () => true, strict: true });
  return [requireJson, plainJson(general), refuseUnstorableBody, refuseUnstorableQuery];
}
