// POST /jobs bodies in the document: one variant per built-in type, built from the route's own `jobInput`
// with `type` narrowed to the type's name and `payload` replaced by the catalog's schema for it, plus one
// variant for plugin types (any other valid name, any object). The `type` property discriminates.
import Joi from "joi";
import { BUILT_IN_TYPES, TYPE_NAME_PATTERN, catalog, type BuiltInType, type CatalogOptions, type Payloads } from "@conveyor/contracts";
import { jobInput } from "../declarations/job-fields";
import { jsonSchema, ref, withoutDefaults, withProperty, type JsonSchema } from "../declarations/json-schema";

/** An example payload of every built-in type; the OpenAPI test validates each against the catalog. */
export const payloadExamples: { [K in BuiltInType]: Partial<Payloads[K]> } = {
  send_email: { to: "ada@example.com", subject: "Your receipt", body: "Thank you for your order." },
  send_sms: { to: "+254712345678", message: "Your code is 482913." },
  webhook: { url: "https://example.com/hooks/orders", payload: { order_id: "A-1001", status: "paid" } },
  generate_pdf: {
    template: "invoice",
    data: { number: "INV-1001", customer: "Acme Ltd", items: [{ description: "Widget", quantity: 2, unit_price: 9.5 }], currency: "USD" },
  },
  compress_image: { url: "https://example.com/photo.jpg", width: 800, quality: 80 },
  ai_summarize: { text: "Conveyor is a multi-tenant background-job service. Services enqueue jobs over HTTP; workers run them.", length: "short" },
  mobile_money_stk: { phone: "254712345678", amount: 100, ref: "INV1001" },
  chat_notify: { channel: "#ops", text: "Deploy finished." },
};

const pascal = (type: string) => type.replace(/(^|_)([a-z0-9])/g, (_m, _sep, c: string) => c.toUpperCase());
export const jobComponent = (type: BuiltInType) => `${pascal(type)}Job`;
export const payloadComponent = (type: BuiltInType) => `${pascal(type)}Payload`;
export const PLUGIN_JOB = "PluginJob";

/** The schema of one built-in type's request: what the route and the catalog check together. */
export function jobVariantJoi(type: BuiltInType, options: CatalogOptions): Joi.ObjectSchema {
  return jobInput.keys({ type: Joi.string().valid(type).required(), payload: catalog[type].payload(options).required() });
}

/** `schema` with its properties in the order of the route's jobInput (type, payload, max_retries). */
function inRouteOrder(schema: JsonSchema): JsonSchema {
  const order = Object.keys(jsonSchema(jobInput).properties as object);
  const properties = schema.properties as Record<string, JsonSchema>;
  const ordered = { ...schema, properties: Object.fromEntries(order.map((key) => [key, properties[key]])) };
  return withProperty(ordered, "max_retries", (current) => ({ ...current, description: MAX_RETRIES }));
}

const MAX_RETRIES = "Retries allowed after failed attempts: the job runs at most 1 + max_retries times, then ends failed.";

/**
 * components.schemas for job requests: NewJob (the oneOf), one *Job and *Payload per type, PluginJob. Each
 * variant's `type` tells them apart, but NewJob declares no `discriminator`: the plugin variant has no single
 * type name to map, and generators would then pin it to a made-up one.
 */
export function jobSchemas(options: CatalogOptions): Record<string, JsonSchema> {
  const schemas: Record<string, JsonSchema> = {};
  for (const type of BUILT_IN_TYPES) {
    schemas[payloadComponent(type)] = { ...jsonSchema(catalog[type].payload(options)), description: catalog[type].description };
    const variant = withProperty(inRouteOrder(jsonSchema(jobVariantJoi(type, options))), "payload", ref(payloadComponent(type)));
    const settings = catalog[type].settings.length ? ` Needs the worker settings ${catalog[type].settings.join(", ")}.` : "";
    schemas[jobComponent(type)] = { ...variant, description: `${catalog[type].description}${settings}` };
  }
  const plugin = jobInput.keys({
    type: Joi.string()
      .pattern(TYPE_NAME_PATTERN, "job type name")
      .invalid(...BUILT_IN_TYPES)
      .required(),
  });
  schemas[PLUGIN_JOB] = {
    ...inRouteOrder(jsonSchema(plugin)),
    description:
      "A type an operator added with a worker plugin (WORKER_PLUGINS). Accepted once a worker serving it has started; " +
      "its payload is any JSON object, handed to the plugin as bytes. Unknown names are refused with unknown_job_type.",
  };
  schemas.NewJob = {
    description: "A job to run: its type, the payload that type takes, and how many retries it may use. `type` decides which variant applies.",
    oneOf: [...BUILT_IN_TYPES.map((type) => ref(jobComponent(type))), ref(PLUGIN_JOB)],
  };
  return withoutDefaults(schemas);
}

/** Examples of POST /jobs, one per built-in type. */
export function jobExamples(): Record<string, { summary: string; value: unknown }> {
  return Object.fromEntries(
    BUILT_IN_TYPES.map((type) => [type, { summary: catalog[type].description, value: { type, payload: payloadExamples[type], max_retries: 3 } }]),
  );
}
