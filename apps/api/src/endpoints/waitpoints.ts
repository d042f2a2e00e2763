// Waitpoints (docs/reference/lifecycle.md#waitpoints-and-durable-steps). Creating, reading, completing and cancelling take the job credentials (a user token, an API
// key or a console session; any role, so members complete from the console); the capability URL takes none.
import Joi from "joi";
import { WAITPOINT_STATUSES, WAITPOINT_TAG_MAX_LENGTH } from "@conveyor/contracts";
import { AUTHENTICATED_ERRORS, endpoint, idParam } from "../declarations/endpoint";
import {
  cancelWaitpoint,
  completeWaitpoint,
  completeWaitpointByToken,
  createWaitpoint,
  getWaitpoint,
  listWaitpoints,
  type CompletionInput,
  type WaitpointInput,
  type WaitpointListQuery,
} from "../services/waitpoints";
import { idempotencyKeyHeader } from "../declarations/job-fields";
import { waitpointFields } from "../declarations/waitpoint-fields";

const WAITPOINT_ID = "0193a5c4-7777-7c1d-9f3a-2b8e4d6f1a07";
const AT = "2026-11-21T09:30:00.000Z";
/** A waiting waitpoint as the API answers it (POST /jobs/batch's example shows one too). */
export const waitpointExample = {
  id: WAITPOINT_ID,
  status: "waiting",
  description: "Approve invoice 2026-118",
  tags: ["invoices"],
  data: null,
  job_id: null,
  expires_at: "2026-11-22T09:30:00.000Z",
  finished_at: null,
  created_at: AT,
};
const completed = { ...waitpointExample, status: "completed", data: { approved: true, by: "amina@example.com" }, finished_at: "2026-11-21T10:02:11.000Z" };

const createBody = Joi.object<WaitpointInput>(waitpointFields);
const completionBody = Joi.object<CompletionInput>({
  data: Joi.any().description("Any JSON value, at most 64 KiB as JSON: the `result` the waiting jobs see for it, and what ctx.waitFor returns."),
});
const listQuery = Joi.object<WaitpointListQuery>({
  status: Joi.string().valid(...WAITPOINT_STATUSES),
  tag: Joi.string().max(WAITPOINT_TAG_MAX_LENGTH),
  limit: Joi.number().integer().min(1).max(1000),
  cursor: Joi.string().max(64),
});
/** `data` is any JSON value: documented without a type (joi's any() would come out as an object of undefined). */
const completionDocument = {
  type: "object",
  properties: { data: { description: "Any JSON value, at most 64 KiB as JSON: the `result` the waiting jobs see for it, and what ctx.waitFor returns." } },
  additionalProperties: false,
};
const completionExamples = { approved: { summary: "An approval", value: { data: { approved: true, by: "amina@example.com" } } } };

export const waitpointEndpoints = [
  endpoint({
    method: "post",
    path: "/waitpoints",
    operationId: "createWaitpoint",
    tag: "Waitpoints",
    summary: "Create a waitpoint",
    description:
      "A point jobs can wait on (`depends_on` takes its id; a plugin's `ctx.waitFor` too) until it is completed. The answer's " +
      "`complete_url` completes it without an API key — give it to the third party that decides; it is shown only here. With " +
      "`Idempotency-Key`, a repeat within 24 h answers 200 with the first waitpoint (without `complete_url`) and creates nothing; " +
      "another body with the same key is 409 `idempotency_conflict`.",
    access: "job",
    headers: [idempotencyKeyHeader("Unique per intended waitpoint; kept 24 hours.")],
    body: {
      schema: createBody,
      examples: {
        approval: {
          summary: "A person approves within a day",
          value: { timeout_seconds: 86400, description: waitpointExample.description, tags: waitpointExample.tags },
        },
      },
    },
    responses: {
      201: {
        description: "Created; `complete_url` holds the one-time token.",
        json: {
          component: "CreatedWaitpoint",
          example: { ...waitpointExample, complete_url: "https://conveyor.example.com/waitpoints/complete/3q2-7wFvXw1yGb0qS4cQe8mKp2Lr6tHn9aZdUj5oBfE" },
        },
      },
      200: {
        description: "An idempotent repeat: the first waitpoint, without complete_url.",
        json: { component: "CreatedWaitpoint", example: { ...waitpointExample, complete_url: null } },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 409, 413, 415, 429],
    async handle({ caller, body, headers, req }, deps) {
      const { created, waitpoint } = await createWaitpoint({ caller, input: body, idempotencyKey: headers["idempotency-key"] }, deps);
      if (created) req.log.info("waitpoint created", { waitpointId: waitpoint.id });
      return { status: created ? 201 : 200, json: waitpoint };
    },
  }),
  endpoint({
    method: "get",
    path: "/waitpoints",
    operationId: "listWaitpoints",
    tag: "Waitpoints",
    summary: "List the organization's waitpoints",
    description: "Newest first, 100 a page unless `limit` says otherwise; while more remain, a `Link` header names the next page.",
    access: "job",
    query: listQuery,
    queryDescriptions: {
      status: "Only waitpoints with this status.",
      tag: "Only waitpoints with this tag.",
      limit: "Page size (default 100).",
      cursor: "Opaque; taken from the previous page's Link header.",
    },
    responses: {
      200: {
        description: "The waitpoints.",
        json: { component: "Waitpoint", array: true, example: [waitpointExample] },
        headers: { Link: { description: 'While more remain: `<…/waitpoints?limit=…&cursor=…>; rel="next"`.', schema: { type: "string" } } },
      },
    },
    errors: [400, ...AUTHENTICATED_ERRORS, 429],
    async handle({ caller, query }, deps) {
      const list = await listWaitpoints({ caller, query }, deps);
      return { json: list.items, headers: list.next ? { Link: `<${deps.config.PUBLIC_URL}/waitpoints?${list.next}>; rel="next"` } : undefined };
    },
  }),
  endpoint({
    method: "get",
    path: "/waitpoints/:id",
    operationId: "getWaitpoint",
    tag: "Waitpoints",
    summary: "Get a waitpoint",
    access: "job",
    params: { id: idParam("waitpoint") },
    responses: { 200: { description: "The waitpoint.", json: { component: "Waitpoint", example: completed } } },
    errors: [...AUTHENTICATED_ERRORS, 404, 429],
    handle: async ({ caller, params }, deps) => ({ json: await getWaitpoint({ caller, id: params.id }, deps) }),
  }),
  endpoint({
    method: "post",
    path: "/waitpoints/:id/complete",
    operationId: "completeWaitpoint",
    tag: "Waitpoints",
    summary: "Complete a waitpoint",
    description:
      "The first completion wins: the jobs waiting on it go on, with `data` as its result. A repeat with the same `data` answers 200 " +
      "with the same waitpoint; other data is 409 `conflict`, and so is completing one that expired or was cancelled.",
    access: "job",
    params: { id: idParam("waitpoint") },
    body: { schema: completionBody, document: completionDocument, examples: completionExamples, optional: true },
    responses: { 200: { description: "Completed (or a repeat of the completion).", json: { component: "Waitpoint", example: completed } } },
    errors: [400, ...AUTHENTICATED_ERRORS, 404, 409, 413, 415, 429],
    async handle({ caller, params, body, req }, deps) {
      const { completed: now, waitpoint } = await completeWaitpoint({ caller, id: params.id, input: body }, deps);
      if (now) req.log.info("waitpoint completed", { waitpointId: waitpoint.id });
      return { json: waitpoint };
    },
  }),
  endpoint({
    method: "post",
    path: "/waitpoints/:id/cancel",
    operationId: "cancelWaitpoint",
    tag: "Waitpoints",
    summary: "Cancel a waitpoint",
    description:
      "Jobs waiting on it count it as a failed dependency (`on_dependency_failure` applies). A waitpoint that is no longer waiting is 409 `conflict`.",
    access: "job",
    params: { id: idParam("waitpoint") },
    responses: { 200: { description: "Cancelled.", json: { component: "Waitpoint", example: { ...waitpointExample, status: "cancelled", finished_at: AT } } } },
    errors: [...AUTHENTICATED_ERRORS, 404, 409, 429],
    handle: async ({ caller, params }, deps) => ({ json: await cancelWaitpoint({ caller, id: params.id }, deps) }),
  }),
  endpoint({
    method: "post",
    path: "/waitpoints/complete/:token",
    operationId: "completeWaitpointByToken",
    tag: "Waitpoints",
    summary: "Complete a waitpoint through its capability URL",
    description:
      "For a third party without an API key: the token in the path (from `complete_url`) is the authority. The first completion " +
      "wins: a repeat with the same body answers 200 with the same waitpoint, another body (or an expired or cancelled " +
      "waitpoint) 409 `conflict`; a wrong token is 404.",
    access: "public",
    params: { token: { description: "The token from complete_url.", schema: { type: "string" } } },
    body: { schema: completionBody, document: completionDocument, examples: completionExamples, optional: true },
    responses: { 200: { description: "Completed (or a repeat of the completion).", json: { component: "Waitpoint", example: completed } } },
    errors: [400, 404, 409, 413, 415, 500, 503],
    async handle({ params, body, req }, deps) {
      const { completed: now, waitpoint } = await completeWaitpointByToken({ token: params.token, input: body }, deps);
      if (now) req.log.info("waitpoint completed through its URL", { waitpointId: waitpoint.id });
      return { json: waitpoint };
    },
  }),
];
