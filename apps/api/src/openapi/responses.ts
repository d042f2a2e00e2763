// Response bodies, in joi like the request bodies, so one converter documents both and the OpenAPI test can
// check real responses against what the document promises (joi refuses unknown keys: a new field fails it).
import Joi from "joi";
import {
  EVENT_TYPES,
  GRAPH_NODES_LIMIT,
  JOB_STATUSES,
  ON_DEPENDENCY_FAILURE,
  RATE_LIMIT_PERIODS,
  ROLES,
  WAITING_REASONS,
  WAITPOINT_STATUSES,
  WEBHOOK_DELIVERY_OUTCOMES,
  WEBHOOK_DELIVERY_TRIGGERS,
  WEBHOOK_EVENT_CHOICES,
  WEBHOOK_SECRET_PATTERN,
  WEBHOOK_TEST_EVENT_TYPE,
} from "@conveyor/contracts";
import { ERROR_STATUS } from "../http/errors";
import { auditSsoSchemas } from "./responses-audit-sso";
import { jobProgress, liveSchemas } from "./responses-live";
import { viewSchemas } from "./responses-views";

const id = () => Joi.string().guid().description("UUID v7.");
const timestamp = () => Joi.string().isoDate().description("ISO 8601 UTC with milliseconds and Z.");
const email = () => Joi.string().email({ tlds: { allow: false } });
const role = () => Joi.string().valid(...ROLES);
const jobStatus = () => Joi.string().valid(...JOB_STATUSES);
const anyObject = () => Joi.object().unknown(true);

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

const period = () => Joi.string().valid(...Object.keys(RATE_LIMIT_PERIODS));

const webhookEndpoint = Joi.object({
  id: id().required(),
  url: Joi.string().required(),
  description: Joi.string().allow(null, "").required(),
  events: Joi.array()
    .items(Joi.string().valid(...WEBHOOK_EVENT_CHOICES))
    .required(),
  created_at: timestamp().required(),
  previous_secret_expires_at: timestamp()
    .allow(null)
    .required()
    .description("Until then, deliveries are also signed with the secret before the last rotation."),
  failing_since: timestamp().allow(null).required().description("When the current run of failed deliveries began, or null."),
  disabled_at: timestamp().allow(null).required().description("When deliveries stopped because they had failed for 3 days, or null."),
  disabled_reason: Joi.string().allow(null).required().description("Why the endpoint was disabled, or null."),
});

const user = Joi.object({ id: id().required(), email: email().required() });
const userWithRole = user.keys({ role: role().required() });
const org = Joi.object({ id: id().required(), name: Joi.string().required() });
const count = () => Joi.number().integer().min(0);
const jobCounts = Joi.object({ created: count().required(), done: count().required(), failed: count().required(), cancelled: count().required() });

/** Every JSON response body, by its component name in the document. */
/** A waitpoint (SPEC §20). */
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
const waitpointNode = Joi.object({
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

export const responseSchemas = {
  Error: Joi.object({
    error: Joi.object({
      code: Joi.string()
        .valid(...Object.keys(ERROR_STATUS))
        .required(),
      message: Joi.string().required().description("One sentence for people; never a stack trace."),
      details: Joi.array()
        .items(Joi.object({ path: Joi.string().required(), message: Joi.string().required() }))
        .description("Which fields were wrong, e.g. payload.to."),
    }).required(),
  }).description("The body of every refusal (SPEC §2)."),
  JobAccepted: Joi.object({
    id: id().required(),
    status: jobStatus().required(),
    deduplicated: Joi.boolean().valid(true).description("Present when a dedupe key answered an existing job and nothing was created."),
    debounced: Joi.boolean().valid(true).description("Present when this request replaced a waiting debounced job."),
    ref: Joi.string().description("POST /jobs/batch: the item's ref, when it had one."),
  }),
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
    depends_on: Joi.array().items(id()).required().description("The jobs this one waits for (SPEC §15); empty when none."),
    dependents: Joi.array().items(id()).required().description("The jobs waiting for this one; empty when none."),
    on_dependency_failure: Joi.string()
      .valid(...ON_DEPENDENCY_FAILURE)
      .required()
      .description("cancel: a failed or cancelled dependency cancels it (dependency_failed); run: it runs anyway."),
    replayed_as: Joi.array().items(id()).required().description("Its replays (POST /jobs/{id}/replay, bulk replays), oldest first; empty when none."),
    steps: Joi.array().items(jobStep).required().description("Its durable steps, sleeps and waits (SPEC §20), in the order they began; empty when none."),
    payload: anyObject().required(),
    result: anyObject().allow(null).required().description("What the handler returned, or null."),
    error: Joi.string().allow(null).required().description("The last error message, or null."),
  }),
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
  JobAttempt: Joi.object({
    attempt: Joi.number()
      .integer()
      .min(1)
      .required()
      .description("Its number, as the log's lines give it; an interrupted attempt and its take-over share one."),
    outcome: Joi.string()
      .valid("running", "succeeded", "failed", "retried", "released", "interrupted", "cancelled")
      .required()
      .description(
        "retried: it failed and another attempt followed or is due; released: a worker shutting down gave the job back without using a retry; interrupted: its worker vanished (crash, kill, lost lock) and another took the job over.",
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
  }),
  JobLogEntry: Joi.object({
    attempt: Joi.number().integer().min(1).required(),
    message: Joi.string().allow("").required(),
    level: Joi.string().valid("info", "warn", "error").required(),
    timestamp: timestamp().required(),
  }),
  SignupResult: Joi.object({
    token: Joi.string().required(),
    user: user.keys({ role: Joi.string().valid("owner").required() }).required(),
    org: org.required(),
  }),
  LoginResult: Joi.object({
    token: Joi.string().required().description("A JWT scoped to org_id, or to the user's oldest membership."),
    user: userWithRole.required(),
    orgs: Joi.array()
      .items(org.keys({ role: role().required() }))
      .required(),
  }),
  Me: Joi.object({ user: user.required(), org: org.required(), role: role().required() }),
  ApiKey: Joi.object({
    id: id().required(),
    name: Joi.string().required(),
    prefix: Joi.string().required().description("The key's first 8 characters, to recognise it."),
    created_by: id().required().description("The id of the person who created it."),
    created_by_email: email().required().description("Their e-mail address."),
    created_at: timestamp().required(),
    last_used_at: timestamp().allow(null).required(),
  }),
  CreatedApiKey: Joi.object({
    id: id().required(),
    name: Joi.string().required(),
    prefix: Joi.string().required(),
    key: Joi.string()
      .pattern(/^cvk_[0-9A-Za-z]+$/)
      .required()
      .description("The key itself: shown only in this response."),
    created_at: timestamp().required(),
  }),
  Member: Joi.object({ id: id().required(), email: email().required(), role: role().required(), joined_at: timestamp().required() }),
  Invite: Joi.object({
    invite_url: Joi.string().uri().required().description("PUBLIC_URL/accept-invite?token=…, single use, for the invitee."),
    email: email().required(),
    expires_at: timestamp().required(),
  }),
  InviteInfo: Joi.object({
    email: email().required(),
    org_name: Joi.string().required(),
    role: role().required().description("The role the invite offers."),
    expires_at: timestamp().required(),
  }),
  AcceptedInvite: Joi.object({
    token: Joi.string().required(),
    user: userWithRole.required(),
    org: org.required().description("The organization joined (the token's scope)."),
  }),
  Session: Joi.object({
    user: user.required(),
    org: org.required().description("The organization the session acts in."),
    role: role().required().description("The user's role there, read on every request."),
    orgs: Joi.array()
      .items(org.keys({ role: role().required() }))
      .required()
      .description("Every organization of the user, oldest membership first: what POST /auth/session/org can switch to."),
    csrf_token: Joi.string()
      .required()
      .description("Send it as X-CSRF-Token with every POST, PATCH, PUT and DELETE made with the session cookie. It is not the session token."),
  }),
  PendingInvite: Joi.object({
    id: id().required(),
    email: email().required(),
    role: role().required(),
    expires_at: timestamp().required(),
    invited_by: id().required().description("The user id of the member who sent it."),
    created_at: timestamp().required(),
  }),
  Quotas: Joi.object({
    quotas: Joi.array()
      .items(
        Joi.object({
          name: Joi.string().valid("jobs_per_day", "jobs_per_month", "pending_max", "payload_bytes_max").required(),
          limit: Joi.number().integer().min(1).allow(null).required().description("null: unlimited."),
          used: Joi.number().integer().min(0).required().description("What is used now (0 when the quota is not in force: not counted)."),
          resets_at: timestamp().allow(null).required().description("When a period quota starts over (the next UTC day or month); null for the others."),
        }),
      )
      .length(4)
      .required(),
  }),
  UsageRow: Joi.object({
    day: Joi.string()
      .pattern(/^\d{4}-\d{2}-\d{2}$/)
      .description("The UTC day (group_by=day)."),
    type: Joi.string().description("The job type (group_by=type)."),
    jobs_created: Joi.number().integer().min(0).required(),
    attempts_started: Joi.number().integer().min(0).required(),
    attempt_seconds: Joi.number().min(0).required().description("Seconds from each attempt's start to its end (or its takeover), to the millisecond."),
    webhook_deliveries: Joi.number().integer().min(0).required().description("Delivery attempts of webhook events, each POST counted."),
    payload_bytes: Joi.number().integer().min(0).required().description("Bytes of the payloads (as JSON text) of the jobs created."),
  }).xor("day", "type"),
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
  Health: Joi.object({ status: Joi.string().valid("ok").required() }),
  Ready: Joi.object({
    status: Joi.string().valid("ready").required(),
    checks: Joi.object({
      postgres: Joi.string().valid("ok").required(),
      redis: Joi.string().valid("ok").required(),
      redis_maxmemory_policy: Joi.string().allow(null).required(),
    }).required(),
  }),
  Waitpoint: waitpoint,
  CreatedWaitpoint: waitpoint.keys({
    complete_url: Joi.string()
      .uri()
      .allow(null)
      .required()
      .description("POST {data} here to complete it, no credential needed; shown once (null on an idempotent repeat)."),
  }),
  CallbackAccepted: Joi.object({ ResultCode: Joi.number().valid(0).required(), ResultDesc: Joi.string().required() }),
  Event: Joi.object({
    id: Joi.number().integer().min(1).required().description("Grows within the organization; send it back as Last-Event-ID to resume."),
    type: Joi.string()
      .valid(...EVENT_TYPES)
      .required(),
    time: timestamp().required(),
    job_id: id().required(),
    data: anyObject()
      .required()
      .description(
        "The job as GET /jobs/{id} shows it, as it was after this change, without its payload, `waiting_for` (a live answer) and its place in a graph (`depends_on`, `dependents`, `on_dependency_failure`): read those from GET /jobs/{id}.",
      ),
  }).description("What each server-sent event's `data:` line holds, and the `data` of each webhook delivery's CloudEvent."),
  WebhookEndpoint: webhookEndpoint,
  CreatedWebhookEndpoint: webhookEndpoint.keys({
    secret: Joi.string()
      .pattern(WEBHOOK_SECRET_PATTERN)
      .required()
      .description("The signing secret, shown only in this response (Standard Webhooks form: whsec_ and base64)."),
  }),
  WebhookDelivery: Joi.object({
    id: Joi.number().integer().min(1).required().description("The attempt's id; newer attempts have larger ids."),
    event_id: Joi.number().integer().min(1).allow(null).required().description("The event delivered (what POST …/redeliver takes); null for a test event."),
    event_type: Joi.string()
      .valid(...EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE)
      .required(),
    job_id: id().allow(null).required().description("The job the event is about (the CloudEvent's `subject`); null for a test event."),
    trigger: Joi.string()
      .valid(...WEBHOOK_DELIVERY_TRIGGERS)
      .required()
      .description("What sent it: `event` (the event happened), `redelivery` or `test` (a person asked)."),
    attempt: Joi.number().integer().min(1).required(),
    status_code: Joi.number()
      .integer()
      .allow(null)
      .required()
      .description("The receiver's HTTP status, or null when none came (network error, timeout, refused address)."),
    duration_ms: Joi.number().integer().min(0).required(),
    error: Joi.string().allow(null).required().description("Why the attempt failed (the host is named, never the path), or null."),
    response_body: Joi.string().allow(null, "").required().description("The first KiB of the receiver's answer, as UTF-8 text; null when no answer came."),
    response_truncated: Joi.boolean().required().description("The answer went on past `response_body`."),
    at: timestamp().required(),
    outcome: Joi.string()
      .valid(...WEBHOOK_DELIVERY_OUTCOMES)
      .required()
      .description("`succeeded`: the receiver took it; `pending`: it failed and the delivery tries again; `failed`: it failed and no attempt follows."),
  }),
  QueuedWebhookDelivery: Joi.object({
    endpoint_id: id().required(),
    event_id: Joi.number().integer().min(1).allow(null).required().description("The event queued; null for a test event."),
    event_type: Joi.string()
      .valid(...EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE)
      .required(),
    trigger: Joi.string().valid("redelivery", "test").required(),
  }),
  ...auditSsoSchemas,
  ...liveSchemas,
  ...viewSchemas,
} satisfies Record<string, Joi.ObjectSchema>;

export type ResponseSchemaName = keyof typeof responseSchemas;
