// Steering jobs (docs/reference/lifecycle.md#steering): cancel, replay, and either for many at once. A user token or an API key, any role, always
// scoped to the caller's organization.
import { BULK_IDS_LIMIT, BULK_LIMIT } from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, BODY_ERRORS, endpoint, idParam } from "../declarations/endpoint";
import { payloadExamples } from "../openapi/job-types";
import { jsonSchema, type JsonSchema } from "../declarations/json-schema";
import { bulkJobs, cancelJob, replayJob } from "../services/steering";
import { detailExtra, JOB_ID, REPLAY_ID } from "./job-examples";
import { bulkInput, replayInput } from "../declarations/job-fields";

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

export const jobSteeringEndpoints = [
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
