// The errors services raise: one type for every refusal, named by a code from one list (docs/reference/http.md#errors).
// They know nothing of HTTP: http/errors.ts maps each code to its status, at the HTTP layer.

export const ERROR_CODES = [
  "bad_request",
  "invalid_json",
  "validation_failed",
  "unknown_job_type",
  "unauthorized",
  "forbidden",
  "csrf_failed",
  "sso_required",
  "sso_failed",
  "sso_not_configured",
  "sso_domain_taken",
  "not_found",
  "method_not_allowed",
  "invite_not_found",
  "cannot_remove_self",
  "cannot_change_own_role",
  "already_member",
  "conflict",
  "job_type_taken",
  "lease_lost",
  "job_finished",
  "job_not_finished",
  "job_not_delayed",
  "email_taken",
  "idempotency_conflict",
  "webhook_endpoint_limit",
  "webhook_url_taken",
  "webhook_endpoint_disabled",
  "saved_view_limit",
  "saved_view_name_taken",
  "invite_expired",
  "invite_used",
  "event_expired",
  "payload_too_large",
  "unsupported_media_type",
  "headers_too_large",
  "rate_limited",
  "too_many_streams",
  "quota_exceeded",
  "overloaded",
  "internal_error",
  "unavailable",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];
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
