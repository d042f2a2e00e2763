// One error type for every refusal, and one table from its code to the HTTP status (docs/reference/http.md#errors).

export const ERROR_STATUS = {
  bad_request: 400,
  invalid_json: 400,
  validation_failed: 400,
  unknown_job_type: 400,
  unauthorized: 401,
  forbidden: 403,
  csrf_failed: 403,
  sso_required: 403,
  sso_failed: 401,
  sso_not_configured: 404,
  sso_domain_taken: 409,
  not_found: 404,
  method_not_allowed: 405,
  invite_not_found: 404,
  cannot_remove_self: 409,
  cannot_change_own_role: 409,
  already_member: 409,
  conflict: 409,
  job_finished: 409,
  job_not_finished: 409,
  job_not_delayed: 409,
  email_taken: 409,
  idempotency_conflict: 409,
  webhook_endpoint_limit: 409,
  webhook_url_taken: 409,
  webhook_endpoint_disabled: 409,
  saved_view_limit: 409,
  saved_view_name_taken: 409,
  invite_expired: 410,
  invite_used: 410,
  event_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  rate_limited: 429,
  too_many_streams: 429,
  quota_exceeded: 429,
  overloaded: 429,
  internal_error: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorDetail = { path: string; message: string };

export class AppError extends Error {
  override name = "AppError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** Extra response headers, e.g. Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export const notFound = (what = "Resource") => new AppError("not_found", `${what} not found.`);
export const unauthorized = (message = "A valid credential is required.") => new AppError("unauthorized", message);
export const forbidden = (message = "Your role does not allow this.") => new AppError("forbidden", message);

/** Password credentials of a non-owner in an organization that requires single sign-on (docs/reference/tenants.md#audit-log). */
export const ssoRequired = () =>
  new AppError("sso_required", "This organization requires single sign-on: sign in through its identity provider (GET /auth/sso/start).");

export function validationFailed(details: ErrorDetail[], message?: string): AppError {
  const summary = details
    .slice(0, 3)
    .map((d) => `${d.path} ${d.message}`)
    .join("; ");
  return new AppError("validation_failed", message ?? `Invalid request: ${summary}${details.length > 3 ? "; …" : ""}.`, details);
}
