// The job endpoints (SPEC §5, §8): a user token or an API key, any role, always scoped to the caller's organization.
import Joi from "joi";
import {
  BATCH_LIMIT,
  BULK_IDS_LIMIT,
  BULK_LIMIT,
  GRAPH_NODES_LIMIT,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  JOB_STATUSES,
  SEARCH_VALUE_MAX_LENGTH,
} from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, endpoint, idParam } from "../http/endpoint";
import { validationFailed } from "../http/errors";
import { jobExamples, payloadExamples } from "../openapi/job-types";
import { jsonSchema, ref, withProperty, type JsonSchema } from "../openapi/json-schema";
import { createJob, createJobs, getJob, getJobArtifact, getJobAttempts, getJobGraph, getJobLogs, listFailureGroups, listJobs } from "../services/jobs";
import { assertReadable } from "../services/live";
import { bulkJobs, cancelJob, replayJob } from "../services/steering";
import { publicTokenQuery } from "./live";
import {
  batchInput,
  bulkInput,
  FAILURE_GROUPS_LIMIT_DEFAULT,
  FAILURE_GROUPS_LIMIT_MAX,
  failureGroupsQuery,
  idempotencyKey,
  jobInput,
  listQuery,
  replayInput,
} from "./job-fields";

const JOB_ID = "0193a5c4-7b2e-7c1d-9f3a-2b8e4d6f1a01";
const REPLAY_ID = "0193a5d0-11c2-7e4f-8a6b-3c9d2e7f4b02";
const AT = "2026-11-21T09:30:00.000Z";
/** A list item as GET /jobs answers it: the documents' examples of other job answers start from it. */
export const listItem = {
  id: JOB_ID,
  type: "send_email",
  status: "done",
  retries: 0,
  max_retries: 3,
  created_at: AT,
  updated_at: "2026-11-21T09:30:01.250Z",
  run_at: null,
  priority: 5,
  replay_of: null,
  schedule_id: null,
  cancel_requested_at: null,
  concurrency_key: null,
  concurrency_limit: null,
  rate_limit: null,
  timeout_ms: null,
  dedupe_key: null,
  debounce_key: null,
  waiting_for: null,
  started_at: "2026-11-21T09:30:00.410Z",
  finished_at: "2026-11-21T09:30:01.250Z",
  progress: null,
};

/** The fields GET /jobs/{id} adds to a list item's, before payload, result and error. */
export const detailExtra = { ...listItem, depends_on: [], dependents: [], on_dependency_failure: "cancel", replayed_as: [], steps: [] };

/** The bulk body as two alternatives (joi's xor converts to if/then/else, which client generators read poorly). */
function bulkDocument(): JsonSchema {
  const { action, filter, ids } = jsonSchema(bulkInput).properties as Record<string, JsonSchema>;
  const variant = (name: "filter" | "ids", schema: JsonSchema) => ({
    type: "object",
    properties: { action, [name]: schema },
    required: ["action", name],
    additionalProperties: false,
  });
  return { oneOf: [variant("filter", filter!), variant("ids", ids!)] };
}

const rateLimitHeaders = {
  "RateLimit-Limit": { description: "Requests per second allowed for your organization (API_RATE_LIMIT_PER_SEC).", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Requests left in the current second.", schema: { type: "integer" } },
};

export const jobEndpoints = [
  endpoint({
    method: "post",
    path: "/jobs",
    operationId: "createJob",
    tag: "Jobs",
    summary: "Enqueue a job",
    description:
      "Validates the payload against its type's schema and stores the job in Postgres, which is all a 202 promises: the " +
      "workers' dispatcher hands it to a worker once it is due, so it answers 202 even while Redis is away. With " +
      "`Idempotency-Key`, a repeat of the same request within 24 h returns the " +
      "first job with 200 and creates nothing; the same key with another body is 409 `idempotency_conflict`. With `depends_on` it " +
      "waits for those jobs (waiting_for: dependencies) and is due once all are done; the answer's status is cancelled when one " +
      "of them had already failed or been cancelled (unless on_dependency_failure is run).",
    access: "job",
    headers: [
      {
        name: "Idempotency-Key",
        schema: idempotencyKey,
        document: {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description: "Any visible ASCII string, unique per intended job; kept 24 hours per organization.",
          schema: { type: "string", minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, pattern: "^[\\x21-\\x7e]+$" },
        },
      },
    ],
    body: { schema: jobInput, document: ref("NewJob"), examples: jobExamples() },
    responses: {
      202: { description: "Created and queued.", json: { component: "JobAccepted", example: { id: JOB_ID, status: "pending" } }, headers: rateLimitHeaders },
      200: {
        description: "An idempotent repeat: the job the first request created, as it is now.",
        json: { component: "JobAccepted", example: { id: JOB_ID, status: "processing" } },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 409, 413, 415, 429],
    async handle({ caller, body, headers }, deps) {
      const { created, job } = await createJob({ caller, input: body, idempotencyKey: headers["idempotency-key"] }, deps);
      return { status: created ? 202 : 200, json: job };
    },
  }),
  endpoint({
    method: "post",
    path: "/jobs/batch",
    operationId: "createJobs",
    tag: "Jobs",
    summary: "Enqueue up to 1,000 jobs at once",
    description:
      `All or nothing: if any job is invalid, none is stored and the details name each bad path (jobs.3.payload.to). At most ${BATCH_LIMIT} jobs; no Idempotency-Key. ` +
      "A whole graph of dependencies (SPEC §15) is one batch: an item may carry a `ref` (unique in the batch) and `depends_on` " +
      "mixing job ids and refs of earlier or later items. A cycle, a job depending on itself, an unknown ref or a job id that is " +
      "not your organization's is a 400 naming the items. The answer repeats each item's ref beside its id.",
    access: "job",
    body: {
      schema: batchInput,
      document: withProperty(jsonSchema(batchInput), "jobs.[]", ref("NewJob")),
      examples: {
        two: {
          summary: "An e-mail and a webhook",
          value: {
            jobs: [
              { type: "send_email", payload: payloadExamples.send_email },
              { type: "webhook", payload: payloadExamples.webhook, max_retries: 5 },
            ],
          },
        },
        invoiceThenEmail: {
          summary: "An invoice rendered, then e-mailed with the PDF attached (a graph: refs and depends_on)",
          value: {
            jobs: [
              { ref: "invoice", type: "generate_pdf", payload: payloadExamples.generate_pdf },
              {
                ref: "email",
                type: "send_email",
                depends_on: ["invoice"],
                payload: { ...payloadExamples.send_email, attachments: [{ filename: "invoice.pdf", job: "invoice" }] },
              },
            ],
          },
        },
      },
    },
    responses: {
      202: {
        description: "Every job created, in request order.",
        json: { component: "JobAccepted", array: true, example: [{ id: JOB_ID, status: "pending", ref: "invoice" }] },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 413, 415, 429],
    async handle({ caller, body, req }, deps) {
      if (req.get("idempotency-key") !== undefined) {
        throw validationFailed([{ path: "headers.idempotency-key", message: "is supported on POST /jobs only" }]);
      }
      return { status: 202, json: await createJobs({ caller, inputs: body.jobs }, deps) };
    },
  }),
  endpoint({
    method: "get",
    path: "/jobs",
    operationId: "listJobs",
    tag: "Jobs",
    summary: "List the organization's jobs",
    description:
      "Newest first, without payload, result or error. Without `limit`, every matching job is returned in one streamed array. " +
      "With `limit`, one page and, while more remain, a `Link` header to the next one, which keeps the filters. Filters are " +
      "optional and combine (all must hold); `status=failed` is the dead-letter view. An unknown parameter is a 400.",
    access: "job",
    query: listQuery,
    queryDescriptions: {
      status: `Only jobs in this status, or in any of several comma-separated (\`failed,cancelled\`): ${JOB_STATUSES.join(", ")}.`,
      type: "Only jobs of this type.",
      created_after: "Only jobs created at or after this time: an ISO 8601 date (midnight UTC) or date-time with a zone.",
      created_before: "Only jobs created before this time: an ISO 8601 date (midnight UTC) or date-time with a zone.",
      finished_after:
        "Only jobs that finished (done, failed or cancelled) at or after this time: an ISO 8601 date (midnight UTC) or date-time with a zone. The overview's bars count jobs by it.",
      finished_before: "Only jobs that finished before this time: an ISO 8601 date (midnight UTC) or date-time with a zone.",
      schedule_id: "Only jobs made by this schedule.",
      failure_group:
        "Only jobs whose last error is of this failure group (GET /jobs/failures): its failed jobs, and those waiting to retry after such an error.",
      q: `A job id or its short id (its last 8 characters, as the console shows it), a string or number value found anywhere in the payload (numbers as JSON writes them: \`42\`, \`19.9\`), or \`field:value\`: that value under a key named \`field\` or at that dotted path (\`customer:Globex\`); each matched exactly (case too), at most ${SEARCH_VALUE_MAX_LENGTH} characters. A value ending in \`*\` after at least 3 characters is also a prefix: \`INV-20*\` finds every value starting with \`INV-20\`, \`customer:Glo*\` those under \`customer\` (a shorter one, \`IN*\`, is only the literal value). Each item then says what matched in \`matched\`.`,
      limit: "Page size; without it the whole list is streamed.",
      include: "`error`: each item also carries `error`, the job's last error message (its first 300 characters; null when none).",
      cursor: "Opaque; taken from the previous page's Link header, with the same filters (another filter is a 400).",
    },
    responses: {
      200: {
        description: "The jobs.",
        json: { component: "JobListItem", array: true, example: [listItem] },
        headers: { Link: { description: 'With `limit`, while more remain: `<…/jobs?limit=…&cursor=…>; rel="next"`.', schema: { type: "string" } } },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 429],
    async handle({ caller, query }, deps) {
      const list = await listJobs({ caller, query }, deps);
      if (list.kind === "stream") return { jsonArray: list.items, release: list.release };
      return { jsonArray: list.items, headers: list.next ? { Link: `<${deps.config.PUBLIC_URL}/jobs?${list.next}>; rel="next"` } : undefined };
    },
  }),
  // Before /jobs/{id}, which would take "failures" for an id.
  endpoint({
    method: "get",
    path: "/jobs/failures",
    operationId: "listFailureGroups",
    tag: "Jobs",
    summary: "Failed jobs grouped by error",
    description:
      "The failed jobs matching the filters, grouped by type and error message normalised — numbers, ids, UUIDs, quoted values " +
      "and e-mail addresses replaced by placeholders — so one kind of failure is one group, with its count, first and last " +
      "failure and a sample job, most recently seen first; then the groups none of whose jobs has failed for good yet (`count` 0), " +
      "whose jobs wait to retry after such an error (`retrying`). A group's `failure_group` is a filter of GET /jobs (its jobs) and of " +
      'POST /jobs/bulk: `{"action": "replay", "filter": {"failure_group": "…"}}` replays the group\'s failed jobs, and ' +
      '`{"action": "cancel", …}` cancels those of its jobs still waiting to retry after that error.',
    access: "job",
    query: failureGroupsQuery,
    queryDescriptions: {
      type: "Only failures of this type.",
      created_after: "Only jobs created at or after this time (ISO 8601 date, or date-time with a zone).",
      created_before: "Only jobs created before this time (ISO 8601 date, or date-time with a zone).",
      schedule_id: "Only jobs made by this schedule.",
      limit: `Groups at most, 1 to ${FAILURE_GROUPS_LIMIT_MAX} (default ${FAILURE_GROUPS_LIMIT_DEFAULT}); \`has_more\` says more remain.`,
    },
    responses: {
      200: {
        description: "The groups.",
        json: {
          component: "FailureGroups",
          example: {
            groups: [
              {
                failure_group: "3f9a0c1d77ab52e0",
                type: "webhook",
                message: "The receiver answered HTTP <n> (not retried)",
                count: 118,
                retrying: 3,
                first_seen_at: "2026-11-20T22:04:11.502Z",
                last_seen_at: AT,
                sample_job_id: JOB_ID,
                sample_error: "The receiver answered HTTP 410 (not retried)",
              },
            ],
            has_more: false,
          },
        },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 429],
    async handle({ caller, query }, deps) {
      return { json: await listFailureGroups({ caller, query }, deps) };
    },
  }),
  endpoint({
    method: "get",
    path: "/jobs/:id",
    operationId: "getJob",
    tag: "Jobs",
    summary: "Get a job",
    description: "Readable with the job's public token (SPEC §21) as well as the job credentials.",
    access: "job_read",
    params: { id: idParam("job") },
    query: Joi.object<{ token?: string }>({ token: publicTokenQuery }),
    responses: {
      200: {
        description: "The job, with its payload, result and last error.",
        json: { component: "Job", example: { ...detailExtra, payload: payloadExamples.send_email, result: { message_id: "re_123" }, error: null } },
      },
    },
    errors: [...AUTHENTICATED_ERRORS, 404, 429],
    async handle({ caller, params }, deps) {
      assertReadable(caller, params.id);
      return { json: await getJob({ caller, id: params.id }, deps) };
    },
  }),
  endpoint({
    method: "get",
    path: "/jobs/:id/graph",
    operationId: "getJobGraph",
    tag: "Jobs",
    summary: "Get the dependency graph a job is in",
    description:
      `The whole connected graph of dependencies (SPEC §15) the job belongs to, upstream and downstream: its jobs as list items ` +
      `(the job first, then the nearest, at most ${GRAPH_NODES_LIMIT}) and its edges, each from a dependency to the job waiting ` +
      "for it. A job without dependencies or dependents is a graph of one node.",
    access: "job",
    params: { id: idParam("job") },
    responses: {
      200: {
        description: "The graph.",
        json: {
          component: "JobGraph",
          example: {
            nodes: [
              { ...listItem, id: REPLAY_ID, status: "pending", waiting_for: "dependencies" },
              { ...listItem, type: "generate_pdf" },
            ],
            edges: [{ from: JOB_ID, to: REPLAY_ID }],
            truncated: false,
          },
        },
      },
    },
    errors: [...AUTHENTICATED_ERRORS, 404, 429],
    async handle({ caller, params }, deps) {
      return { json: await getJobGraph({ caller, id: params.id }, deps) };
    },
  }),
  endpoint({
    method: "get",
    path: "/jobs/:id/logs",
    operationId: "getJobLogs",
    tag: "Jobs",
    summary: "Read a job's log lines",
    description: "Every attempt's lines, in the order they were written.",
    access: "job",
    params: { id: idParam("job") },
    responses: {
      200: {
        description: "The log lines.",
        json: { component: "JobLogEntry", array: true, example: [{ attempt: 1, message: "Attempt 1 of 4 started.", level: "info", timestamp: AT }] },
      },
    },
    errors: [...AUTHENTICATED_ERRORS, 404, 429],
    async handle({ caller, params }, deps) {
      return { json: await getJobLogs({ caller, id: params.id }, deps) };
    },
  }),
  endpoint({
    method: "get",
    path: "/jobs/:id/attempts",
    operationId: "getJobAttempts",
    tag: "Jobs",
    summary: "Read a job's attempts and their timing",
    description:
      "Each attempt, oldest first: when it became due, started and finished, how long it waited and ran, and how it ended. " +
      "A job cancelled before it ran has none. Read from the same record as the log's lifecycle lines.",
    access: "job",
    params: { id: idParam("job") },
    responses: {
      200: {
        description: "The attempts.",
        json: {
          component: "JobAttempt",
          array: true,
          example: [
            {
              attempt: 1,
              outcome: "retried",
              queued_at: "2026-11-20T10:00:00.000Z",
              started_at: "2026-11-20T10:00:00.120Z",
              finished_at: "2026-11-20T10:00:01.870Z",
              wait_ms: 120,
              duration_ms: 1750,
              error: "SMTP 421: try again later",
            },
            {
              attempt: 2,
              outcome: "succeeded",
              queued_at: "2026-11-20T10:00:31.870Z",
              started_at: "2026-11-20T10:00:31.905Z",
              finished_at: "2026-11-20T10:00:32.400Z",
              wait_ms: 35,
              duration_ms: 495,
              error: null,
            },
          ],
        },
      },
    },
    errors: [...AUTHENTICATED_ERRORS, 404, 429],
    async handle({ caller, params }, deps) {
      return { json: await getJobAttempts({ caller, id: params.id }, deps) };
    },
  }),
  endpoint({
    method: "get",
    path: "/jobs/:id/artifact",
    operationId: "getJobArtifact",
    tag: "Jobs",
    summary: "Download the file a job produced",
    description: "The PDF of a generate_pdf job or the JPEG of a compress_image job, with its Content-Type; 404 while there is none.",
    access: "job",
    params: { id: idParam("job") },
    responses: {
      200: {
        description: "The file, as an attachment.",
        media: { types: ["application/pdf", "image/jpeg"], schema: { type: "string", format: "binary" } },
        headers: { "Content-Disposition": { description: 'attachment; filename="…"', schema: { type: "string" } } },
      },
    },
    errors: [...AUTHENTICATED_ERRORS, 404, 429],
    async handle({ caller, params }, deps) {
      return { file: await getJobArtifact({ caller, id: params.id }, deps) };
    },
  }),
  endpoint({
    method: "post",
    path: "/jobs/:id/cancel",
    operationId: "cancelJob",
    tag: "Jobs",
    summary: "Cancel a job",
    description:
      "A pending job (waiting to start, delayed, or waiting for a retry) is cancelled at once and never runs. A processing job " +
      "gets `cancel_requested_at`; its attempt's signal is aborted within 2 seconds on whichever worker runs it, and it ends " +
      "`cancelled` — or `done`/`failed` if its handler finished first. The job's logs record who cancelled. A job that is " +
      "already done, failed or cancelled is 409 `job_finished`.",
    access: "job",
    params: { id: idParam("job") },
    responses: {
      200: {
        description: "The job as it is now: cancelled, or processing with its cancellation requested.",
        json: { component: "Job", example: { ...detailExtra, status: "cancelled", payload: payloadExamples.send_email, result: null, error: null } },
      },
    },
    errors: [...AUTHENTICATED_ERRORS, 404, 409, 429],
    async handle({ caller, params, req }, deps) {
      const job = await cancelJob({ caller, id: params.id }, deps);
      req.log.info("job cancel requested", { jobId: job.id, status: job.status });
      return { json: job };
    },
  }),
  endpoint({
    method: "post",
    path: "/jobs/:id/replay",
    operationId: "replayJob",
    tag: "Jobs",
    summary: "Replay a finished job",
    description:
      "Creates a new job with the same type, payload, `max_retries` and `priority`, whose `replay_of` names the original; it " +
      "runs as soon as a worker is free. The original is untouched but for its `replayed_as`, which lists its replays. Any done, " +
      "failed or cancelled job can be replayed, as often as you like; a pending or processing job is 409 `job_not_finished`. " +
      "The body is optional: `payload` replaces the original's payload (to fix what made it fail), validated as POST /jobs " +
      "validates the type's payload (400 `validation_failed` naming each bad `payload.…` path).",
    access: "job",
    params: { id: idParam("job") },
    body: {
      schema: replayInput,
      optional: true,
      examples: {
        same: { summary: "The same payload", value: {} },
        edited: { summary: "A corrected payload", value: { payload: payloadExamples.send_email } },
      },
    },
    responses: {
      202: { description: "The replay, created and waiting to run.", json: { component: "JobAccepted", example: { id: REPLAY_ID, status: "pending" } } },
    },
    errors: [...AUTHENTICATED_ERRORS, 404, 409, 429],
    async handle({ caller, params, body, req }, deps) {
      const replay = await replayJob({ caller, id: params.id, payload: body.payload }, deps);
      req.log.info("job replayed", { jobId: params.id, replayId: replay.id });
      return { status: 202, json: replay };
    },
  }),
  endpoint({
    method: "post",
    path: "/jobs/bulk",
    operationId: "bulkJobs",
    tag: "Jobs",
    summary: "Cancel or replay many jobs",
    description:
      `\`action\` is \`cancel\` or \`replay\`; the jobs are named by \`ids\` (up to ${BULK_IDS_LIMIT}) or chosen by \`filter\` ` +
      "(the GET /jobs filters, same names and values; `{}` is every job), never both. A filter takes the matching jobs the " +
      "action still applies to — cancel: pending, or processing without a cancellation request; replay: done, failed or " +
      `cancelled and not replayed yet — oldest first, at most ${BULK_LIMIT.toLocaleString("en-US")} per call; \`has_more\` says ` +
      "to call again with the same body for the next ones. Named ids are each treated like POST /jobs/{id}/cancel or /replay " +
      "(a job in the wrong state is skipped, an id that is not your organization's is not matched).",
    access: "job",
    body: {
      schema: bulkInput,
      document: bulkDocument(),
      examples: {
        replayFailed: {
          summary: "Replay yesterday's failed webhooks",
          value: { action: "replay", filter: { status: "failed", type: "webhook", created_after: "2026-11-20" } },
        },
        cancelIds: { summary: "Cancel two jobs", value: { action: "cancel", ids: [JOB_ID, REPLAY_ID] } },
      },
    },
    responses: {
      200: {
        description: "What this call did.",
        json: { component: "BulkResult", example: { action: "replay", matched: 120, affected: 120, has_more: false } },
      },
    },
    errors: [...BODY_ERRORS, ...AUTHENTICATED_ERRORS, 429],
    async handle({ caller, body, req }, deps) {
      const result = await bulkJobs({ caller, input: body }, deps);
      req.log.info("bulk job action", { ...result, by: body.ids ? "ids" : "filter" });
      return { json: result };
    },
  }),
];
