// Response bodies of flow control (docs/reference/flow-control.md#flow-control): an organization's rate limits and queues. Spread into responseSchemas.
import Joi from "joi";
import { RATE_LIMIT_PERIODS } from "@conveyor/contracts";
import { count, timestamp } from "./responses-fields";

const period = () => Joi.string().valid(...Object.keys(RATE_LIMIT_PERIODS));

export const flowSchemas = {
  RateLimit: Joi.object({
    name: Joi.string().required(),
    limit: Joi.number().integer().min(1).required(),
    period: period().required(),
    used: count().required().description("Starts in the current window."),
    created_at: timestamp().required(),
    updated_at: timestamp().required(),
  }),
  Queue: Joi.object({
    type: Joi.string().required(),
    paused: Joi.boolean().required(),
    concurrency_limit: Joi.number().integer().allow(null).required().description("Your organization's cap on its jobs of this type running at once, or null."),
    rate_limit: Joi.string().allow(null).required().description("A rate limit every job of this type starts under, or null."),
    due: count().required().description("Due now and waiting for a worker."),
    delayed: count().required().description("Due later: run_at, a retry, a debounce."),
    running: count().required().description("Handed to a worker or running."),
    waiting_on_limits: count().required().description("Due but held by a pause, a rate limit, a concurrency key or the cap."),
    oldest_due_at: timestamp().allow(null).required().description("When the oldest due job fell due, or null."),
    started_last_minute: count().required().description("Jobs of the type that started in the last minute: the live start rate."),
    p95_wait_ms: Joi.number()
      .integer()
      .min(0)
      .allow(null)
      .required()
      .description(
        "The 95th percentile, in milliseconds, of the wait from due (run_at, a retry's time, else creation) to start of the jobs that started in the last 15 minutes; null when none did. Read from your organization's newest 20,000 events.",
      ),
  }),
} satisfies Record<string, Joi.Schema>;
