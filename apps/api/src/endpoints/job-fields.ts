// The request schemas of the job endpoints, shared with the OpenAPI job types (openapi/job-types.ts), which
// build one documented variant per built-in type from `jobInput`.
import Joi from "joi";
import { BATCH_LIMIT, IDEMPOTENCY_KEY_MAX_LENGTH, JOB_STATUSES, MAX_RETRIES_LIMIT, TYPE_NAME_PATTERN } from "@conveyor/contracts";
import type { JobInput, JobListQuery } from "../services/jobs";

export const jobInput = Joi.object<JobInput>({
  type: Joi.string().pattern(TYPE_NAME_PATTERN, "job type name").required(),
  payload: Joi.object().unknown(true).required(),
  max_retries: Joi.number().integer().min(0).max(MAX_RETRIES_LIMIT).default(0),
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
