// The worker protocol (docs/reference/lifecycle.md#your-own-workers): an organization's own workers, in any language, with an API key of the `worker`
// role — which may call nothing else, as no other credential may call these. Every call after the lease names the
// lease token; a lapsed or superseded one answers 409 lease_lost and changes nothing.
import Joi from "joi";
import { LOG_LEVELS, OUTPUT_MAX_BYTES, PROGRESS_MESSAGE_MAX_LENGTH, STEP_NAME_MAX_LENGTH, TYPE_NAME_PATTERN } from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, endpoint, idParam, type ErrorStatus } from "../declarations/endpoint";
import { notFound } from "../services/infrastructure/errors";
import {
  completeJob,
  failJob,
  heartbeat,
  releaseJob,
  stopWorker,
  leaseForWorker,
  reportOutcomes,
  recordWorkerStep,
  sleepJob,
  waitForWaitpoint,
  type FailInput,
  type HeartbeatInput,
  type LeaseInput,
  type OutcomeInput,
  type WaitForInput,
} from "../services/worker-protocol";

const JOB_ID = "019a8c52-1b77-7e01-8a3c-5d2f6e9b1a44";
const TOKEN = "lt_Yk3n0cQxW1m8s2b7Tf4rZp9Lh6Dj5Ve0";
const AT = "2026-12-06T09:30:00.000Z";
const leasedExample = {
  id: JOB_ID,
  type: "resize",
  payload: { url: "https://example.com/cat.png", width: 400 },
  attempt: 1,
  max_retries: 3,
  lease_token: TOKEN,
  lease_expires_at: AT,
  steps: [],
  dependencies: [],
};

const leaseToken = Joi.string().max(200).required().description("The token the lease answered with.");
const stepName = Joi.string().min(1).max(STEP_NAME_MAX_LENGTH);
const leaseSeconds = Joi.number().integer().min(1).max(3_600).description("How long the lease holds from now (default 30 s); heartbeat well within it.");

const workerIdField = Joi.string().guid().description("The worker process' id (a UUID it makes at start): GET /workers lists it.");

const leaseBody = Joi.object<LeaseInput>({
  types: Joi.array()
    .items(Joi.string().pattern(TYPE_NAME_PATTERN, "job type name"))
    .min(1)
    .max(100)
    .required()
    .description("Your organization's job types this worker runs."),
  max: Joi.number().integer().min(1).max(100).default(1).description("Most jobs to lease in this call (the worker's free slots)."),
  wait_seconds: Joi.number().integer().min(0).max(30).default(0).description("How long to wait for a job when none can be leased now (a long-poll)."),
  lease_seconds: leaseSeconds,
  worker_id: workerIdField,
  worker_name: Joi.string().max(200).description("A name for people (host, service)."),
  worker_version: Joi.string().max(100).description("The SDK and its language, e.g. conveyor-python/0.1.0."),
  concurrency: Joi.number().integer().min(1).max(10_000).description("Jobs it runs at once (shown in GET /workers)."),
});

const heartbeatBody = Joi.object<HeartbeatInput>({
  lease_token: leaseToken,
  lease_seconds: leaseSeconds,
  progress: Joi.object({ fraction: Joi.number().min(0).max(1).required(), message: Joi.string().max(PROGRESS_MESSAGE_MAX_LENGTH).allow(null) }).description(
    "The job's progress now (docs/reference/events.md#progress-and-live-results): job.progress events, coalesced by the caller to a few a second.",
  ),
  output: Joi.string().max(OUTPUT_MAX_BYTES).description("Text appended to the job's output (docs/reference/events.md#progress-and-live-results)."),
  logs: Joi.array()
    .items(
      Joi.object({
        level: Joi.string()
          .valid(...LOG_LEVELS)
          .required(),
        message: Joi.string().max(8_000).required(),
      }),
    )
    .max(100)
    .description("Log lines of this attempt, in order."),
});

const failBody = Joi.object<FailInput>({
  lease_token: leaseToken,
  error: Joi.string().max(8_000).allow("").required().description("What went wrong, for the job's error and log."),
  retryable: Joi.boolean().default(true).description("false: fail the job now, without spending its retries (bad input, a 4xx)."),
  retry_after_ms: Joi.number().integer().min(0).max(3_600_000).description("Retry no sooner than this (e.g. a provider's Retry-After)."),
});

const waitForBody = Joi.object<WaitForInput>({
  lease_token: leaseToken,
  name: stepName.required(),
  waitpoint_id: Joi.string().description("A waitpoint of your organization; without it, one is made (complete it with POST /waitpoints/{id}/complete)."),
  timeout_seconds: Joi.number().integer().min(60).max(2_592_000).description("For a waitpoint made here: when it expires (default 86,400)."),
});

const outcomesBody = Joi.object<{ outcomes: OutcomeInput[] }>({
  outcomes: Joi.array()
    .items(
      Joi.object<OutcomeInput>({
        job_id: Joi.string().guid().required(),
        lease_token: leaseToken,
        outcome: Joi.string().valid("complete", "fail", "release").required().description("complete (with `result`), fail (with `error`) or release."),
        result: Joi.any().description("complete: the job's result (JSON)."),
        error: Joi.string().max(8_000).allow("").description("fail: what went wrong."),
        retryable: Joi.boolean().description("fail: false fails the job now, without spending its retries."),
        retry_after_ms: Joi.number().integer().min(0).max(3_600_000).description("fail: retry no sooner than this."),
      }),
    )
    .min(1)
    .max(200)
    .required()
    .description("The reports, each as its own endpoint (complete, fail, release) takes it."),
});

const jobId = { id: idParam("job") };
const workerErrors: ErrorStatus[] = [...BODY_ERRORS, ...AUTHENTICATED_ERRORS, 403, 404, 409];

/** Ends a long-poll whose caller went away. */
function abortOnClose(res: import("express").Response): AbortSignal {
  const controller = new AbortController();
  res.on("close", () => controller.abort());
  return controller.signal;
}

export const workerProtocolEndpoints = [
  endpoint({
    method: "post",
    path: "/worker/lease",
    operationId: "leaseJobs",
    tag: "Worker protocol",
    summary: "Lease jobs (long-poll)",
    description:
      "Leases up to `max` due jobs of your types, started for this caller, as the deployment's own workers would start them (the same priority, order, " +
      "concurrency keys, rate limits, pauses and caps). With none to lease, waits up to `wait_seconds` for one, then answers []. A lease lapses at " +
      "`lease_expires_at` unless heartbeats extend it; a lapsed lease is an interruption: the job is leased again (to any of your workers) and the old token answers 409.",
    access: "worker",
    body: {
      schema: leaseBody,
      examples: { poll: { summary: "Wait up to 20 s for up to 10 resize jobs", value: { types: ["resize"], max: 10, wait_seconds: 20 } } },
    },
    responses: { 200: { description: "The jobs leased (possibly none).", json: { component: "LeasedJob", array: true, example: [leasedExample] } } },
    errors: [...BODY_ERRORS, ...AUTHENTICATED_ERRORS, 403],
    async handle({ caller, body, res }, deps) {
      return { json: await leaseForWorker({ caller, input: body, signal: abortOnClose(res) }, deps) };
    },
  }),
  endpoint({
    method: "post",
    path: "/worker/jobs/:id/heartbeat",
    operationId: "heartbeatJob",
    tag: "Worker protocol",
    summary: "Extend a lease, report progress, output and log lines",
    access: "worker",
    params: jobId,
    body: {
      schema: heartbeatBody,
      examples: { progress: { summary: "Half done", value: { lease_token: TOKEN, progress: { fraction: 0.5, message: "resized" } } } },
    },
    responses: {
      200: { description: "The lease, extended.", json: { component: "LeaseExtended", example: { lease_expires_at: AT, cancel_requested: false } } },
    },
    errors: workerErrors,
    async handle({ caller, params, body }, deps) {
      return { json: await heartbeat({ caller, id: params.id, input: body }, deps) };
    },
  }),
  endpoint({
    method: "post",
    path: "/worker/jobs/:id/complete",
    operationId: "completeJob",
    tag: "Worker protocol",
    summary: "Complete a leased job",
    access: "worker",
    params: jobId,
    body: {
      schema: Joi.object<{ lease_token: string; result?: unknown }>({ lease_token: leaseToken, result: Joi.any().description("The job's result (JSON).") }),
      examples: { done: { summary: "Done", value: { lease_token: TOKEN, result: { width: 400, height: 300 } } } },
    },
    responses: { 200: { description: "The job's status now.", json: { component: "JobOutcome", example: { status: "done" } } } },
    errors: workerErrors,
    async handle({ caller, params, body }, deps) {
      return { json: await completeJob({ caller, id: params.id, input: body }, deps) };
    },
  }),
  endpoint({
    method: "post",
    path: "/worker/jobs/:id/fail",
    operationId: "failJob",
    tag: "Worker protocol",
    summary: "Fail a leased job's attempt",
    description:
      "The job retries (pending, after the backoff) while it has retries left and the failure is retryable; otherwise it fails. A job someone asked to cancel ends cancelled.",
    access: "worker",
    params: jobId,
    body: { schema: failBody, examples: { broke: { summary: "A retryable failure", value: { lease_token: TOKEN, error: "upstream timed out" } } } },
    responses: { 200: { description: "The job's status now.", json: { component: "JobOutcome", example: { status: "pending" } } } },
    errors: workerErrors,
    async handle({ caller, params, body }, deps) {
      return { json: await failJob({ caller, id: params.id, input: body }, deps) };
    },
  }),
  endpoint({
    method: "post",
    path: "/worker/jobs/:id/release",
    operationId: "releaseJob",
    tag: "Worker protocol",
    summary: "Hand a leased job back (shutting down)",
    description:
      "Back to pending at once without spending a retry, for another worker to lease: a worker stopping on SIGTERM hands back what it has not finished.",
    access: "worker",
    params: jobId,
    body: {
      schema: Joi.object<{ lease_token: string }>({ lease_token: leaseToken }),
      examples: { release: { summary: "Hand back", value: { lease_token: TOKEN } } },
    },
    responses: { 200: { description: "The job's status now.", json: { component: "JobOutcome", example: { status: "pending" } } } },
    errors: workerErrors,
    async handle({ caller, params, body }, deps) {
      return { json: await releaseJob({ caller, id: params.id, input: body }, deps) };
    },
  }),
  endpoint({
    method: "post",
    path: "/worker/stop",
    operationId: "stopWorker",
    tag: "Worker protocol",
    summary: "Say this worker stopped",
    description:
      "A worker stopping says so when it stops leasing (its long-poll waiting on this API process answers [] at once, and its lease calls for a minute lease nothing) " +
      "and again once it has handed back what it ran: GET /workers no longer lists it and its types no longer count it as serving them (a job of a type nobody serves waits for `no_worker`). A worker that stops without it is counted until it misses three lease calls.",
    access: "worker",
    body: {
      schema: Joi.object<{ worker_id?: string }>({ worker_id: workerIdField }),
      examples: { stop: { summary: "Stopped", value: { worker_id: "4f0c7d8e-2a51-4c3e-9b7a-1d2e3f405162" } } },
    },
    responses: { 204: { description: "Forgotten (also when it was not listed)." } },
    errors: [...BODY_ERRORS, ...AUTHENTICATED_ERRORS, 403],
    async handle({ caller, body }, deps) {
      await stopWorker({ caller, workerId: body.worker_id }, deps);
      return { status: 204 };
    },
  }),
  endpoint({
    method: "post",
    path: "/worker/outcomes",
    operationId: "reportOutcomes",
    tag: "Worker protocol",
    summary: "Report several leased jobs' outcomes at once",
    description:
      "Complete, fail or release up to 200 leased jobs in one call, each as its own endpoint would, written together. Each report answers on its own: " +
      "`lease_lost: true` (and status null) where its lease is not live, as that endpoint's 409 would say; the others are recorded regardless.",
    access: "worker",
    body: {
      schema: outcomesBody,
      examples: {
        batch: {
          summary: "Two done, one failed",
          value: {
            outcomes: [
              { job_id: JOB_ID, lease_token: TOKEN, outcome: "complete", result: { width: 400 } },
              { job_id: "019a8c52-1b77-7e01-8a3c-5d2f6e9b1a45", lease_token: TOKEN, outcome: "fail", error: "upstream timed out" },
            ],
          },
        },
      },
    },
    responses: {
      200: {
        description: "Each report's answer, in order.",
        json: { component: "OutcomeResults", example: { results: [{ job_id: JOB_ID, status: "done", lease_lost: false }] } },
      },
    },
    errors: [...BODY_ERRORS, ...AUTHENTICATED_ERRORS, 403],
    async handle({ caller, body }, deps) {
      return { json: await reportOutcomes({ caller, input: body }, deps) };
    },
  }),
  endpoint({
    method: "post",
    path: "/worker/jobs/:id/steps/:name",
    operationId: "recordStep",
    tag: "Worker protocol",
    summary: "Checkpoint a durable step's result",
    description:
      "Stored once per job: a later attempt finds it in the lease's `steps` and does not run the step again. A repeat answers the stored result (recorded: false).",
    access: "worker",
    params: { ...jobId, name: { description: "The step's name, unique per job.", schema: { type: "string", minLength: 1, maxLength: STEP_NAME_MAX_LENGTH } } },
    body: {
      schema: Joi.object<{ lease_token: string; result?: unknown }>({
        lease_token: leaseToken,
        result: Joi.any().description("The step's result (JSON, ≤ 256 KiB)."),
      }),
      examples: { step: { summary: "A step's result", value: { lease_token: TOKEN, result: { uploaded: "s3://bucket/cat.png" } } } },
    },
    responses: {
      200: {
        description: "The step as stored.",
        json: { component: "StepRecorded", example: { name: "upload", recorded: true, result: { uploaded: "s3://bucket/cat.png" } } },
      },
    },
    errors: workerErrors,
    async handle({ caller, params, body }, deps) {
      if (stepName.validate(params.name).error) throw notFound("Step");
      return { json: await recordWorkerStep({ caller, id: params.id, name: params.name, input: body }, deps) };
    },
  }),
  endpoint({
    method: "post",
    path: "/worker/jobs/:id/sleep",
    operationId: "sleepJob",
    tag: "Worker protocol",
    summary: "End the attempt until a time (a durable sleep)",
    description:
      "suspended: the attempt is over without spending a retry, and the job is leased again when the time comes (replaying the same name answers ended).",
    access: "worker",
    params: jobId,
    body: {
      schema: Joi.object<{ lease_token: string; name: string; duration_ms: number }>({
        lease_token: leaseToken,
        name: stepName.required(),
        duration_ms: Joi.number().integer().min(0).max(2_592_000_000).required(),
      }),
      examples: { sleep: { summary: "An hour", value: { lease_token: TOKEN, name: "cool-down", duration_ms: 3_600_000 } } },
    },
    responses: { 200: { description: "What happened.", json: { component: "WaitOutcome", example: { outcome: "suspended", wake_at: AT } } } },
    errors: workerErrors,
    async handle({ caller, params, body }, deps) {
      return { json: await sleepJob({ caller, id: params.id, input: body }, deps) };
    },
  }),
  endpoint({
    method: "post",
    path: "/worker/jobs/:id/wait-for",
    operationId: "waitForWaitpoint",
    tag: "Worker protocol",
    summary: "End the attempt until a waitpoint ends",
    description:
      "suspended: the attempt is over without spending a retry; the job is leased again once the waitpoint completes, expires or is cancelled. " +
      "ended: it had already ended (a replay): its status and data are in the answer.",
    access: "worker",
    params: jobId,
    body: {
      schema: waitForBody,
      examples: { approval: { summary: "Wait for an approval", value: { lease_token: TOKEN, name: "approval", timeout_seconds: 3_600 } } },
    },
    responses: {
      200: {
        description: "What happened.",
        json: { component: "WaitOutcome", example: { outcome: "suspended", waitpoint_id: "019a8c52-1c02-7a9e-b1f0-2c7d8e4a6b10" } },
      },
    },
    errors: workerErrors,
    async handle({ caller, params, body }, deps) {
      return { json: await waitForWaitpoint({ caller, id: params.id, input: body }, deps) };
    },
  }),
];
