// One winston setup for every process: JSON lines in production, readable lines in development, and a
// redaction pass so credentials and payload bodies never reach the output whatever a caller passes in.
import { EOL } from "node:os";
import winston from "winston";

export type Logger = winston.Logger;

export type LoggerOptions = {
  /** Minimum level written. Default "info". */
  level?: string;
  /** JSON lines (production) instead of readable text. Default false. */
  json?: boolean;
  /** Name of the process, e.g. "api" or "worker". */
  service: string;
  /** Where lines go; default stdout. Tests pass a stream to inspect the output. */
  stream?: NodeJS.WritableStream;
};

const SECRET_KEY = /^(authorization|cookie|set-cookie|x-api-key|api_?key|key|password.*|.*secret.*|.*token.*|.*_hash|.*Hash|payload|body)$/i;
const SECRET_TEXT: [RegExp, string][] = [
  [/\bcvk_[A-Za-z0-9]+/g, "cvk_[redacted]"],
  [/\beyJ[\w-]+\.[\w-]+\.[\w-]*/g, "[redacted-jwt]"],
  [/\b(Bearer|Basic)\s+[\w\-.~+/=]+/gi, "$1 [redacted]"],
  [/\bwhsec_[A-Za-z0-9+/=]+/g, "whsec_[redacted]"],
  [/\bcvpt_[\w-]+/g, "cvpt_[redacted]"],
  [/([?&]token=)[^&\s"']+/gi, "$1[redacted]"],
];

/** Replaces credentials that look like ours (API keys, JWTs, bearer headers, invite tokens in URLs). */
export function redactText(text: string): string {
  return SECRET_TEXT.reduce((out, [pattern, replacement]) => out.replace(pattern, replacement), text);
}

function redactValue(value: unknown, depth: number): unknown {
  if (typeof value === "string") return redactText(value);
  if (value instanceof Error) return { name: value.name, message: redactText(value.message) };
  if (value === null || typeof value !== "object" || depth > 6) return value;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY.test(k) ? "[redacted]" : redactValue(v, depth + 1);
  return out;
}

const INTERNAL = new Set(["level", "message", "timestamp", "service"]);

const redact = winston.format((info) => {
  info.message = typeof info.message === "string" ? redactText(info.message) : redactValue(info.message, 0);
  for (const key of Object.keys(info)) {
    if (INTERNAL.has(key)) continue;
    info[key] = SECRET_KEY.test(key) ? "[redacted]" : redactValue(info[key], 0);
  }
  return info;
});

/** Escapes control characters so one log call is always one output line (CR/LF injection). */
function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => JSON.stringify(c).slice(1, -1));
}

const readable = winston.format.printf((info) => {
  const { level, message, timestamp, service, ...meta } = info as Record<string, unknown>;
  const rest = Object.keys(meta).length ? ` ${JSON.stringify(meta)}` : "";
  return `${timestamp} ${level} [${service}] ${oneLine(String(message))}${rest}`;
});

export function createLogger(options: LoggerOptions): Logger {
  const colors = !options.stream && process.stdout.isTTY ? [winston.format.colorize()] : [];
  const format = options.json
    ? winston.format.combine(redact(), winston.format.timestamp(), winston.format.json())
    : winston.format.combine(redact(), winston.format.timestamp(), ...colors, readable);
  const transport = options.stream ? new winston.transports.Stream({ stream: options.stream }) : new winston.transports.Console();
  const logger = winston.createLogger({ level: options.level ?? "info", defaultMeta: { service: options.service }, format, transports: [transport] });
  if (options.json) fastLines.set(logger, jsonRequestLine(logger, transport, options.stream ?? process.stdout, options.service));
  return logger;
}

/** Writes what `logger.log(level, message, { requestId })` would, or answers false when it cannot be sure to. */
type FastLine = (level: "info" | "error", message: string, requestId: string) => boolean;

/** The loggers createLogger made in JSON, with the writer of their request lines. */
const fastLines = new WeakMap<Logger, FastLine>();

/** Text that JSON writes as is: printable ASCII without `"` or `\`. */
const JSON_AS_IS = /^[ !#-[\]-~]*$/;

/**
 * A request line written directly, without winston's format pipeline and streams (most of an access line's cost,
 * ≈ 9 µs): the same bytes the JSON format makes (its keys sorted, the message redacted, an ISO timestamp), to the
 * transport's destination. Only while the logger is as createLogger made it and the texts need no escaping.
 */
function jsonRequestLine(logger: Logger, transport: winston.transport, out: NodeJS.WritableStream, service: string): FastLine {
  return (level, message, requestId) => {
    if (logger.silent || transport.silent || transport.level !== undefined || logger.transports.length !== 1 || logger.transports[0] !== transport)
      return false;
    if (!logger.isLevelEnabled(level)) return true;
    const text = redactText(message);
    const id = redactText(requestId);
    if (!JSON_AS_IS.test(text) || !JSON_AS_IS.test(id) || !JSON_AS_IS.test(service)) return false;
    out.write(`{"level":"${level}","message":"${text}","requestId":"${id}","service":"${service}","timestamp":"${new Date().toISOString()}"}${EOL}`);
    return true;
  };
}

/**
 * A writer of request lines (the access log): `write(level, message, requestId)` logs as
 * `logger.log(level, message, { requestId })`, more cheaply for a JSON logger made by createLogger.
 */
export function requestLineWriter(logger: Logger): (level: "info" | "error", message: string, requestId: string) => void {
  const fast = fastLines.get(logger);
  return (level, message, requestId) => {
    if (!fast?.(level, message, requestId)) logger.log(level, message, { requestId });
  };
}
