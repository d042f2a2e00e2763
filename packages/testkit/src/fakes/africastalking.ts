// Africa's Talking SMS (docs/reference/providers.md#sms): POST /version1/messaging, form-encoded, `apiKey` header, username in
// the body. Success is 201 with SMSMessageData.Recipients[] (one statusCode per number); a bad key or a username
// that does not match it is a plain-text 401; without `Accept: application/json` the answer is XML.
// An unregistered `from` gives 201 with `Message: "InvalidSenderId"` and no recipients: the official SDK resolves
// only on 201, and cht-core logged that body from a resolved call.
import { randomBytes } from "node:crypto";
import { accepts, headerValue, mediaType, startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from "./fake-server";

export const AT_TEST_USERNAME = "sandbox";
export const AT_TEST_KEY = "atsk_fakeAfricasTalkingKey0123456789abcdef";

export const AT_STATUS_NAMES: Record<number, string> = {
  100: "Processed",
  101: "Sent",
  102: "Queued",
  401: "RiskHold",
  402: "InvalidSenderId",
  403: "InvalidPhoneNumber",
  404: "UnsupportedNumberType",
  405: "InsufficientBalance",
  406: "UserInBlacklist",
  407: "CouldNotRoute",
  409: "DoNotDisturbRejection",
  500: "InternalServerError",
  501: "GatewayError",
  502: "RejectedByGateway",
};

export type SentSms = { to: string; message: string; from?: string; fields: Record<string, string>; recipients: any[] };
export type AfricasTalkingFake = FakeServer & {
  username: string;
  apiKey: string;
  sent: SentSms[];
  /** Per-number statusCode to answer (default 101 for a valid number, 403 for an invalid one). */
  recipientStatus: Map<string, number>;
  /** Sender IDs registered on the account; any other `from` is InvalidSenderId. */
  senderIds: Set<string>;
};

type SmsAnswer = { SMSMessageData: { Message: string; Recipients: any[] } };

const plain = (status: number, text: string): FakeReply => ({ status, body: text, headers: { "Content-Type": "text/plain; charset=UTF-8" } });

export async function startAfricasTalkingFake(options: { username?: string; apiKey?: string; senderIds?: string[] } = {}): Promise<AfricasTalkingFake> {
  const username = options.username ?? AT_TEST_USERNAME;
  const apiKey = options.apiKey ?? AT_TEST_KEY;
  const sent: SentSms[] = [];
  const recipientStatus = new Map<string, number>();
  const senderIds = new Set(options.senderIds ?? ["CONVEYOR"]);
  const server = await startFakeServer({
    refuse: (request) => refusal(request, username, apiKey),
    reset: () => {
      sent.length = 0;
    },
    answer: (request) => {
      const fields = Object.fromEntries(new URLSearchParams(request.body));
      const reply = (data: SmsAnswer) => render(request, 201, data);
      if (fields.from && !senderIds.has(fields.from)) return reply({ SMSMessageData: { Message: "InvalidSenderId", Recipients: [] } });
      const numbers = fields.to!.split(",").map((n) => n.trim());
      const parts = messageParts(fields.message!);
      const recipients = numbers.map((number) => {
        const code = recipientStatus.get(number) ?? (/^\+[1-9]\d{6,14}$/.test(number) ? 101 : 403);
        const ok = code < 200;
        return {
          statusCode: code,
          number,
          status: ok ? "Success" : (AT_STATUS_NAMES[code] ?? "Failed"),
          cost: ok ? `KES ${(0.8 * parts).toFixed(4)}` : "0",
          messageId: ok ? `ATXid_${randomBytes(16).toString("hex")}` : "None",
          ...(ok ? { messageParts: parts } : {}),
        };
      });
      const succeeded = recipients.filter((r) => r.statusCode < 200);
      const total = (0.8 * parts * succeeded.length).toFixed(4);
      sent.push({ to: fields.to!, message: fields.message!, from: fields.from, fields, recipients });
      return reply({ SMSMessageData: { Message: `Sent to ${succeeded.length}/${recipients.length} Total Cost: KES ${total}`, Recipients: recipients } });
    },
  });
  return Object.assign(server, { username, apiKey, sent, recipientStatus, senderIds });
}

function refusal(request: RecordedRequest, username: string, apiKey: string): FakeReply | undefined {
  if (request.path !== "/version1/messaging") return plain(404, "The requested resource could not be found.");
  if (request.method !== "POST") return plain(405, "HTTP method not allowed, supported methods: POST");
  if (headerValue(request, "apikey") !== apiKey) return plain(401, "The supplied authentication is invalid");
  if (mediaType(request) !== "application/x-www-form-urlencoded") {
    return plain(415, "The request's Content-Type is not supported. Expected:\napplication/x-www-form-urlencoded or multipart/form-data");
  }
  const fields = new URLSearchParams(request.body);
  for (const field of ["username", "to", "message"]) {
    if (!fields.get(field)) return plain(400, `Request is missing required form field '${field}'`);
  }
  // The key belongs to one username (a sandbox key against a live username is refused the same way).
  if (fields.get("username") !== username) return plain(401, "The supplied authentication is invalid");
  return undefined;
}

/** Without Accept: application/json the API answers XML, which a JSON client cannot read. */
function render(request: RecordedRequest, status: number, data: SmsAnswer): FakeReply {
  if (accepts(request, "application/json")) return { status, body: data };
  const recipients = data.SMSMessageData.Recipients.map(
    (r) =>
      `<Recipient><number>${r.number}</number><cost>${r.cost}</cost><status>${r.status}</status><statusCode>${r.statusCode}</statusCode><messageId>${r.messageId}</messageId></Recipient>`,
  ).join("");
  return {
    status,
    headers: { "Content-Type": "application/xml" },
    body: `<?xml version="1.0" encoding="UTF-8"?><AfricasTalkingResponse><SMSMessageData><Message>${data.SMSMessageData.Message}</Message><Recipients>${recipients}</Recipients></SMSMessageData></AfricasTalkingResponse>`,
  };
}

/** GSM-7 segmentation as carriers bill it: 160 characters in one part, 153 per part beyond. */
function messageParts(text: string): number {
  return text.length <= 160 ? 1 : Math.ceil(text.length / 153);
}
