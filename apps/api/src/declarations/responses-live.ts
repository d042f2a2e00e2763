// Response bodies of progress and live results (docs/reference/events.md#progress-and-live-results), spread into responseSchemas.
import Joi from "joi";
import { OUTPUT_MAX_BYTES } from "@conveyor/contracts";
import { id, timestamp } from "./responses-fields";

/** A job's progress as its handler last reported it (ctx.progress), or null. */
export const jobProgress = () =>
  Joi.object({
    fraction: Joi.number().min(0).max(1).required().description("How far the job is, from 0 to 1."),
    message: Joi.string().allow(null).required().description("What it is doing, or null."),
    at: timestamp().required().description("When the handler reported it."),
  })
    .allow(null)
    .description("What its handler last reported of its progress (ctx.progress), or null; job.progress events carry each change.");

export const liveSchemas = {
  JobOutput: Joi.object({
    job_id: id().required(),
    output: Joi.string()
      .allow("")
      .required()
      .description(`Everything the job's handler wrote with ctx.output, in order; cut at ${OUTPUT_MAX_BYTES} bytes with a marker.`),
    bytes: Joi.number().integer().min(0).required().description("Its length in bytes (UTF-8)."),
  }),
  PublicToken: Joi.object({
    id: id().required().description("The token's id, for DELETE /jobs/{id}/public-tokens/{token_id}."),
    job_id: id().required(),
    token: Joi.string()
      .pattern(/^cvpt_/)
      .required()
      .description("The token (shown only here). Send it as `Authorization: Bearer …` or `?token=` on GET /jobs/{id}, /output and /events."),
    expires_at: timestamp().required(),
    created_at: timestamp().required(),
  }),
};
