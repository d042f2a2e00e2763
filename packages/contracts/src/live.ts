// Progress and output of a running job (docs/reference/events.md#progress-and-live-results): the bounds the worker, the API and the client agree on.

/** A job's progress as it carries it: the fraction done (0–1), what is happening, and when it was reported. */
export type JobProgress = { fraction: number; message: string | null; at: string };

/** Progress events per second per job at most: the worker keeps the latest report and writes it this often. */
export const PROGRESS_EVENTS_PER_SECOND = 4;
/** Output appends per second per job at most: the worker joins the chunks reported in between. */
export const OUTPUT_WRITES_PER_SECOND = 4;
/** A job's output is kept up to this many bytes (UTF-8); past it, it ends with OUTPUT_TRUNCATED_MARKER. */
export const OUTPUT_MAX_BYTES = 1024 * 1024;
/** Appended once to an output cut at OUTPUT_MAX_BYTES. */
export const OUTPUT_TRUNCATED_MARKER = "\n[output truncated at 1 MiB]\n";
/** Longest progress message kept (characters); a longer one is cut. */
export const PROGRESS_MESSAGE_MAX_LENGTH = 500;

/** Longest a public token lives (POST /jobs/{id}/public-token's ttl_seconds). */
export const PUBLIC_TOKEN_TTL_MAX_SECONDS = 24 * 60 * 60;
/** What a job's public token looks like: `cvpt_` and 43 base64url characters (32 random bytes). */
export const PUBLIC_TOKEN_PATTERN = /^cvpt_[A-Za-z0-9_-]{43}$/;
