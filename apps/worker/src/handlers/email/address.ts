// Sender and recipient strings: EMAIL_FROM may be "Name <a@b>", which Resend and Postmark take as is and
// SendGrid wants split into {email, name}.

export type Mailbox = { email: string; name?: string };

export function parseMailbox(value: string): Mailbox {
  const match = value.match(/^\s*"?([^"<]*?)"?\s*<([^<>]+)>\s*$/);
  if (!match) return { email: value.trim() };
  const name = match[1]!.trim();
  return name ? { email: match[2]!.trim(), name } : { email: match[2]!.trim() };
}

/** "ada@example.com" → "a***@example.com": enough to tell recipients apart in job logs. */
export function maskEmail(value: string): string {
  const { email } = parseMailbox(value);
  const at = email.lastIndexOf("@");
  if (at < 1) return "***";
  return `${email[0]}***${email.slice(at)}`;
}
