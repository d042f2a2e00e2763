import { maskUrl } from "@conveyor/config";

// Tells "Postgres is not there" apart from every other database error, so the API can answer 503
// `unavailable` (and the worker can retry its write) instead of treating it as a bug.

const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EHOSTUNREACH", "EAI_AGAIN"]);
// 08xxx connection exceptions, 57P01-57P03 admin shutdown / crash shutdown / cannot connect now, 53300 too many
// connections, 25006 a write reaching a server that became read-only (a standby, mid-failover).
const SQLSTATE = /^(08|57P0[123]|53300|25006)/;
const MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down)|Can't reach database server|DatabaseNotReachable/i;

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 6; depth++) {
    const candidate = e as { code?: unknown; message?: unknown; cause?: unknown; kind?: unknown; originalCode?: unknown };
    if (typeof candidate.code === "string" && (NETWORK_CODES.has(candidate.code) || SQLSTATE.test(candidate.code))) return true;
    if (typeof candidate.originalCode === "string" && SQLSTATE.test(candidate.originalCode)) return true;
    if (candidate.kind === "DatabaseNotReachable" || candidate.kind === "ConnectionClosed" || candidate.kind === "SocketTimeout") return true;
    if (typeof candidate.message === "string" && MESSAGES.test(candidate.message)) return true;
    e = candidate.cause;
  }
  return false;
}

/** Whether `error` is a unique-constraint violation (SQLSTATE 23505, or Prisma's P2002). */
export function isUniqueViolation(error: unknown): boolean {
  const candidate = error as { code?: unknown; cause?: { code?: unknown; originalCode?: unknown } };
  return candidate?.code === "23505" || candidate?.code === "P2002" || candidate?.cause?.originalCode === "23505";
}

/**
 * One line for a process that cannot reach Postgres at start-up: which URL it tried and how to fix it.
 * Null when `error` is something else.
 */
export function databaseUnreachableMessage(error: unknown, url: string): string | null {
  if (!isDatabaseUnavailable(error)) return null;
  const code = (error as { code?: string }).code;
  return (
    `Cannot reach Postgres at ${maskUrl(url)}${code ? ` (${code})` : ""}. ` +
    "Start it (`pg_ctlcluster 15 main start`, or `docker compose up -d postgres`) or point DATABASE_URL at a running server."
  );
}
