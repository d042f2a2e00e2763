// Response bodies of jobs (docs/reference/lifecycle.md#lifecycle, docs/reference/lifecycle.md#built-in-handlers, docs/reference/operations.md#configuration, docs/reference/lifecycle.md#steering, docs/reference/lifecycle.md#state-machine, docs/reference/lifecycle.md#dependencies): a job as listed and in detail, its acceptance, attempts, log,
// graph and failure groups, the Retries view, bulk actions and the overview's counts. Spread into responseSchemas.
import Joi from "joi";
import { GRAPH_NODES_LIMIT, ON_DEPENDENCY_FAILURE, WAITING_REASONS } from "@conveyor/contracts";
import { anyObject, count, id, jobStatus, timestamp } from "./responses-fields";
import { jobProgress } from "./responses-live";
import { createdWaitpoint, waitpointNode } from "./responses-waitpoints";

const jobListItem = Joi.object({
  id: id().required(),
  type: Joi.string().required(),
  status: jobStatus().required(),
  retries: Joi.number().integer().min(0).required().description("Retries consumed so far (attempt n runs with retries = n − 1)."),
  max_retries: Joi.number().integer().min(0).required(),
  created_at: timestamp().required(),
  updated_at: timestamp().required(),
  run_at: timestamp().allow(null).required().description("When it is (or its next attempt is) due; null: as soon as it was created."),
  priority: Joi.number().integer().min(1).max(10).required().description("1 to 10; among due jobs of one type, higher runs first."),
  replay_of: id().allow(null).required().description("The job this one replays, or null."),
  schedule_id: id().allow(null).required().description("The schedule that made this job, or null."),
  cancel_requested_at: timestamp().allow(null).required().description("When a cancellation was asked for while the job was processing, or null."),
  concurrency_key: Joi.string().allow(null).required().description("Its concurrency key, or null."),
  concurrency_limit: Joi.number().integer().allow(null).required().description("How many jobs with the key may run at once, or null."),
  rate_limit: Joi.string().allow(null).required().description("The rate limit it starts under, or null."),
  timeout_ms: Joi.number().integer().allow(null).required().description("Its own attempt timeout, or null (the worker's default)."),
  dedupe_key: Joi.string().allow(null).required().description("The dedupe key it was created with, or null."),
  debounce_key: Joi.string().allow(null).required().description("The debounce key it was created with, or null."),
  waiting_for: Joi.string()
    .valid(...WAITING_REASONS)
    .allow(null)
    .required()
    .description(
      "Why a pending job has not started (null otherwise): dependencies, run_at, retry, queue_paused, rate_limit, concurrency_key, org_concurrency, no_worker (no running worker serves its type) or capacity (waiting for a free worker slot).",
    ),
  started_at: timestamp()
    .allow(null)
    .required()
    .description("When its last attempt started; null if none has (or it ran before this was recorded: see GET /jobs/{id}/attempts)."),
  finished_at: timestamp().allow(null).required().description("When it reached done, failed or cancelled; null while it is live."),
  progress: jobProgress().required(),
  matched: Joi.string().description(
    "With `q` only: what the search matched — `id`, `short_id` (the id's last 8 characters), or `payload.` and the path of the value (`payload.customer.name`, `payload.items.0.sku`); `payload` alone when the path cannot be told.",
  ),
  error: Joi.string().allow(null).description("With `include=error` only: the job's last error message (its first 300 characters), or null."),
});

const jobStep = Joi.object({
  name: Joi.string().required(),
  kind: Joi.string().valid("step", "sleep", "wait").required(),
  status: Joi.string().valid("succeeded", "sleeping", "waiting", "completed", "failed").required(),
  attempt: Joi.number().integer().min(1).required(),
  started_at: timestamp().required(),
  finished_at: timestamp().allow(null).required(),
  wake_at: timestamp().allow(null).required().description("A sleep's end."),
  waitpoint_id: id().allow(null).required().description("A wait's waitpoint."),
});

const jobCounts = Joi.object({ created: count().required(), done: count().required(), failed: count().required(), cancelled: count().required() });

/** A job a creating request made or found: POST /jobs, the jobs of POST /jobs/batch, a replay. */
const jobAccepted = Joi.object({
  id: id().required(),
  status: jobStatus().required(),
  deduplicated: Joi.boolean().valid(true).description("Present when a dedupe key answered an existing job and nothing was created."),
  debounced: Joi.boolean().valid(true).description("Present when this request replaced a waiting debounced job."),
  ref: Joi.string().description("POST /jobs/batch: the item's ref, when it had one."),
});

export const jobsSchemas = {
  JobAccepted: jobAccepted,
  BatchItemAccepted: Joi.alternatives()
    .try(
      jobAccepted,
      createdWaitpoint.keys({
        kind: Joi.string().valid("waitpoint").required(),
        ref: Joi.string().required().description("Its ref in the batch."),
        complete_url: Joi.string().uri().required().description("POST {data} here to complete it, no credential needed; shown only in this answer."),
      }),
    )
    .description("A job of the batch (in request order), or a waitpoint it made (after the jobs, with kind: waitpoint)."),
  BulkResult: Joi.object({
    action: Joi.string().valid("cancel", "replay").required(),
    matched: Joi.number()
      .integer()
      .min(0)
      .required()
      .description(
        "With ids: how many name a job of your organization, whatever its status. With a filter: how many matching jobs the action still applied to (cancel: pending, or processing without a cancellation request; replay: done, failed or cancelled without a replay yet) this call took, oldest first, at most 10,000.",
      ),
    affected: Joi.number().integer().min(0).required().description("Jobs this call cancelled or asked to stop (cancel), or replays it created (replay)."),
    has_more: Joi.boolean().required().description("With a filter: more such jobs remain; call again with the same body for the next ones."),
  }),
  JobListItem: jobListItem,
  // Issue 38: GET /jobs/retries.
  RetryingJobs: Joi.object({
    items: Joi.array()
      .items(
        jobListItem.keys({
          error: Joi.string().allow(null).required().description("The last attempt's error (its first 300 characters)."),
          next_attempt_at: timestamp().required().description("When the next attempt is due."),
        }),
      )
      .required(),
    has_more: Joi.boolean().required().description("More jobs wait to retry than `limit`."),
  }),
  FailureGroups: Joi.object({
    groups: Joi.array()
      .items(
        Joi.object({
          failure_group: Joi.string()
            .pattern(/^[0-9a-f]{16}$/)
            .required()
            .description("The group's id: the failure_group filter of GET /jobs and POST /jobs/bulk selects its jobs."),
          type: Joi.string().required(),
          message: Joi.string()
            .allow("")
            .required()
            .description('The error normalised: numbers, ids, UUIDs, quoted values and e-mail addresses replaced by <n>, <id>, "<value>" and <email>.'),
          count: count().required().description("Failed jobs in the group (matching the filters)."),
          retrying: count()
            .required()
            .description(
              "Jobs of the group not finished yet (matching the filters): waiting to retry after such an error, or retrying now. A bulk cancel by the group takes these.",
            ),
          first_seen_at: timestamp().allow(null).required().description("When the group's first failure happened."),
          last_seen_at: timestamp().allow(null).required().description("When its latest failure happened."),
          sample_job_id: id().required().description("The job of its latest failure."),
          sample_error: Joi.string().allow("").required().description("That job's error as it is (its first 1,000 characters)."),
        }),
      )
      .required()
      .description("Most recently seen first."),
    has_more: Joi.boolean().required().description("More groups match than `limit`: narrow the filters or raise the limit."),
  }),
  JobGraph: Joi.object({
    nodes: Joi.array()
      .items(jobListItem, waitpointNode)
      .required()
      .description(`The jobs of the graph, the job asked for first, then the nearest; at most ${GRAPH_NODES_LIMIT}.`),
    edges: Joi.array()
      .items(Joi.object({ from: id().required().description("The dependency."), to: id().required().description("The job that waits for it.") }))
      .required(),
    truncated: Joi.boolean().required().description(`The graph has more than ${GRAPH_NODES_LIMIT} jobs; the farthest are left out.`),
  }),
  Job: jobListItem.keys({
    depends_on: Joi.array().items(id()).required().description("The jobs this one waits for (docs/reference/lifecycle.md#dependencies); empty when none."),
    dependents: Joi.array().items(id()).required().description("The jobs waiting for this one; empty when none."),
    on_dependency_failure: Joi.string()
      .valid(...ON_DEPENDENCY_FAILURE)
      .required()
      .description("cancel: a failed or cancelled dependency cancels it (dependency_failed); run: it runs anyway."),
    replayed_as: Joi.array().items(id()).required().description("Its replays (POST /jobs/{id}/replay, bulk replays), oldest first; empty when none."),
    steps: Joi.array()
      .items(jobStep)
      .required()
      .description("Its durable steps, sleeps and waits (docs/reference/lifecycle.md#waitpoints-and-durable-steps), in the order they began; empty when none."),
    payload: anyObject().required(),
    result: anyObject().allow(null).required().description("What the handler returned, or null."),
    error: Joi.string().allow(null).required().description("The last error message, or null."),
  }),
  JobAttempt: Joi.object({
    attempt: Joi.number()
      .integer()
      .min(1)
      .required()
      .description("Its number, as the log's lines give it; an interrupted attempt and its take-over share one."),
    outcome: Joi.string()
      .valid("running", "succeeded", "failed", "retried", "released", "interrupted", "cancelled", "suspended")
      .required()
      .description(
        "retried: it failed and another attempt followed or is due; released: a worker shutting down gave the job back without using a retry; interrupted: its worker vanished (crash, kill, lost lock) and another took the job over; suspended: the handler slept or waited for a waitpoint (ctx.sleep, ctx.waitFor), and the same attempt resumes after it (the next entry, with the same number and `resumed` true).",
      ),
    queued_at: timestamp()
      .allow(null)
      .required()
      .description(
        "When it became due: the job's due time (no earlier than its last dependency's finish), or after a failure the retry's; null for the take-over of an interrupted attempt.",
      ),
    started_at: timestamp().required(),
    finished_at: timestamp().allow(null).required().description("Null while it runs, and for an interrupted attempt (its end is not known)."),
    wait_ms: Joi.number().integer().min(0).allow(null).required().description("From queued_at to started_at."),
    duration_ms: Joi.number().integer().min(0).allow(null).required().description("From started_at to finished_at."),
    error: Joi.string().allow(null).required().description("The error it failed with (outcome failed or retried), else null."),
    resumed: Joi.boolean()
      .required()
      .description("The attempt's part after a sleep or a wait (the entry before it is suspended): its queued_at is when the sleep or wait ended."),
    suspension: Joi.object({
      kind: Joi.string().valid("sleep", "wait").required(),
      step: Joi.string().required().description("The step's name (ctx.sleep's or ctx.waitFor's first argument)."),
    })
      .allow(null)
      .required()
      .description("For a suspended entry: what the attempt paused for; else null."),
  }),
  JobLogEntry: Joi.object({
    attempt: Joi.number().integer().min(1).required(),
    message: Joi.string().allow("").required(),
    level: Joi.string().valid("info", "warn", "error").required(),
    timestamp: timestamp().required(),
  }),
  JobStats: Joi.object({
    window: Joi.string().valid("hour", "day").required(),
    bucket_seconds: Joi.number().integer().valid(60, 900).required().description("60 for the hour, 900 (15 minutes) for the day."),
    buckets: Joi.array()
      .items(
        jobCounts
          .keys({
            start: timestamp().required().description("The bucket's start; it runs bucket_seconds, the last one to now."),
            by_type: Joi.object().pattern(/^/, jobCounts).required().description("The same counts by job type; types without jobs in the bucket are absent."),
          })
          .description("Jobs created (created_at) and finished (finished_at: done, failed, cancelled) in the bucket."),
      )
      .required()
      .description("Oldest first, every bucket of the window (60 or 96), zeros included."),
    failure_rate: Joi.number()
      .min(0)
      .max(1)
      .allow(null)
      .required()
      .description("failed ÷ (done + failed) over the window; null when no job finished. Cancelled jobs are left out."),
    queue: Joi.object({
      pending: Joi.number()
        .integer()
        .min(0)
        .required()
        .description("Every pending job, as GET /jobs?status=pending lists them; always waiting_due + delayed (one snapshot)."),
      processing: Joi.number().integer().min(0).required(),
      waiting_due: Joi.number()
        .integer()
        .min(0)
        .required()
        .description(
          "Pending and not delayed: due and waiting for a worker slot, handed to a worker and about to start, or waiting for other jobs or a limit.",
        ),
      delayed: Joi.number().integer().min(0).required().description("Pending until a later time: run_at, a retry's wait, a debounce."),
    }).required(),
  }),
} satisfies Record<string, Joi.Schema>;
