// OpenAI SDK errors → job errors (docs/reference/providers.md#openai, docs/reference/providers.md#retry-matrix). The SDK's own retries are off (maxRetries 0) so the job
// runtime's backoff is the only retry layer; its statuses and error codes decide retry or give up here.
import { PermanentJobError, RetryableJobError } from "@conveyor/contracts";
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError, AuthenticationError, RateLimitError } from "openai";
import { bodyExcerpt, rateLimited, retryAfterMs } from "../http";

const PROVIDER = "OpenAI";

export type CallContext = {
  timeoutMs: number;
  apiKey: string;
  /** The handler's deadline fired (and the job's own signal did not). */
  timedOut: boolean;
};

export function classifyOpenAIError(error: unknown, context: CallContext): unknown {
  if (context.timedOut || error instanceof APIConnectionTimeoutError) return new RetryableJobError(`${PROVIDER} did not answer within ${context.timeoutMs} ms`);
  // Any other abort is the runtime's own doing (shutdown): hand it back untouched.
  if (error instanceof APIUserAbortError) return error;
  if (error instanceof APIConnectionError) return new RetryableJobError(`${PROVIDER} could not be reached (${connectionCause(error)})`);
  if (!isApiError(error) || error.status === undefined) return error;

  const status = error.status;
  const code = error.code ?? error.type ?? undefined;
  if (error instanceof AuthenticationError) {
    // OpenAI's message quotes part of the refused key; say what to fix instead of repeating it.
    return new PermanentJobError(`${PROVIDER} answered 401${code ? ` ${code}` : ""}: the API key was refused (check OPENAI_API_KEY)`);
  }
  const message = `${PROVIDER} answered ${status}${code ? ` ${code}` : ""}: ${bodyExcerpt(scrub(providerMessage(error), context.apiKey), 300)}`;
  if (error instanceof RateLimitError && error.code === "insufficient_quota") {
    return new PermanentJobError(`${message} (billing quota exhausted)`);
  }
  if (status === 429) return rateLimited(message, retryAfterMs(headerRecord(error.headers)));
  if (status === 408 || status === 409 || status >= 500) {
    return new RetryableJobError(message, retryAfterMs(headerRecord(error.headers)));
  }
  return new PermanentJobError(message);
}

/** `instanceof APIError` alone narrows to APIError<any, any, any>; this keeps the class's declared defaults. */
function isApiError(error: unknown): error is APIError {
  return error instanceof APIError;
}

/** The error body's message, without the SDK's "429 " prefix. */
function providerMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  return typeof body?.message === "string" ? body.message : error.message.replace(/^\d{3}\s+/, "");
}

function connectionCause(error: APIConnectionError): string {
  const cause = (error as { cause?: { code?: string; cause?: { code?: string }; message?: string } }).cause;
  return cause?.code ?? cause?.cause?.code ?? cause?.message ?? error.message;
}

function headerRecord(headers: Headers | undefined): Record<string, unknown> {
  return headers ? Object.fromEntries(headers.entries()) : {};
}

/** A provider echoing the key back must not put it in the job's error. */
function scrub(text: string, secret: string): string {
  return secret ? text.split(secret).join("[redacted]") : text;
}
