// Flow control (docs/reference/flow-control.md#flow-control): the bounds of concurrency keys, rate limits, queue settings, dedupe, debounce and
// timeouts, the reasons a pending job gives for waiting, and the parsers of the operator's per-type settings.
// Pure values and functions: the API validates with them, the worker and the dispatcher apply them.

/** Longest concurrency, dedupe and debounce key. */
export const FLOW_KEY_MAX_LENGTH = 200;
/** `concurrency_limit`: how many jobs with one key may run at once. */
export const CONCURRENCY_LIMIT_MIN = 1;
export const CONCURRENCY_LIMIT_MAX = 1000;
export const CONCURRENCY_LIMIT_DEFAULT = 1;

/** A rate limit's name: what `rate_limit` on a job and `PUT /rate-limits/{name}` take. */
export const RATE_LIMIT_NAME_PATTERN = /^[a-z0-9_.:-]{1,100}$/;
/** Most starts a rate limit may allow per period. */
export const RATE_LIMIT_MAX = 100_000;
export const RATE_LIMIT_PERIODS = { second: 1_000, minute: 60_000, hour: 3_600_000 } as const;
export type RateLimitPeriod = keyof typeof RATE_LIMIT_PERIODS;
/** Named rate limits one organization may define. */
export const RATE_LIMITS_PER_ORG = 100;

/** `dedupe_seconds`. */
export const DEDUPE_SECONDS_MIN = 1;
export const DEDUPE_SECONDS_MAX = 604_800;
export const DEDUPE_SECONDS_DEFAULT = 3_600;
/** `debounce_ms`. */
export const DEBOUNCE_MS_MIN = 100;
export const DEBOUNCE_MS_MAX = 86_400_000;
/** `timeout_ms` of one attempt. */
export const TIMEOUT_MS_MIN = 1_000;
export const TIMEOUT_MS_MAX = 86_400_000;
/** An attempt's timeout when neither the job nor TYPE_TIMEOUTS names one. */
export const TIMEOUT_MS_DEFAULT = 15 * 60 * 1000;
/** The error code of an attempt stopped by its timeout. */
export const ATTEMPT_TIMEOUT_CODE = "attempt_timeout";
/** The error code of a job cancelled because a job it depends on failed or was cancelled. */
export const DEPENDENCY_FAILED_CODE = "dependency_failed";

/**
 * Why a pending job has not started (docs/reference/flow-control.md#flow-control), in the order they are checked: the first that applies is given.
 * Null for any job that is not pending.
 */
export const WAITING_REASONS = [
  "dependencies",
  "waitpoint",
  "run_at",
  "retry",
  "queue_paused",
  "rate_limit",
  "concurrency_key",
  "org_concurrency",
  "no_worker",
  "capacity",
] as const;
export type WaitingReason = (typeof WAITING_REASONS)[number];

export type TypeRateLimit = { limit: number; periodMs: number };

const DURATION = /^(\d+)(ms|s|m|h)$/;
const DURATION_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
const PERIOD = { s: 1_000, m: 60_000, h: 3_600_000 } as const;

/** `a=1,b=2` into pairs, each checked by `value`; throws a message naming the bad entry. */
function parsePairs<T>(text: string, what: string, value: (raw: string) => T | string): Map<string, T> {
  const pairs = new Map<string, T>();
  for (const entry of text
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [type, raw, ...rest] = entry.split("=").map((p) => p.trim());
    if (!type || raw === undefined || rest.length) throw new Error(`"${entry}" is not type=${what}`);
    const parsed = value(raw);
    if (typeof parsed === "string") throw new Error(`"${entry}": ${parsed}`);
    if (pairs.has(type)) throw new Error(`${type} is named twice`);
    pairs.set(type, parsed);
  }
  return pairs;
}

/** TYPE_RATE_LIMITS, e.g. `send_email=10/s,send_sms=50/s,ai_summarize=500/m`. */
export function parseTypeRateLimits(text: string): Map<string, TypeRateLimit> {
  return parsePairs(text, "N/s|N/m|N/h", (raw) => {
    const match = /^(\d+)\/(s|m|h)$/.exec(raw);
    if (!match) return "write the limit as N/s, N/m or N/h";
    const limit = Number(match[1]);
    if (limit < 1 || limit > RATE_LIMIT_MAX) return `the limit must be 1 to ${RATE_LIMIT_MAX}`;
    return { limit, periodMs: PERIOD[match[2] as keyof typeof PERIOD] };
  });
}

/** TYPE_TIMEOUTS, e.g. `generate_pdf=2m,webhook=30s`: each attempt's timeout per type, in milliseconds. */
export function parseTypeTimeouts(text: string): Map<string, number> {
  return parsePairs(text, "duration (500ms, 30s, 2m, 1h)", (raw) => {
    const match = DURATION.exec(raw);
    if (!match) return "write the duration as 500ms, 30s, 2m or 1h";
    const ms = Number(match[1]) * DURATION_MS[match[2] as keyof typeof DURATION_MS];
    if (ms < TIMEOUT_MS_MIN || ms > TIMEOUT_MS_MAX) return `the timeout must be 1s to 24h`;
    return ms;
  });
}

/** Dependencies (docs/reference/lifecycle.md#dependencies): most jobs one job may depend on. */
export const DEPENDS_ON_LIMIT = 100;
/** Most jobs GET /jobs/{id}/graph returns. */
export const GRAPH_NODES_LIMIT = 1000;
/** A batch item's `ref`: its name within the batch, which other items' `depends_on` may use. */
export const JOB_REF_PATTERN = /^[A-Za-z0-9_.:-]{1,100}$/;
/** What a job does when a dependency failed or was cancelled: ends cancelled (dependency_failed), or runs anyway. */
export const ON_DEPENDENCY_FAILURE = ["cancel", "run"] as const;
export type OnDependencyFailure = (typeof ON_DEPENDENCY_FAILURE)[number];
/** send_email `attachments`: how many files, and their bytes in all. */
export const EMAIL_ATTACHMENTS_MAX = 10;
export const EMAIL_ATTACHMENTS_MAX_BYTES = 10 * 1024 * 1024;
