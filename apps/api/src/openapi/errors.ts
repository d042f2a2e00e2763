// One shared response per refusal status, each with docs/reference/http.md#errors's error body, the codes that status carries (from
// the same table the error middleware uses) and an example.
import { ERROR_STATUS } from "../http/errors";
import type { ErrorCode } from "../services/infrastructure/errors";
import type { JsonSchema } from "../declarations/json-schema";
import { ref } from "../declarations/json-schema";
import type { ErrorStatus } from "../declarations/endpoint";

const NAMES: Record<ErrorStatus, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  409: "Conflict",
  410: "Gone",
  413: "PayloadTooLarge",
  415: "UnsupportedMediaType",
  431: "HeadersTooLarge",
  429: "RateLimited",
  500: "InternalError",
  503: "Unavailable",
};

const EXAMPLES: Partial<Record<ErrorCode, { message: string; details?: { path: string; message: string }[] }>> = {
  validation_failed: { message: "Invalid request: payload.to is required.", details: [{ path: "payload.to", message: "is required" }] },
  unauthorized: { message: "A valid credential is required." },
  forbidden: { message: "Your role does not allow this." },
  csrf_failed: { message: "A request made with the console's session cookie must send the session's CSRF token in X-CSRF-Token (from GET /auth/session)." },
  not_found: { message: "Job not found." },
  cannot_remove_self: { message: "An owner cannot remove themselves." },
  cannot_change_own_role: { message: "You cannot change your own role in the organization you own." },
  invite_expired: { message: "This invite has expired (invites are valid for 72 hours). Ask for a new invite." },
  payload_too_large: { message: "The request body is larger than 1 MiB." },
  unsupported_media_type: { message: "Request bodies must be JSON (Content-Type: application/json), not text/plain." },
  rate_limited: { message: "Too many requests from your address. Try again after the Retry-After delay." },
  too_many_streams: {
    message:
      "Your organization has 100 event streams open on this server, the most it may (EVENT_STREAMS_PER_ORG). Close one, or share one stream of GET /events between your consumers.",
  },
  webhook_endpoint_limit: {
    message:
      "Your organization has 25 webhook endpoints, the most it may (WEBHOOK_ENDPOINTS_PER_ORG). Delete one first, or send several event types to one endpoint.",
  },
  internal_error: { message: "Something went wrong on our side. Quote the X-Request-Id if you contact support." },
  unavailable: { message: "The service is temporarily unavailable. Try again shortly." },
};

const integer: JsonSchema = { type: "integer", minimum: 0 };
const HEADERS: Partial<Record<ErrorStatus, Record<string, { description: string; schema: JsonSchema }>>> = {
  401: { "WWW-Authenticate": { description: 'Always `Bearer realm="conveyor"`.', schema: { type: "string" } } },
  429: {
    "Retry-After": { description: "Seconds to wait before trying again.", schema: integer },
    "RateLimit-Limit": { description: "Requests allowed per window.", schema: integer },
    "RateLimit-Remaining": { description: "Requests left in this window (0).", schema: integer },
    "RateLimit-Reset": { description: "Seconds until the window resets.", schema: integer },
    "RateLimit-Policy": { description: "The limit and its window, e.g. `20;w=60`.", schema: { type: "string" } },
  },
  503: { "Retry-After": { description: "Seconds to wait; set when Postgres is unreachable.", schema: integer } },
};

export const codesOf = (status: ErrorStatus) => (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => ERROR_STATUS[code] === status);

/** `#/components/responses/…` of a status. */
export const errorResponseRef = (status: ErrorStatus) => ({ $ref: `#/components/responses/${NAMES[status]}` });

/** components.responses: one per status. */
export function errorResponses(): Record<string, JsonSchema> {
  return Object.fromEntries(
    (Object.keys(NAMES).map(Number) as ErrorStatus[]).map((status) => {
      const codes = codesOf(status);
      const examples = Object.fromEntries(
        codes.map((code) => [code, { summary: code, value: { error: { code, ...(EXAMPLES[code] ?? { message: `Refused: ${code.replace(/_/g, " ")}.` }) } } }]),
      );
      return [
        NAMES[status],
        {
          description: `Refused with \`error.code\` ${codes.map((c) => `\`${c}\``).join(" or ")}.`,
          headers: { "X-Request-Id": { $ref: "#/components/headers/XRequestId" }, ...HEADERS[status] },
          content: { "application/json": { schema: ref("Error"), examples } },
        },
      ];
    }),
  );
}
