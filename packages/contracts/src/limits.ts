// Names and bounds that the API, the worker and the documentation must agree on.

/** Priorities (docs/reference/time.md#time-priority-and-fairness): higher runs first among due jobs of one type. */
export const PRIORITY_MIN = 1;
export const PRIORITY_MAX = 10;
export const PRIORITY_DEFAULT = 5;
/** How far ahead `run_at` may be. */
export const RUN_AT_MAX_AHEAD_MS = 365 * 24 * 60 * 60 * 1000;

export const LOG_LEVELS = ["info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const ROLES = ["owner", "admin", "member"] as const;
export type Role = (typeof ROLES)[number];

/** Upper bound of a job's `max_retries` (docs/reference/lifecycle.md#lifecycle). */
export const MAX_RETRIES_LIMIT = 25;
/** Jobs accepted by one `POST /jobs/batch`. */
export const BATCH_LIMIT = 1000;
/** Longest accepted `Idempotency-Key` header. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** How long an `Idempotency-Key` is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * Deepest nesting of a JSON request body (objects and arrays, the body itself included). Deeper values are
 * refused with 400: they overflow JSON.stringify and Postgres' jsonb parser long before they mean anything.
 */
export const MAX_JSON_DEPTH = 64;
/** Longest `q` of GET /jobs, and the longest payload value it can find. */
export const SEARCH_VALUE_MAX_LENGTH = 256;
/** Payload values kept for search per job (the first ones found, depth first). */
export const SEARCH_VALUES_PER_JOB = 64;

/**
 * The payload's string and number values as `q` of GET /jobs matches them (exactly, numbers as JSON writes
 * them): each at most SEARCH_VALUE_MAX_LENGTH characters, distinct, at most SEARCH_VALUES_PER_JOB per job.
 */
export function searchValues(payload: unknown): string[] {
  const found = new Set<string>();
  const stack: unknown[] = [payload];
  while (stack.length && found.size < SEARCH_VALUES_PER_JOB) {
    const value = stack.pop();
    if (typeof value === "string") {
      if (value.length <= SEARCH_VALUE_MAX_LENGTH) found.add(value);
    } else if (typeof value === "number") {
      if (Number.isFinite(value)) found.add(JSON.stringify(value));
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
    } else if (value !== null && typeof value === "object") {
      const values = Object.values(value);
      for (let i = values.length - 1; i >= 0; i--) stack.push(values[i]);
    }
  }
  return [...found];
}

/** Longest retry delay. */
export const RETRY_DELAY_CAP_MS = 60 * 60 * 1000;
/** What a job type name may look like (built-in or plugin); it is also the BullMQ queue name. */
export const TYPE_NAME_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;

/**
 * Delay before the retry that follows failed attempt `attempt` (1-based): RETRY_BASE_MS × 2^(attempt−1),
 * with ±20 % jitter so jobs that failed together do not retry together, capped at one hour.
 */
export function retryDelayMs(attempt: number, baseMs: number, random: () => number = Math.random): number {
  const exponential = baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 40);
  const jittered = exponential * (0.8 + 0.4 * random());
  return Math.round(Math.min(RETRY_DELAY_CAP_MS, jittered));
}

/** The BullMQ queue that carries jobs of `type`. One queue per type, so workers scale per type. */
export function queueName(type: string): string {
  return type;
}
