// The e-mail providers EMAIL_PROVIDER can name.
import { postmark } from "./postmark";
import { resend } from "./resend";
import { sendgrid } from "./sendgrid";
import type { EmailProvider } from "./types";

export const emailProviders: Record<"sendgrid" | "resend" | "postmark", EmailProvider> = { sendgrid, resend, postmark };
export type { EmailProvider } from "./types";
