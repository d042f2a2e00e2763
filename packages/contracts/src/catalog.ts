// The job catalog: one entry per built-in type, with its payload schema (fields from the seed, bounds from
// docs/reference/lifecycle.md#lifecycle/docs/reference/lifecycle.md#built-in-handlers). The API validates against it before storing a job; the worker validates again before running
// and treats a mismatch as a permanent failure. Adding a built-in type: CONTRIBUTING.md lists the steps.
import Joi from "joi";
import { EMAIL_ATTACHMENTS_MAX, EMAIL_ATTACHMENTS_MAX_BYTES } from "./flow-control";
import { builtInTemplates } from "./templates";
import { urlRefusal, type UrlPolicy } from "./url-policy";

export type CatalogOptions = UrlPolicy & {
  /** Template names generate_pdf accepts: the built-in ones plus those found in TEMPLATES_DIR. */
  templateNames: readonly string[];
};

export type SendEmailPayload = { to: string; subject: string; body: string; from?: string; attachments?: EmailAttachmentRef[] };
/** An attachment of send_email (docs/reference/lifecycle.md#dependencies): the artifact of `job`, a job the e-mail depends on (an id once stored). */
export type EmailAttachmentRef = { filename: string; job: string };
export type SendSmsPayload = { to: string; message: string; from?: string };
export type WebhookPayload = { url: string; payload: Record<string, unknown>; include_dependencies?: boolean };
export type GeneratePdfPayload = { template: string; data: Record<string, unknown> };
export type CompressImagePayload = { url: string; width: number; quality: number };
export type AiSummarizePayload = { text: string; length: "short" | "medium" | "long" };
export type MobileMoneyStkPayload = { phone: string; amount: number; ref: string };
export type ChatNotifyPayload = { channel: string; text: string };

/** Payload type of each built-in job type, after defaults are applied. */
export type Payloads = {
  send_email: SendEmailPayload;
  send_sms: SendSmsPayload;
  webhook: WebhookPayload;
  generate_pdf: GeneratePdfPayload;
  compress_image: CompressImagePayload;
  ai_summarize: AiSummarizePayload;
  mobile_money_stk: MobileMoneyStkPayload;
  chat_notify: ChatNotifyPayload;
};

export type BuiltInType = keyof Payloads;

// No CR/LF in anything that may end up in a provider's header line (subjects, sender names).
const singleLine = (max: number) =>
  Joi.string()
    .min(1)
    .max(max)
    .pattern(/^[^\r\n]*$/, "a single line");
const email = () =>
  Joi.string()
    .max(254)
    .email({ tlds: { allow: false } });
const anyObject = () => Joi.object().unknown(true);

function fetchableUrl(policy: UrlPolicy) {
  return Joi.string()
    .max(2048)
    .custom((value: string, helpers) => {
      const refusal = urlRefusal(value, policy);
      return refusal ? helpers.message({ custom: refusal }) : value;
    });
}

/** Daraja wants 254 followed by 9 digits; accept the local 07…/01… forms and normalise them. */
function mpesaPhone() {
  return Joi.string()
    .pattern(/^\d+$/, "digits only, without a leading +")
    .custom((value: string, helpers) => {
      const normalised = value.replace(/^0(?=[17]\d{8}$)/, "254").replace(/^(?=[17]\d{8}$)/, "254");
      return /^254[17]\d{8}$/.test(normalised) ? normalised : helpers.message({ custom: "must be a Kenyan mobile number such as 254712345678" });
    });
}

/** Built-in templates check their data's shape; templates from TEMPLATES_DIR take any object. */
function pdfData() {
  return Joi.alternatives()
    .conditional("template", {
      switch: Object.entries(builtInTemplates).map(([name, schema]) => ({ is: name, then: schema })),
      otherwise: anyObject(),
    })
    .required();
}

type CatalogEntry = {
  /** One line for documentation. */
  description: string;
  /** Deployment settings the handler needs (documented; checked by the worker when the job runs). */
  settings: readonly string[];
  /** Joi cannot infer the payload type from the schema: `unknown` until validatePayload says Payloads[K]. */
  payload: (options: CatalogOptions) => Joi.ObjectSchema<unknown>;
};

export const catalog: Record<BuiltInType, CatalogEntry> = {
  send_email: {
    description: "Sends a transactional e-mail through SendGrid, Resend or Postmark.",
    settings: ["EMAIL_PROVIDER_API_KEY", "EMAIL_FROM"],
    payload: () =>
      Joi.object({
        to: email().required(),
        subject: singleLine(998).required(),
        body: Joi.string().min(1).max(500_000).required(),
        from: email(),
        attachments: Joi.array()
          .items(
            Joi.object({
              filename: singleLine(255)
                .pattern(/^[^/\\]+$/, "a file name without a path")
                .required(),
              job: Joi.string().min(1).max(100).required().description("A job this e-mail depends on (in depends_on): its id, or its ref in the same batch."),
            }),
          )
          .max(EMAIL_ATTACHMENTS_MAX)
          .description(
            `Up to ${EMAIL_ATTACHMENTS_MAX} files, ${EMAIL_ATTACHMENTS_MAX_BYTES / 1024 / 1024} MiB in all: each the artifact of a job this one depends on (e.g. a generate_pdf invoice), attached under \`filename\`.`,
          ),
      }),
  },
  send_sms: {
    description: "Sends an SMS through Africa's Talking.",
    settings: ["SMS_PROVIDER_USERNAME", "SMS_PROVIDER_API_KEY"],
    payload: () =>
      Joi.object({
        to: Joi.string()
          .pattern(/^\+[1-9]\d{6,14}$/, "E.164 (a + then 7 to 15 digits)")
          .required(),
        message: Joi.string().min(1).max(1600).required(),
        from: Joi.string().pattern(/^[A-Za-z0-9 ]{1,11}$|^\d{3,15}$/, "a sender ID (up to 11 letters or digits) or a short code"),
      }),
  },
  webhook: {
    description: "POSTs a JSON body to an HTTPS URL, signed with Standard Webhooks headers when configured.",
    settings: [],
    payload: (options) =>
      Joi.object({
        url: fetchableUrl(options).required(),
        payload: anyObject().required(),
        include_dependencies: Joi.boolean().description(
          "Adds `dependencies` to the body: the jobs this one depends on, as [{id, type, status, result}] (docs/reference/lifecycle.md#dependencies).",
        ),
      }),
  },
  generate_pdf: {
    description: "Renders a Handlebars template to PDF with Chromium and stores it as the job's artifact.",
    settings: [],
    payload: (options) =>
      Joi.object({
        template: Joi.string()
          .valid(...options.templateNames)
          .required()
          .messages({ "any.only": `must be one of the templates: ${options.templateNames.join(", ")}` }),
        data: pdfData(),
      }),
  },
  compress_image: {
    description: "Downloads an image, resizes it to a width and re-encodes it as JPEG; stored as the artifact.",
    settings: [],
    payload: (options) =>
      Joi.object({
        url: fetchableUrl(options).required(),
        width: Joi.number().integer().min(1).max(10_000).required(),
        quality: Joi.number().integer().min(1).max(100).default(80),
      }),
  },
  ai_summarize: {
    description: "Summarizes text with an OpenAI-compatible chat model.",
    settings: ["OPENAI_API_KEY"],
    payload: () =>
      Joi.object({
        text: Joi.string().min(1).max(200_000).required(),
        length: Joi.string().valid("short", "medium", "long").default("medium"),
      }),
  },
  mobile_money_stk: {
    description: "Sends an M-Pesa STK push (payment prompt) through Safaricom Daraja.",
    settings: ["MPESA_CONSUMER_KEY", "MPESA_CONSUMER_SECRET", "MPESA_SHORTCODE", "MPESA_PASSKEY", "PUBLIC_URL"],
    payload: () =>
      Joi.object({
        phone: mpesaPhone().required(),
        amount: Joi.number().integer().min(1).max(250_000).required(),
        ref: Joi.string()
          .pattern(/^[A-Za-z0-9]{1,12}$/, "1 to 12 letters or digits")
          .required(),
      }),
  },
  chat_notify: {
    description: "Posts a message to a Slack-format incoming webhook (Slack, Mattermost).",
    settings: ["CHAT_WEBHOOK_URL"],
    payload: () =>
      Joi.object({
        channel: Joi.string().min(1).max(80).required(),
        text: Joi.string().min(1).max(40_000).required(),
      }),
  },
};

export const BUILT_IN_TYPES = Object.keys(catalog) as BuiltInType[];

export function isBuiltInType(type: string): type is BuiltInType {
  return Object.hasOwn(catalog, type);
}

export type ValidationDetail = { path: string; message: string };

/** Joi may report several problems with one field (type, then allowed values); the first says enough. */
export function firstPerPath(details: ValidationDetail[]): ValidationDetail[] {
  const seen = new Set<string>();
  return details.filter((d) => !seen.has(d.path) && seen.add(d.path));
}
export type PayloadCheck<T> = { ok: true; value: T } | { ok: false; details: ValidationDetail[] };

const schemaCache = new WeakMap<CatalogOptions, Map<BuiltInType, Joi.ObjectSchema<unknown>>>();

/** Validates a built-in type's payload; `details` paths are relative to the payload (prefix them yourself). */
export function validatePayload<K extends BuiltInType>(type: K, payload: unknown, options: CatalogOptions): PayloadCheck<Payloads[K]> {
  let schemas = schemaCache.get(options);
  if (!schemas) schemaCache.set(options, (schemas = new Map<BuiltInType, Joi.ObjectSchema<unknown>>()));
  let schema = schemas.get(type);
  // The validation settings are set on the cached schema once: given with each call, joi merges them anew every time.
  if (!schema) schemas.set(type, (schema = catalog[type].payload(options).prefs({ abortEarly: false, convert: false, errors: { label: false } })));
  // Not destructured: joi types `value` as `any` when there is an error; narrowing the whole result keeps `unknown`.
  const outcome = schema.validate(payload);
  if (!outcome.error) return { ok: true, value: outcome.value as Payloads[K] };
  return { ok: false, details: firstPerPath(outcome.error.details.map((d) => ({ path: d.path.join("."), message: d.message }))) };
}
