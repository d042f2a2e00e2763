// Postmark (docs/reference/providers.md#e-mail): POST /email with X-Postmark-Server-Token, JSON in and out; 200 with MessageID and
// ErrorCode 0. Refusals carry `{"ErrorCode", "Message"}` (401 for the token, 422 for everything else).
import { randomUUID } from "node:crypto";
import { accepts, headerValue, mediaType, parseJson, startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from "./fake-server";

export const POSTMARK_TEST_TOKEN = "00000000-fake-4000-8000-postmarktoken";

export type SentPostmarkMail = { messageId: string; body: any };
export type PostmarkFake = FakeServer & { serverToken: string; sent: SentPostmarkMail[]; inactiveRecipients: Set<string> };

export const postmarkError = (status: number, code: number, message: string): FakeReply => ({ status, body: { ErrorCode: code, Message: message } });

export async function startPostmarkFake(options: { serverToken?: string; inactiveRecipients?: string[] } = {}): Promise<PostmarkFake> {
  const serverToken = options.serverToken ?? POSTMARK_TEST_TOKEN;
  const sent: SentPostmarkMail[] = [];
  const inactiveRecipients = new Set(options.inactiveRecipients ?? []);
  const server = await startFakeServer({
    refuse: (request) => refusal(request, serverToken, inactiveRecipients),
    reset: () => {
      sent.length = 0;
    },
    answer: (request) => {
      const body = JSON.parse(request.body);
      const messageId = randomUUID();
      sent.push({ messageId, body });
      return { status: 200, body: { To: body.To, SubmittedAt: new Date().toISOString(), MessageID: messageId, ErrorCode: 0, Message: "OK" } };
    },
  });
  return Object.assign(server, { serverToken, sent, inactiveRecipients });
}

const addressOf = (value: string) => (value.match(/<([^<>]+)>\s*$/)?.[1] ?? value).trim();
const isEmail = (value: string) => /^[^\s@<>]+@[^\s@<>]+$/.test(value);

function refusal(request: RecordedRequest, token: string, inactive: Set<string>): FakeReply | undefined {
  if (request.path !== "/email") return postmarkError(404, 0, "Not found");
  if (request.method !== "POST") return postmarkError(405, 0, "Method not allowed");
  const given = headerValue(request, "x-postmark-server-token");
  if (!given) {
    return postmarkError(
      401,
      10,
      "No Account or Server API tokens were supplied in the HTTP headers. Please add a header for either X-Postmark-Server-Token or X-Postmark-Account-Token.",
    );
  }
  if (given !== token) return postmarkError(401, 10, "Request does not contain a valid Server token.");
  if (mediaType(request) !== "application/json" || !accepts(request, "application/json")) {
    return postmarkError(422, 409, "JSON required: your HTTP request does not have the Accept and Content-Type headers set to application/json.");
  }
  if (request.raw.length > 10 * 1024 * 1024) return postmarkError(413, 0, "Request entity too large");
  const parsed = parseJson(request.body);
  if (!parsed.ok || typeof parsed.value !== "object" || parsed.value === null) return postmarkError(422, 402, "Received invalid JSON input.");
  const mail = parsed.value as any;
  if (typeof mail.From !== "string" || mail.From.trim() === "") return postmarkError(422, 300, "Invalid 'From' address: ''.");
  if (!isEmail(addressOf(mail.From))) return postmarkError(422, 300, `Invalid 'From' address: '${mail.From}'.`);
  if (typeof mail.To !== "string" || mail.To.trim() === "") return postmarkError(422, 300, "Zero recipients specified");
  const recipients = mail.To.split(",").map((r: string) => addressOf(r));
  if (recipients.length > 50) return postmarkError(422, 300, "Maximum of 50 recipients allowed per message.");
  const bad = recipients.find((r: string) => !isEmail(r));
  if (bad !== undefined) return postmarkError(422, 300, `Error parsing 'To': Illegal email address '${bad}'. It must contain the '@' symbol.`);
  if (!mail.TextBody && !mail.HtmlBody) return postmarkError(422, 300, "Provide either email TextBody or HtmlBody or both.");
  if (mail.Attachments !== undefined) {
    if (!Array.isArray(mail.Attachments)) return postmarkError(422, 300, "Invalid 'Attachments' value.");
    for (const a of mail.Attachments) {
      if (typeof a?.Name !== "string" || !a.Name) return postmarkError(422, 300, "Attachment Name is required.");
      if (typeof a.Content !== "string" || !/^[A-Za-z0-9+/]+={0,2}$/.test(a.Content))
        return postmarkError(422, 300, `Attachment '${a.Name}' has invalid Content.`);
      if (typeof a.ContentType !== "string" || !a.ContentType.includes("/")) return postmarkError(422, 300, `Attachment '${a.Name}' needs a ContentType.`);
    }
  }
  if (recipients.some((r: string) => inactive.has(r.toLowerCase()))) {
    return postmarkError(
      422,
      406,
      "You tried to send to recipient(s) that have been marked as inactive. Found inactive addresses: " +
        recipients.filter((r: string) => inactive.has(r.toLowerCase())).join(", ") +
        ". Inactive recipients are ones that have generated a hard bounce, a spam complaint, or a manual suppression.",
    );
  }
  return undefined;
}
