// Response bodies of schedules (docs/reference/time.md#time-priority-and-fairness). Spread into responseSchemas.
import Joi from "joi";
import { anyObject, id, timestamp } from "./responses-fields";

export const schedulesSchemas = {
  Schedule: Joi.object({
    id: id().required(),
    name: Joi.string().required(),
    cron: Joi.string().required().description("Five fields, minute hour day-of-month month day-of-week, read in `timezone`."),
    timezone: Joi.string().required().description("IANA time zone name, as given (default UTC)."),
    job: Joi.object({
      type: Joi.string().required(),
      payload: anyObject().required(),
      max_retries: Joi.number().integer().min(0).required(),
      priority: Joi.number().integer().min(1).max(10).required(),
      concurrency_key: Joi.string(),
      concurrency_limit: Joi.number().integer(),
      rate_limit: Joi.string(),
      timeout_ms: Joi.number().integer(),
    })
      .required()
      .description("The job each tick creates, with defaults applied."),
    paused: Joi.boolean().required(),
    next_run_at: timestamp().allow(null).required().description("The next tick; null while paused."),
    last_run_at: timestamp().allow(null).required().description("The latest tick that created a job, or null."),
    created_at: timestamp().required(),
  }),
} satisfies Record<string, Joi.Schema>;
