// The request schemas of the job endpoints, shared with the OpenAPI job types (openapi/job-types.ts), which
// build one documented variant per built-in type from `jobInput`.
import Joi from "joi";
import {
  BATCH_LIMIT,
  BULK_IDS_LIMIT,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  jobFilterFields,
  jobFilterSchema,
  MAX_RETRIES_LIMIT,
  PRIORITY_DEFAULT,
  PRIORITY_MAX,
  PRIORITY_MIN,
  TYPE_NAME_PATTERN,
} from "@conveyor/contracts";
import type { JobInput, JobListQuery } from "../services/jobs";
import type { BulkInput } from "../services/steering";

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
  ...jobFilterFields,
  limit: Joi.number().integer().min(1).max(1000),
  cursor: Joi.string().max(128),
});

export const bulkInput = Joi.object<BulkInput>({
  action: Joi.string().valid("cancel", "replay").required().description("cancel: pending and processing jobs; replay: done, failed and cancelled ones."),
  filter: jobFilterSchema.description("The GET /jobs filters (the same names and values); `{}` matches every job."),
  ids: Joi.array().items(Joi.string().guid()).min(1).max(BULK_IDS_LIMIT).description(`Up to ${BULK_IDS_LIMIT} job ids.`),
})
  .xor("filter", "ids")
  .messages({ "object.missing": "needs a filter or ids", "object.xor": "takes a filter or ids, not both" });

export const idempotencyKey = Joi.string()
  .min(1)
  .max(IDEMPOTENCY_KEY_MAX_LENGTH)
  .pattern(/^[\x21-\x7e]+$/, "visible ASCII characters");
