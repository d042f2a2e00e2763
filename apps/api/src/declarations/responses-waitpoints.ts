// Response bodies of waitpoints (docs/reference/lifecycle.md#waitpoints-and-durable-steps) and of the M-Pesa callback that completes one. Spread into
// responseSchemas.
import Joi from "joi";
import { WAITPOINT_STATUSES } from "@conveyor/contracts";
import { id, timestamp } from "./responses-fields";

/** A waitpoint (docs/reference/lifecycle.md#waitpoints-and-durable-steps). */
const waitpoint = Joi.object({
  id: id().required(),
  status: Joi.string()
    .valid(...WAITPOINT_STATUSES)
    .required(),
  description: Joi.string().allow(null).required(),
  tags: Joi.array().items(Joi.string()).required(),
  data: Joi.any().required().description("What it was completed with (any JSON value), or null."),
  job_id: id().allow(null).required().description("The job whose ctx.waitFor made it, or null."),
  expires_at: timestamp().required(),
  finished_at: timestamp().allow(null).required().description("When it was completed, expired or was cancelled."),
  created_at: timestamp().required(),
});

/** A waitpoint as a node of a job's graph. */
export const waitpointNode = Joi.object({
  kind: Joi.string().valid("waitpoint").required(),
  id: id().required(),
  status: Joi.string()
    .valid(...WAITPOINT_STATUSES)
    .required(),
  description: Joi.string().allow(null).required(),
  created_at: timestamp().required(),
  expires_at: timestamp().required(),
  finished_at: timestamp().allow(null).required(),
});

/** A waitpoint and, once, the URL that completes it (POST /waitpoints, POST /jobs/batch). */
export const createdWaitpoint = waitpoint.keys({
  complete_url: Joi.string()
    .uri()
    .allow(null)
    .required()
    .description("POST {data} here to complete it, no credential needed; shown once (null on an idempotent repeat)."),
});

export const waitpointsSchemas = {
  Waitpoint: waitpoint,
  CreatedWaitpoint: createdWaitpoint,
  CallbackAccepted: Joi.object({ ResultCode: Joi.number().valid(0).required(), ResultDesc: Joi.string().required() }),
} satisfies Record<string, Joi.Schema>;
