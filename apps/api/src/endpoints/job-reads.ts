// Reading jobs (docs/reference/lifecycle.md#lifecycle, docs/reference/lifecycle.md#steering, docs/reference/lifecycle.md#dependencies): the list, failures grouped by error, one job, its graph, logs, attempts and
// artifact. A user token or an API key, any role, always scoped to the caller's organization.
import Joi from "joi";
import { GRAPH_NODES_LIMIT, JOB_STATUSES, SEARCH_VALUE_MAX_LENGTH } from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, endpoint, idParam } from "../declarations/endpoint";
import { payloadExamples } from "../openapi/job-types";
import { getJob, getJobArtifact, getJobAttempts, getJobGraph, getJobLogs, listFailureGroups, listJobs } from "../services/job-reads";
import { assertReadable } from "../services/live";
import { AT, detailExtra, JOB_ID, listItem, REPLAY_ID } from "./job-examples";
import { FAILURE_GROUPS_LIMIT_DEFAULT, FAILURE_GROUPS_LIMIT_MAX, failureGroupsQuery, listQuery } from "../declarations/job-fields";
import { publicTokenQuery } from "./live";

export const jobReadEndpoints = [
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
    description: "Readable with the job's public token (docs/reference/events.md#progress-and-live-results) as well as the job credentials.",
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
      `The whole connected graph of dependencies (docs/reference/lifecycle.md#dependencies) the job belongs to, upstream and downstream: its jobs as list items ` +
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
              resumed: false,
              suspension: null,
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
              resumed: false,
              suspension: null,
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
];
