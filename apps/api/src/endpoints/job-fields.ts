// The request schemas of the job endpoints, shared with the OpenAPI job types (openapi/job-types.ts), which
// build one documented variant per built-in type from `jobInput`.
import Joi from "joi";
import {
  BATCH_LIMIT,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  JOB_STATUSES,
  MAX_RETRIES_LIMIT,
  PRIORITY_DEFAULT,
  PRIORITY_MAX,
  PRIORITY_MIN,
  TYPE_NAME_PATTERN,
} from "@conveyor/contracts";
import type { JobInput, JobListQuery } from "../services/jobs";

export const jobInput = Joi.object<JobInput>({
  type: Joi.string().pattern(TYPE_NAME_PATTERN, "job type name").required(),
  payload: Joi.object().unknown(true).required(),
  max_retries: Joi.number().integer().min(0).max(MAX_RETRIES_LIMIT).default(0),
  run_at: Joi.string()
    .isoDate()
    .description("When to run it (ISO 8601), at most 365 days ahead; a past time means now. Default: now.")
    .messages({ "string.isoDate": "must be an ISO 8601 date-time" }),
  priority: Joi.number()
    .integer()
    .min(PRIORITY_MIN)
    .max(PRIORITY_MAX)
    .default(PRIORITY_DEFAULT)
    .description("1 to 10; among due jobs of one type, higher runs first."),
});

export const batchInput = Joi.object<{ jobs: JobInput[] }>({
  jobs: Joi.array().items(jobInput).min(1).max(BATCH_LIMIT).required(),
});

export const listQuery = Joi.object<JobListQuery>({
  status: Joi.string()
    .valid(...JOB_STATUSES)
    .messages({ "any.only": `must be one of ${JOB_STATUSES.join(", ")}` }),
  limit: Joi.number().integer().min(1).max(1000),
  cursor: Joi.string().max(64),
});

export const idempotencyKey = Joi.string()
  .min(1)
  .max(IDEMPOTENCY_KEY_MAX_LENGTH)
  .pattern(/^[\x21-\x7e]+$/, "visible ASCII characters");
