// Africa's Talking per-recipient statusCode values (docs/reference/providers.md#sms) and what each means for the job.

export type RecipientOutcome = "sent" | "permanent" | "retry";

export const RECIPIENT_STATUSES: Record<number, { name: string; outcome: RecipientOutcome; hint?: string }> = {
  100: { name: "Processed", outcome: "sent" },
  101: { name: "Sent", outcome: "sent" },
  102: { name: "Queued", outcome: "sent" },
  401: { name: "RiskHold", outcome: "permanent", hint: "held by Africa's Talking risk checks" },
  402: { name: "InvalidSenderId", outcome: "permanent", hint: "the sender ID is not approved for this account or route" },
  403: { name: "InvalidPhoneNumber", outcome: "permanent" },
  404: { name: "UnsupportedNumberType", outcome: "permanent" },
  405: { name: "InsufficientBalance", outcome: "retry", hint: "the Africa's Talking account is out of credit" },
  406: { name: "UserInBlacklist", outcome: "permanent", hint: "the recipient opted out of messages" },
  407: { name: "CouldNotRoute", outcome: "permanent" },
  409: { name: "DoNotDisturbRejection", outcome: "permanent", hint: "the recipient has do-not-disturb on" },
  500: { name: "InternalServerError", outcome: "retry" },
  501: { name: "GatewayError", outcome: "retry" },
  502: { name: "RejectedByGateway", outcome: "retry" },
};

/** Topping up an account takes a person: wait this long rather than burning retries at backoff speed. */
export const INSUFFICIENT_BALANCE_RETRY_MS = 10 * 60 * 1000;

/** An unlisted code: server-side ones are worth another try, the rest are refusals. */
export function recipientStatus(code: number): { name: string; outcome: RecipientOutcome; hint?: string } {
  return RECIPIENT_STATUSES[code] ?? { name: `status ${code}`, outcome: code >= 500 ? "retry" : "permanent" };
}

/** A `Message` naming a status (e.g. "InvalidSenderId") when AT refused the whole send with no recipients. */
export function statusNamed(name: string): { code: number; name: string; outcome: RecipientOutcome; hint?: string } | undefined {
  const entry = Object.entries(RECIPIENT_STATUSES).find(([, status]) => status.name === name);
  return entry ? { code: Number(entry[0]), ...entry[1] } : undefined;
}
