// The HTTP status of every error code services raise (docs/reference/http.md#errors): the one place where a service's
// refusal becomes HTTP. A new code in services/infrastructure/errors.ts does not compile until it has its status here.
import type { AppError, ErrorCode } from "../services/infrastructure/errors";

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
} as const satisfies Record<ErrorCode, number>;

/** The status a refusal is answered with. */
export const httpStatus = (error: AppError): number => ERROR_STATUS[error.code];
