// Names and bounds that the API, the worker and the documentation must agree on.

export const JOB_STATUSES = ["pending", "processing", "done", "failed"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const LOG_LEVELS = ["info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const ROLES = ["owner", "admin", "member"] as const;
export type Role = (typeof ROLES)[number];

/** Upper bound of a job's `max_retries` (SPEC §5). */
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
