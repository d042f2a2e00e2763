// Renders every error as docs/reference/http.md#errors's body. Known refusals keep their code; an unreachable Postgres is 503;
// anything else is a 500 whose message says nothing about our insides (the log has the details).
import type { ErrorRequestHandler, RequestHandler } from "express";
import { isDatabaseUnavailable } from "@conveyor/db";
import { httpStatus } from "../http/errors";
import { AppError, notFound } from "../services/infrastructure/errors";

/** Errors raised by body-parser before a route runs, by their `type`. */
function fromBodyParser(error: unknown): AppError | null {
  const type = typeof error === "object" && error !== null && "type" in error ? error.type : undefined;
  switch (type) {
    case "entity.too.large":
      return new AppError("payload_too_large", "The request body is larger than 1 MiB.");
    case "entity.parse.failed":
      return new AppError("invalid_json", "The request body is not valid JSON.");
    case "charset.unsupported":
    case "encoding.unsupported":
      return new AppError("unsupported_media_type", "The body's charset or content encoding is not supported; send UTF-8 JSON.");
    case "request.aborted":
    case "request.size.invalid":
    case "stream.encoding.set":
      return new AppError("invalid_json", "The request body could not be read.");
    default:
      return null;
  }
}

/** A path segment Express could not percent-decode (e.g. `%E0%A4%A`). */
function fromRouter(error: unknown): AppError | null {
  if (!(error instanceof URIError)) return null;
  return new AppError("validation_failed", "The request URL is not valid: a path segment has a malformed percent-encoding.", [
    { path: "url", message: "has a malformed percent-encoding" },
  ]);
}

export const unknownRoute: RequestHandler = (req, _res, next) => next(notFound(`Route ${req.method} ${req.path}`));

export const errorHandler: ErrorRequestHandler = (error: unknown, req, res, _next) => {
  let appError: AppError;
  if (error instanceof AppError) appError = error;
  else if (fromBodyParser(error)) appError = fromBodyParser(error)!;
  else if (fromRouter(error)) appError = fromRouter(error)!;
  else if (isDatabaseUnavailable(error)) {
    appError = new AppError("unavailable", "The service is temporarily unavailable. Try again shortly.", undefined, { "Retry-After": "5" });
    req.log.error("database unavailable", { error });
  } else {
    appError = new AppError("internal_error", "Something went wrong on our side. Quote the X-Request-Id if you contact support.");
    // With its stack, which the logger's redaction drops from an Error it is handed whole.
    const details = error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : error;
    req.log.error("unhandled error", { error: details });
  }

  const status = httpStatus(appError);
  if (status < 500) req.log.log(status === 401 || status === 404 ? "info" : "warn", `refused: ${appError.code}`, { status });
  if (res.headersSent) return res.destroy();
  // For the metrics (refusals by reason), which see only the response.
  res.locals.errorCode = appError.code;
  if ("reason" in appError) res.locals.refusalReason = appError.reason;
  for (const [name, value] of Object.entries(appError.headers ?? {})) res.setHeader(name, value);
  if (status === 401) res.setHeader("WWW-Authenticate", 'Bearer realm="conveyor"');
  res.status(status).json({
    error: { code: appError.code, message: appError.message, ...(appError.details ? { details: appError.details } : {}) },
  });
};
