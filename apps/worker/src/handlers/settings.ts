// Deployment settings of the built-in handlers (SPEC §6), parsed with the rest of the worker's environment.
// A setting a handler needs but does not have fails that job permanently, naming the variable: the worker
// itself starts without them, so a deployment can run only the types it has configured.
import { Joi } from "@conveyor/config";
import { PermanentJobError } from "@conveyor/contracts";

export const handlerEnv = {
  EMAIL_PROVIDER: Joi.string().valid("sendgrid", "resend", "postmark").default("sendgrid"),
  EMAIL_PROVIDER_API_KEY: Joi.string(),
  /** Default: the selected provider's production API host. */
  EMAIL_PROVIDER_BASE_URL: Joi.string().uri({ scheme: ["http", "https"] }),
  EMAIL_FROM: Joi.string().max(320),
  SMS_PROVIDER_USERNAME: Joi.string(),
  SMS_PROVIDER_API_KEY: Joi.string(),
  /** Default: Africa's Talking production host, or its sandbox host when the username is "sandbox". */
  SMS_PROVIDER_BASE_URL: Joi.string().uri({ scheme: ["http", "https"] }),
  WEBHOOK_SIGNING_SECRET: Joi.string().pattern(/^whsec_[A-Za-z0-9+/=]+$/, "whsec_ followed by base64"),
  WEBHOOK_TIMEOUT_MS: Joi.number().integer().min(100).max(120_000).default(10_000),
  PUPPETEER_EXECUTABLE_PATH: Joi.string().default("/usr/bin/chromium"),
  IMAGE_MAX_BYTES: Joi.number().integer().min(1024).max(512 * 1024 * 1024).default(20 * 1024 * 1024),
  IMAGE_MAX_PIXELS: Joi.number().integer().min(1).max(1_000_000_000).default(50_000_000),
  OPENAI_API_KEY: Joi.string(),
  OPENAI_BASE_URL: Joi.string().uri({ scheme: ["http", "https"] }).default("https://api.openai.com/v1"),
  OPENAI_MODEL: Joi.string().default("gpt-4o-mini"),
  MPESA_BASE_URL: Joi.string().uri({ scheme: ["http", "https"] }).default("https://api.safaricom.co.ke"),
  MPESA_CONSUMER_KEY: Joi.string(),
  MPESA_CONSUMER_SECRET: Joi.string(),
  MPESA_SHORTCODE: Joi.string().pattern(/^\d{5,7}$/, "5 to 7 digits"),
  MPESA_PASSKEY: Joi.string(),
  MPESA_TRANSACTION_TYPE: Joi.string().valid("CustomerPayBillOnline", "CustomerBuyGoodsOnline").default("CustomerPayBillOnline"),
  /** Till number for Buy Goods; defaults to MPESA_SHORTCODE (PayBill). */
  MPESA_PARTY_B: Joi.string().pattern(/^\d{5,7}$/, "5 to 7 digits"),
  CHAT_WEBHOOK_URL: Joi.string().uri({ scheme: ["http", "https"] }),
  /** Timeout of one request to a provider API. */
  PROVIDER_TIMEOUT_MS: Joi.number().integer().min(100).max(300_000).default(15_000),
} as const;

export type HandlerSettings = {
  email: { provider: "sendgrid" | "resend" | "postmark"; apiKey?: string; baseUrl?: string; from?: string };
  sms: { username?: string; apiKey?: string; baseUrl?: string };
  webhook: { signingSecret?: string; timeoutMs: number };
  pdf: { executablePath: string; templatesDir?: string };
  image: { maxBytes: number; maxPixels: number };
  openai: { apiKey?: string; baseUrl: string; model: string };
  mpesa: {
    baseUrl: string;
    consumerKey?: string;
    consumerSecret?: string;
    shortcode?: string;
    passkey?: string;
    transactionType: "CustomerPayBillOnline" | "CustomerBuyGoodsOnline";
    partyB?: string;
    /** Callback URLs are built from it. */
    publicUrl?: string;
  };
  chat: { webhookUrl?: string };
  urlPolicy: { allowHttp: boolean; allowPrivateNetwork: boolean };
  providerTimeoutMs: number;
};

/** Maps parsed variables (validated by `handlerEnv` inside the worker's schema) to handler settings. */
export function handlerSettings(v: Record<string, any>): HandlerSettings {
  return {
    email: { provider: v.EMAIL_PROVIDER, apiKey: v.EMAIL_PROVIDER_API_KEY, baseUrl: v.EMAIL_PROVIDER_BASE_URL, from: v.EMAIL_FROM },
    sms: { username: v.SMS_PROVIDER_USERNAME, apiKey: v.SMS_PROVIDER_API_KEY, baseUrl: v.SMS_PROVIDER_BASE_URL },
    webhook: { signingSecret: v.WEBHOOK_SIGNING_SECRET, timeoutMs: v.WEBHOOK_TIMEOUT_MS },
    pdf: { executablePath: v.PUPPETEER_EXECUTABLE_PATH, templatesDir: v.TEMPLATES_DIR },
    image: { maxBytes: v.IMAGE_MAX_BYTES, maxPixels: v.IMAGE_MAX_PIXELS },
    openai: { apiKey: v.OPENAI_API_KEY, baseUrl: v.OPENAI_BASE_URL, model: v.OPENAI_MODEL },
    mpesa: {
      baseUrl: v.MPESA_BASE_URL,
      consumerKey: v.MPESA_CONSUMER_KEY,
      consumerSecret: v.MPESA_CONSUMER_SECRET,
      shortcode: v.MPESA_SHORTCODE,
      passkey: v.MPESA_PASSKEY,
      transactionType: v.MPESA_TRANSACTION_TYPE,
      partyB: v.MPESA_PARTY_B,
      publicUrl: v.PUBLIC_URL?.replace(/\/+$/, ""),
    },
    chat: { webhookUrl: v.CHAT_WEBHOOK_URL },
    urlPolicy: { allowHttp: v.WEBHOOK_ALLOW_HTTP, allowPrivateNetwork: v.ALLOW_PRIVATE_NETWORK },
    providerTimeoutMs: v.PROVIDER_TIMEOUT_MS,
  };
}

/** Thrown by a handler when a setting it needs is missing; the runtime fails the job permanently. */
export function requireSetting<T>(value: T | undefined, variable: string): T {
  if (value === undefined || value === null || value === "") {
    throw new MissingSettingError(variable);
  }
  return value;
}

export class MissingSettingError extends PermanentJobError {
  override name = "MissingSettingError";
  constructor(readonly variable: string) {
    super(`${variable} is not set on this worker; set it to run this job type`);
  }
}
