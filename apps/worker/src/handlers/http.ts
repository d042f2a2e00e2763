// Calls to provider APIs: bounded time, no redirects, every status returned to the caller (never thrown by
// axios), and one place that turns "no answer" and HTTP statuses into retry-or-give-up (docs/reference/providers.md#retry-matrix).
import axios, { type AxiosRequestConfig, type AxiosResponse } from "axios";
import { PermanentJobError, ProviderRateLimitedError, RetryableJobError } from "@conveyor/contracts";

export type ProviderRequest = AxiosRequestConfig & {
  /** Name used in error messages, e.g. "SendGrid". */
  provider: string;
  timeoutMs: number;
  signal?: AbortSignal;
};

/**
 * Sends one request. Resolves with the response whatever its status; rejects with RetryableJobError when no
 * response arrived (connection refused, reset, timeout), or rethrows an abort.
 */
export async function providerRequest<T = unknown>(request: ProviderRequest): Promise<AxiosResponse<T>> {
  const { provider, timeoutMs, signal, ...config } = request;
  try {
    return await axios.request<T>({
      ...config,
      timeout: timeoutMs,
      signal,
      maxRedirects: 0,
      validateStatus: () => true,
      // Providers answer small bodies; never buffer an unbounded one.
      maxContentLength: 10 * 1024 * 1024,
      maxBodyLength: 20 * 1024 * 1024,
      proxy: false,
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    const code = (error as { code?: string }).code;
    const what =
      code === "ECONNABORTED" || code === "ETIMEDOUT" ? `did not answer within ${timeoutMs} ms` : `could not be reached (${code ?? (error as Error).message})`;
    throw new ProviderUnreachableError(`${provider} ${what}`, code);
  }
}

// Failures that happen before a single byte of the request can have left this machine.
const NOT_SENT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "ERR_INVALID_URL"]);

/** No response arrived. For a call that is not idempotent, `mayHaveBeenProcessed` says whether retrying is safe. */
export class ProviderUnreachableError extends RetryableJobError {
  override name = "ProviderUnreachableError";
  /** False only when the request certainly never reached the provider (refused connection, unknown host). */
  readonly mayHaveBeenProcessed: boolean;
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.mayHaveBeenProcessed = !(code && NOT_SENT_CODES.has(code));
  }
}

/** Milliseconds asked for by Retry-After (seconds or an HTTP date) or retry-after-ms, if any. */
export function retryAfterMs(headers: Record<string, unknown>, now = Date.now()): number | undefined {
  const ms = Number(headers["retry-after-ms"]);
  if (Number.isFinite(ms) && ms > 0) return ms;
  const value = headers["retry-after"];
  if (typeof value !== "string" || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * A provider's 429: with a wait it asked for, the deployment's key is rate limited (the type pauses, the job waits
 * without spending a retry); without one, an ordinary retry.
 */
export function rateLimited(message: string, waitMs: number | undefined): RetryableJobError {
  return waitMs !== undefined && waitMs > 0 ? new ProviderRateLimitedError(message, waitMs) : new RetryableJobError(message);
}

/**
 * The usual reading of a failed status: 429 and 5xx are worth retrying (after Retry-After if given), other
 * statuses are permanent. `detail` is a short description of the provider's error body (never secrets).
 */
export function statusFailure(provider: string, response: AxiosResponse, detail: string): Error {
  const message = `${provider} answered ${response.status}${detail ? `: ${detail}` : ""}`;
  const wait = retryAfterMs(response.headers as Record<string, unknown>);
  if (response.status === 429) return rateLimited(message, wait);
  if (response.status >= 500) return new RetryableJobError(message, wait);
  return new PermanentJobError(message);
}

/** A short, single-line excerpt of a response body for error messages and logs. */
export function bodyExcerpt(data: unknown, max = 300): string {
  const text = typeof data === "string" ? data : Buffer.isBuffer(data) ? data.toString("utf8") : JSON.stringify(data ?? "");
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}
