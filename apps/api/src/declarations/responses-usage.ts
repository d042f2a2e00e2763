// Response bodies of usage and quotas (docs/reference/tenants.md#usage-quotas-and-backpressure). Spread into responseSchemas.
import Joi from "joi";
import { timestamp } from "./responses-fields";

export const usageSchemas = {
  Quotas: Joi.object({
    quotas: Joi.array()
      .items(
        Joi.object({
          name: Joi.string().valid("jobs_per_day", "jobs_per_month", "pending_max", "payload_bytes_max").required(),
          limit: Joi.number().integer().min(1).allow(null).required().description("null: unlimited."),
          used: Joi.number().integer().min(0).required().description("What is used now (0 when the quota is not in force: not counted)."),
          resets_at: timestamp().allow(null).required().description("When a period quota starts over (the next UTC day or month); null for the others."),
        }),
      )
      .length(4)
      .required(),
  }),
  UsageRow: Joi.object({
    day: Joi.string()
      .pattern(/^\d{4}-\d{2}-\d{2}$/)
      .description("The UTC day (group_by=day)."),
    type: Joi.string().description("The job type (group_by=type)."),
    jobs_created: Joi.number().integer().min(0).required(),
    attempts_started: Joi.number().integer().min(0).required(),
    attempt_seconds: Joi.number().min(0).required().description("Seconds from each attempt's start to its end (or its takeover), to the millisecond."),
    webhook_deliveries: Joi.number().integer().min(0).required().description("Delivery attempts of webhook events, each POST counted."),
    payload_bytes: Joi.number().integer().min(0).required().description("Bytes of the payloads (as JSON text) of the jobs created."),
  }).xor("day", "type"),
} satisfies Record<string, Joi.Schema>;
