// Deployment settings of the built-in handlers (docs/reference/lifecycle.md#built-in-handlers), parsed with the rest of the worker's environment;
// handlers read them from the worker's config (`deps.settings.EMAIL_PROVIDER_API_KEY`).
// A setting a handler needs but does not have fails that job permanently, naming the variable: the worker
// itself starts without them, so a deployment can run only the types it has configured.
import { Joi, oneOf, setting, type ConfigOf, type SharedConfig } from "@conveyor/config";
import { PermanentJobError } from "@conveyor/contracts";

const httpUrl = () => Joi.string().uri({ scheme: ["http", "https"] });
const shortcode = () => Joi.string().pattern(/^\d{5,7}$/, "5 to 7 digits");

export const handlerEnv = {
  EMAIL_PROVIDER: setting(oneOf("sendgrid", "resend", "postmark")).default("sendgrid"),
  EMAIL_PROVIDER_API_KEY: setting(Joi.string()).optional(),
  /** Unset: the selected provider's production API host. */
  EMAIL_PROVIDER_BASE_URL: setting(httpUrl()).optional(),
  EMAIL_FROM: setting(Joi.string().max(320)).optional(),
  SMS_PROVIDER_USERNAME: setting(Joi.string()).optional(),
  SMS_PROVIDER_API_KEY: setting(Joi.string()).optional(),
  /** Unset: Africa's Talking production host, or its sandbox host when the username is "sandbox". */
  SMS_PROVIDER_BASE_URL: setting(httpUrl()).optional(),
  WEBHOOK_SIGNING_SECRET: setting(Joi.string().pattern(/^whsec_[A-Za-z0-9+/=]+$/, "whsec_ followed by base64")).optional(),
  WEBHOOK_TIMEOUT_MS: setting(Joi.number().integer().min(100).max(120_000)).default(10_000),
  PUPPETEER_EXECUTABLE_PATH: setting(Joi.string()).default("/usr/bin/chromium"),
  IMAGE_MAX_BYTES: setting(
    Joi.number()
      .integer()
      .min(1024)
      .max(512 * 1024 * 1024),
  ).default(20 * 1024 * 1024),
  IMAGE_MAX_PIXELS: setting(Joi.number().integer().min(1).max(1_000_000_000)).default(50_000_000),
  OPENAI_API_KEY: setting(Joi.string()).optional(),
  OPENAI_BASE_URL: setting(httpUrl()).default("https://api.openai.com/v1"),
  OPENAI_MODEL: setting(Joi.string()).default("gpt-4o-mini"),
  MPESA_BASE_URL: setting(httpUrl()).default("https://api.safaricom.co.ke"),
  MPESA_CONSUMER_KEY: setting(Joi.string()).optional(),
  MPESA_CONSUMER_SECRET: setting(Joi.string()).optional(),
  MPESA_SHORTCODE: setting(shortcode()).optional(),
  MPESA_PASSKEY: setting(Joi.string()).optional(),
  MPESA_TRANSACTION_TYPE: setting(oneOf("CustomerPayBillOnline", "CustomerBuyGoodsOnline")).default("CustomerPayBillOnline"),
  /** Till number for Buy Goods; unset: MPESA_SHORTCODE (PayBill). */
  MPESA_PARTY_B: setting(shortcode()).optional(),
  CHAT_WEBHOOK_URL: setting(httpUrl()).optional(),
  /** Timeout of one request to a provider API. */
  PROVIDER_TIMEOUT_MS: setting(Joi.number().integer().min(100).max(300_000)).default(15_000),
};

/**
 * What handlers read: their own settings and the ones both apps share. The worker's whole configuration (env.ts, built
 * from these) is one, so handlers need not know the worker's.
 */
export type HandlerSettings = SharedConfig & ConfigOf<typeof handlerEnv>;

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
