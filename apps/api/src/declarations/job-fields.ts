// The request schemas of the job endpoints, shared with the OpenAPI job types (openapi/job-types.ts), which
// build one documented variant per built-in type from `jobInput`.
import Joi from "joi";
import {
  BATCH_LIMIT,
  BULK_IDS_LIMIT,
  CONCURRENCY_LIMIT_DEFAULT,
  CONCURRENCY_LIMIT_MAX,
  CONCURRENCY_LIMIT_MIN,
  DEBOUNCE_MS_MAX,
  DEPENDS_ON_LIMIT,
  JOB_REF_PATTERN,
  ON_DEPENDENCY_FAILURE,
  DEBOUNCE_MS_MIN,
  DEDUPE_SECONDS_DEFAULT,
  DEDUPE_SECONDS_MAX,
  DEDUPE_SECONDS_MIN,
  FLOW_KEY_MAX_LENGTH,
  RATE_LIMIT_NAME_PATTERN,
  TIMEOUT_MS_MAX,
  TIMEOUT_MS_MIN,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  jobFilterFields,
  jobFilterSchema,
  MAX_RETRIES_LIMIT,
  PRIORITY_DEFAULT,
  PRIORITY_MAX,
  PRIORITY_MIN,
  TYPE_NAME_PATTERN,
} from "@conveyor/contracts";
import type { BatchWaitpointInput } from "../services/job-batch";
import type { JobInput } from "../services/job-input";
import type { FailureGroupsQuery, JobListQuery } from "../services/job-reads";

/** Groups GET /jobs/failures answers at most, and by default. */
export const FAILURE_GROUPS_LIMIT_MAX = 200;
export const FAILURE_GROUPS_LIMIT_DEFAULT = 50;
import type { BulkInput, ReplayInput } from "../services/steering";
import { waitpointFields } from "./waitpoint-fields";

const flowKey = () => Joi.string().min(1).max(FLOW_KEY_MAX_LENGTH);

/** A rate limit's name, as `PUT /rate-limits/{name}` defines it. */
export const rateLimitName = Joi.string().pattern(RATE_LIMIT_NAME_PATTERN, "rate limit name (1 to 100 of a-z 0-9 _ . : -)");

/** How a job runs alongside others (docs/reference/flow-control.md#flow-control): on jobs, batch items and schedule templates. */
export const runFields = {
  concurrency_key: flowKey().description(
    "At most `concurrency_limit` jobs of your organization with this key run at once, whatever their type, e.g. `phone:254712345678`.",
  ),
  concurrency_limit: Joi.number()
    .integer()
    .min(CONCURRENCY_LIMIT_MIN)
    .max(CONCURRENCY_LIMIT_MAX)
    .description(`With concurrency_key: how many may run at once (default ${CONCURRENCY_LIMIT_DEFAULT}).`),
  rate_limit: rateLimitName.description(
    "The name of one of your organization's rate limits (PUT /rate-limits/{name}): jobs naming it start at most its limit per period.",
  ),
  timeout_ms: Joi.number()
    .integer()
    .min(TIMEOUT_MS_MIN)
    .max(TIMEOUT_MS_MAX)
    .description(
      "Each attempt's timeout: past it the attempt's signal is aborted and it fails with attempt_timeout (then retries). Default: the worker's TYPE_TIMEOUTS, else 15 minutes.",
    ),
};

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
  ...runFields,
  dedupe_key: flowKey().description(
    "While a job of your organization created with this key within `dedupe_seconds` has not failed or been cancelled, the answer is that job (200, `deduplicated: true`) and nothing is created. The first job wins, whatever the payload.",
  ),
  dedupe_seconds: Joi.number()
    .integer()
    .min(DEDUPE_SECONDS_MIN)
    .max(DEDUPE_SECONDS_MAX)
    .description(`With dedupe_key: the window (default ${DEDUPE_SECONDS_DEFAULT}).`),
  debounce_key: flowKey().description(
    "A trailing debounce: the job waits `debounce_ms` before it is due; until it is handed to a worker, a new job of the same type and key replaces its payload and pushes its start back (200, same id, `debounced: true`).",
  ),
  debounce_ms: Joi.number().integer().min(DEBOUNCE_MS_MIN).max(DEBOUNCE_MS_MAX).description("With debounce_key: how long to wait for a newer job."),
  depends_on: Joi.array()
    .items(Joi.string().min(1).max(100))
    .min(1)
    .max(DEPENDS_ON_LIMIT)
    .unique()
    .description(
      `Up to ${DEPENDS_ON_LIMIT} jobs or waitpoints this one waits for: ids of your organization's jobs or waitpoints (a waitpoint counts as done when completed — its data is that dependency's result — and as failed when it expires or is cancelled) or, in POST /jobs/batch, \`ref\`s of items of the same batch. It stays pending (waiting_for: dependencies) until every one is final; all done: it becomes due (its run_at and priority still apply); one failed or cancelled: it ends cancelled with error dependency_failed, unless on_dependency_failure is run.`,
    ),
  on_dependency_failure: Joi.string()
    .valid(...ON_DEPENDENCY_FAILURE)
    .description(
      "With depends_on: cancel (default) ends the job cancelled when a dependency failed or was cancelled; run runs it once all are final, whatever they ended as.",
    ),
  ref: Joi.string()
    .pattern(JOB_REF_PATTERN, "ref (1 to 100 of A-Z a-z 0-9 _ . : -)")
    .description(
      "POST /jobs/batch only: this item's name in the batch (unique, not a UUID), for other items' depends_on. The answer repeats it beside the job's id.",
    ),
})
  .and("debounce_key", "debounce_ms")
  .with("concurrency_limit", "concurrency_key")
  .with("dedupe_seconds", "dedupe_key")
  .oxor("dedupe_key", "debounce_key")
  .oxor("debounce_key", "run_at")
  .oxor("depends_on", "debounce_key")
  .oxor("depends_on", "dedupe_key")
  .with("on_dependency_failure", "depends_on")
  .messages({
    "object.and": "debounce_key and debounce_ms go together",
    "object.with": "{{#main}} needs {{#peer}}",
    "object.oxor": "{{#peersWithLabels}} exclude each other: pick one",
  });

/** A waitpoint POST /jobs/batch makes (docs/reference/lifecycle.md#waitpoints-and-durable-steps), for the batch's jobs to name by ref in depends_on. */
const batchWaitpoint = Joi.object<BatchWaitpointInput>({
  ref: Joi.string()
    .pattern(JOB_REF_PATTERN, "ref (1 to 100 of A-Z a-z 0-9 _ . : -)")
    .required()
    .description("Its name in the batch (unique among the batch's jobs and waitpoints, not a UUID), for the jobs' depends_on."),
  ...waitpointFields,
});

export const batchInput = Joi.object<{ jobs: JobInput[]; waitpoints?: BatchWaitpointInput[] }>({
  jobs: Joi.array().items(jobInput).min(1).max(BATCH_LIMIT).required(),
  waitpoints: Joi.array()
    .items(batchWaitpoint)
    .min(1)
    .max(BATCH_LIMIT)
    .description(
      "Waitpoints to make with the jobs, in the same transaction (all or nothing), each as POST /waitpoints makes one; a job's depends_on names one by its ref. The answer lists them after the jobs, each with its complete_url.",
    ),
});

export const listQuery = Joi.object<JobListQuery>({
  ...jobFilterFields,
  limit: Joi.number().integer().min(1).max(1000),
  cursor: Joi.string().max(128),
  include: Joi.string().valid("error").messages({ "any.only": "must be error (the only field a list item can add)" }),
  order: Joi.string()
    .valid("newest", "oldest")
    .description("newest (the default): newest first; oldest: oldest first, by creation. Pages keep the order in their Link."),
});

/** GET /jobs/failures: the list's filters that make sense for failed jobs, and how many groups at most. */
export const failureGroupsQuery = Joi.object<FailureGroupsQuery>({
  type: jobFilterFields.type,
  created_after: jobFilterFields.created_after,
  created_before: jobFilterFields.created_before,
  schedule_id: jobFilterFields.schedule_id,
  limit: Joi.number().integer().min(1).max(FAILURE_GROUPS_LIMIT_MAX).default(FAILURE_GROUPS_LIMIT_DEFAULT),
});

/** POST /jobs/{id}/replay: optionally, another payload for the replay. */
export const replayInput = Joi.object<ReplayInput>({
  payload: Joi.object()
    .unknown(true)
    .description("The replay's payload instead of the original's (to fix what made it fail), validated like POST /jobs's for the job's type."),
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

/** The optional Idempotency-Key header of a create endpoint: checked with `idempotencyKey`, documented as `description` says. */
export function idempotencyKeyHeader(description: string, schema: Record<string, unknown> = { type: "string" }) {
  return { name: "Idempotency-Key", schema: idempotencyKey, document: { name: "Idempotency-Key", in: "header", required: false, description, schema } };
}
