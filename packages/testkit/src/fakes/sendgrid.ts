// SendGrid v3 Mail Send (docs/reference/providers.md#e-mail): POST /v3/mail/send with a Bearer key and a JSON body; 202 with an
// empty body and the id in X-Message-Id. Refusals use SendGrid's `{"errors":[{message, field, help}]}` body.
import { randomBytes } from "node:crypto";
import { accepts, headerValue, mediaType, parseJson, startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from "./fake-server";

export const SENDGRID_TEST_KEY = "SG.fake-sendgrid-key.conveyor-tests-0123456789";

export type SentSendGridMail = { messageId: string; body: any };
export type SendGridFake = FakeServer & { apiKey: string; sent: SentSendGridMail[] };

const errors = (status: number, ...list: { message: string; field?: string | null }[]): FakeReply => ({
  status,
  body: { errors: list.map((e) => ({ message: e.message, field: e.field ?? null, help: null })) },
});

export async function startSendGridFake(options: { apiKey?: string; maxBytes?: number } = {}): Promise<SendGridFake> {
  const apiKey = options.apiKey ?? SENDGRID_TEST_KEY;
  const sent: SentSendGridMail[] = [];
  const server = await startFakeServer({
    refuse: (request) => refusal(request, apiKey, options.maxBytes ?? 30 * 1024 * 1024),
    reset: () => {
      sent.length = 0;
    },
    answer: (request) => {
      const messageId = randomBytes(16).toString("base64url").slice(0, 22);
      sent.push({ messageId, body: JSON.parse(request.body) });
      return { status: 202, headers: { "X-Message-Id": messageId } };
    },
  });
  return Object.assign(server, { apiKey, sent });
}

function refusal(request: RecordedRequest, apiKey: string, maxBytes: number): FakeReply | undefined {
  if (request.path !== "/v3/mail/send") return errors(404, { message: "resource not found" });
  if (request.method !== "POST") return errors(405, { message: "method not allowed" });
  const auth = headerValue(request, "authorization");
  if (!auth) return errors(401, { message: "authorization required" });
  if (auth !== `Bearer ${apiKey}`) return errors(401, { message: "The provided authorization grant is invalid, expired, or revoked" });
  if (headerValue(request, "accept") && !accepts(request, "application/json")) return errors(406, { message: "Accept header must allow application/json" });
  if (mediaType(request) !== "application/json") return errors(415, { message: "Content-Type should be application/json." });
  if (request.raw.length > maxBytes) return errors(413, { message: "The JSON you have submitted cannot be parsed or is too large." });
  const parsed = parseJson(request.body);
  if (!parsed.ok || typeof parsed.value !== "object" || parsed.value === null) return errors(400, { message: "Bad Request", field: null });
  const problems = validate(parsed.value as any);
  return problems.length ? errors(400, ...problems) : undefined;
}

const isEmail = (value: unknown) => typeof value === "string" && /^[^\s@<>]+@[^\s@<>]+$/.test(value);

function validate(mail: any): { message: string; field: string }[] {
  const problems: { message: string; field: string }[] = [];
  const personalizations = mail.personalizations;
  if (!Array.isArray(personalizations) || personalizations.length === 0) {
    problems.push({ message: "The personalizations field is required and must have at least one personalization.", field: "personalizations" });
  } else {
    personalizations.forEach((p: any, i: number) => {
      if (!Array.isArray(p?.to) || p.to.length === 0) {
        problems.push({
          message: "The to array is required for all personalization objects, and must have at least one email object with a valid email address.",
          field: `personalizations.${i}.to`,
        });
        return;
      }
      p.to.forEach((to: any, j: number) => {
        if (!isEmail(to?.email)) problems.push({ message: "Does not contain a valid address.", field: `personalizations.${i}.to.${j}.email` });
      });
    });
  }
  if (!mail.from || typeof mail.from !== "object") {
    problems.push({
      message:
        "The from object must be provided for every email send. It is an object that requires the email parameter, but may also contain a name parameter.",
      field: "from",
    });
  } else if (!isEmail(mail.from.email)) {
    problems.push({ message: "The from email does not contain a valid address.", field: "from.email" });
  }
  const everyPersonalizationHasSubject =
    Array.isArray(personalizations) && personalizations.length > 0 && personalizations.every((p: any) => typeof p?.subject === "string" && p.subject);
  if (!(typeof mail.subject === "string" && mail.subject) && !everyPersonalizationHasSubject && !mail.template_id) {
    problems.push({
      message:
        "The subject is required. You can get around this requirement if you use a template with a subject defined or if every personalization has a subject defined.",
      field: "subject",
    });
  }
  if (!mail.template_id) {
    if (!Array.isArray(mail.content) || mail.content.length === 0) {
      problems.push({
        message: "Unless a valid template_id is provided, the content parameter is required. There must be at least one defined content block.",
        field: "content",
      });
    } else {
      mail.content.forEach((c: any, i: number) => {
        if (typeof c?.type !== "string" || c.type.length === 0)
          problems.push({ message: "The content type must be a string at least one character in length.", field: `content.${i}.type` });
        if (typeof c?.value !== "string" || c.value.length === 0)
          problems.push({ message: "The content value must be a string at least one character in length.", field: `content.${i}.value` });
      });
    }
  }
  if (mail.attachments !== undefined) {
    if (!Array.isArray(mail.attachments)) problems.push({ message: "The attachments parameter must be an array.", field: "attachments" });
    else
      mail.attachments.forEach((a: any, i: number) => {
        if (typeof a?.content !== "string" || a.content.length === 0 || !isBase64(a.content))
          problems.push({ message: "The attachment content must be base64 encoded.", field: `attachments.${i}.content` });
        if (typeof a?.filename !== "string" || a.filename.length === 0)
          problems.push({ message: "The attachment filename parameter is required.", field: `attachments.${i}.filename` });
        if (a?.disposition !== undefined && !["inline", "attachment"].includes(a.disposition))
          problems.push({ message: "The disposition must be inline or attachment.", field: `attachments.${i}.disposition` });
      });
  }
  return problems;
}

const isBase64 = (value: string) => /^[A-Za-z0-9+/]+={0,2}$/.test(value) && value.length % 4 === 0;
