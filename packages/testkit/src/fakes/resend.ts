// Resend (docs/reference/providers.md#e-mail): POST /emails with a Bearer key and a JSON body; 200 `{"id"}`. Errors are
// `{"statusCode","name","message"}`. Idempotency-Key is honoured like Resend does: the same key with the same
// body returns the first answer without sending again; the same key with another body is a 409.
import { randomUUID } from "node:crypto";
import { headerValue, mediaType, parseJson, startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from "./fake-server";

export const RESEND_TEST_KEY = "re_fakeResendKey_conveyorTests_0123456789";

export type SentResendMail = { id: string; body: any; idempotencyKey?: string };
export type ResendFake = FakeServer & { apiKey: string; sent: SentResendMail[] };

export const resendError = (status: number, name: string, message: string): FakeReply => ({
  status,
  body: { statusCode: status, name, message },
  headers: rateHeaders(),
});

/** Resend sends its rate-limit state on every answer. */
function rateHeaders(): Record<string, string> {
  return { "ratelimit-limit": "2", "ratelimit-remaining": "1", "ratelimit-reset": "1" };
}

export async function startResendFake(options: { apiKey?: string } = {}): Promise<ResendFake> {
  const apiKey = options.apiKey ?? RESEND_TEST_KEY;
  const sent: SentResendMail[] = [];
  const byKey = new Map<string, { body: string; id: string }>();
  const server = await startFakeServer({
    refuse: (request) => {
      const refused = refusal(request, apiKey);
      if (refused) return refused;
      const key = headerValue(request, "idempotency-key");
      const earlier = key === undefined ? undefined : byKey.get(key);
      if (earlier && earlier.body !== request.body) {
        return resendError(
          409,
          "invalid_idempotent_request",
          "Same idempotency key used with a different request payload. Change your idempotency key or payload.",
        );
      }
      return undefined;
    },
    reset: () => {
      sent.length = 0;
      byKey.clear();
    },
    answer: (request) => {
      const key = headerValue(request, "idempotency-key");
      const earlier = key === undefined ? undefined : byKey.get(key);
      if (earlier) return { status: 200, body: { id: earlier.id }, headers: rateHeaders() };
      const id = randomUUID();
      if (key !== undefined) byKey.set(key, { body: request.body, id });
      sent.push({ id, body: JSON.parse(request.body), idempotencyKey: key });
      return { status: 200, body: { id }, headers: rateHeaders() };
    },
  });
  return Object.assign(server, { apiKey, sent });
}

const addressPattern = /^(?:[^<>]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/;

function refusal(request: RecordedRequest, apiKey: string): FakeReply | undefined {
  if (request.path !== "/emails") return resendError(404, "not_found", "The requested endpoint does not exist.");
  if (request.method !== "POST") return resendError(405, "method_not_allowed", "Method is not allowed for the requested path.");
  const auth = headerValue(request, "authorization");
  if (!auth?.startsWith("Bearer ")) {
    return resendError(
      401,
      "missing_api_key",
      "Missing API key in the authorization header. Include the following header Authorization: Bearer YOUR_API_KEY in the request.",
    );
  }
  if (auth !== `Bearer ${apiKey}`) return resendError(403, "invalid_api_key", "API key is invalid");
  // Reported by client authors (docs/reference/providers.md#e-mail, unconfirmed): Resend refuses requests without a User-Agent.
  if (!headerValue(request, "user-agent")) return resendError(403, "validation_error", "A User-Agent header is required.");
  const key = headerValue(request, "idempotency-key");
  if (key !== undefined && (key.length < 1 || key.length > 256)) {
    return resendError(400, "invalid_idempotency_key", "The key must be between 1-256 chars.");
  }
  if (mediaType(request) !== "application/json") return resendError(400, "validation_error", "Invalid `Content-Type` header. Expected `application/json`.");
  const parsed = parseJson(request.body);
  if (!parsed.ok || typeof parsed.value !== "object" || parsed.value === null) return resendError(400, "validation_error", "Invalid JSON body.");
  const mail = parsed.value as any;
  for (const field of ["from", "to", "subject"]) {
    if (mail[field] === undefined || mail[field] === "" || (Array.isArray(mail[field]) && mail[field].length === 0)) {
      return resendError(422, "missing_required_field", `Missing \`${field}\` field.`);
    }
  }
  if (typeof mail.from !== "string" || !addressPattern.test(mail.from)) {
    return resendError(
      422,
      "validation_error",
      "Invalid `from` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.",
    );
  }
  const to: unknown[] = Array.isArray(mail.to) ? mail.to : [mail.to];
  if (to.length > 50) return resendError(422, "validation_error", "Too many recipients in the `to` field (max 50).");
  if (to.some((address) => typeof address !== "string" || !addressPattern.test(address))) {
    return resendError(
      422,
      "validation_error",
      "Invalid `to` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.",
    );
  }
  if (mail.html === undefined && mail.text === undefined && mail.template === undefined) {
    return resendError(422, "validation_error", "Missing `html` or `text` field.");
  }
  if (mail.attachments !== undefined) {
    const list = mail.attachments;
    const bad =
      !Array.isArray(list) ||
      list.some(
        (a: any) =>
          typeof a?.filename !== "string" ||
          !a.filename ||
          (typeof a.content !== "string" && typeof a.path !== "string") ||
          (typeof a.content === "string" && !/^[A-Za-z0-9+/]*={0,2}$/.test(a.content)),
      );
    if (bad) return resendError(422, "invalid_attachment", "Attachment must have a `filename` and either `content` (base64) or `path`.");
    const bytes = list.reduce((n: number, a: any) => n + (typeof a.content === "string" ? a.content.length : 0), 0);
    if (bytes > 40 * 1024 * 1024) return resendError(422, "invalid_attachment", "Attachments exceed 40MB.");
  }
  return undefined;
}
