// Response bodies of the console's second pass (issue 38): saved views of the jobs list, bulk webhook redelivery and the
// Queues page's charts, spread into responseSchemas.
import Joi from "joi";
import { jobFilterFields } from "@conveyor/contracts";
import { id, timestamp } from "./responses-fields";

export const viewSchemas = {
  SavedView: Joi.object({
    id: id().required(),
    name: Joi.string().required(),
    filter: Joi.object(jobFilterFields).required().description("The GET /jobs filters it applies."),
    created_at: timestamp().required(),
  }),
  QueueActivity: Joi.object({
    minutes: Joi.array().items(timestamp()).required().description("Each minute's start, oldest first; the series have one value per minute."),
    covered_from: timestamp().allow(null).required().description("The first minute the events read cover whole; null: the whole hour."),
    queues: Joi.array()
      .items(
        Joi.object({
          type: Joi.string().required(),
          started: Joi.array().items(Joi.number().integer().min(0).allow(null)).required().description("Attempts started; null before covered_from."),
          wait_avg_ms: Joi.array()
            .items(Joi.number().integer().min(0).allow(null))
            .required()
            .description("Mean wait from due to start; null without a start."),
          wait_p95_ms: Joi.array().items(Joi.number().integer().min(0).allow(null)).required().description("95th-percentile wait; null without a start."),
        }),
      )
      .required(),
  }),
  BulkWebhookRedelivery: Joi.object({
    events: Joi.number().integer().min(0).required().description("How many events were queued (with dry_run: would be)."),
    event_ids: Joi.array().items(Joi.number().integer().min(1)).required().description("Those events, oldest first."),
    has_more: Joi.boolean().required().description("More remain past this call's limit: call again."),
    dry_run: Joi.boolean().required(),
  }),
};
